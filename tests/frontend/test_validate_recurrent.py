"""validate_recurrent: LSTM, GRU and RNN weights whose shapes do not fit hidden_size, the input size and the
direction are refused before lowering, naming the node (onnxruntime refuses them when it runs the node); an
unknown direction too; valid neighbours still convert."""
from __future__ import annotations

import numpy as np
import pytest

from onnx2ttnn.frontend.importer import import_model
from tests.frontend._validate_models import parsed, rejected

RECURRENT = """
<ir_version: 8, opset_import: ["" : 14]>
g (float[8, 3, 2] x) => (float y) {{
    y = {op}<hidden_size = 1{direction}>(x, w, r, b{p})
}}
"""


def _model(op, gates, ways=1, w=None, r=None, b=None, p=None, direction=""):
    w = np.ones(w or (ways, gates, 2), np.float32)
    r = np.ones(r or (ways, gates, 1), np.float32)
    b = np.zeros(b or (ways, 2 * gates), np.float32)
    consts = {"w": w, "r": r, "b": b}
    if op == "LSTM":
        consts["p"] = np.zeros(p or (ways, 3), np.float32)
    text = RECURRENT.format(op=op, direction=direction, p=", \"\", \"\", \"\", p" if op == "LSTM" else "")
    return parsed(text, **consts)


@pytest.mark.parametrize("op, gates, changes, reason", [
    ("GRU", 3, {"w": (1, 6, 2)}, "W has shape [1, 6, 2]; it must be [1, 3, 2] (num_directions, 3 * hidden_size, "
                                 "input_size)"),  # seed 61 case 1416 (W [1, 6, 1] for hidden_size 1)
    ("GRU", 3, {"w": (1, 3, 5)}, "W has shape [1, 3, 5]; it must be [1, 3, 2]"),
    ("LSTM", 4, {"r": (1, 4, 2)}, "R has shape [1, 4, 2]; it must be [1, 4, 1] (num_directions, 4 * hidden_size, "
                                  "hidden_size)"),
    ("RNN", 1, {"b": (1, 4)}, "B has shape [1, 4]; it must be [1, 2] (num_directions, 2 * 1 * hidden_size)"),
    ("LSTM", 4, {"p": (1, 4)}, "P has shape [1, 4]; it must be [1, 3] (num_directions, 3 * hidden_size)"),
    ("GRU", 3, {"direction": ', direction = "bidirectional"'}, "W has shape [1, 3, 2]; it must be [2, 3, 2]"),
])
def test_recurrent_weights_of_another_shape_are_refused(op, gates, changes, reason):
    """Found by the fuzzer (seed 61 case 1416: a GRU with hidden_size 1 and a W of 6 rows converted); onnxruntime
    "Input W must have shape {1,3,1}. Actual:{1,6,1}" (its check shared by LSTM, GRU and RNN)."""
    assert f"({op}): {reason}" in rejected(_model(op, gates, **changes))


@pytest.mark.parametrize("op, gates", [("LSTM", 4), ("GRU", 3), ("RNN", 1)])
def test_recurrent_weights_of_the_right_shape_pass_validation(op, gates):
    import_model(_model(op, gates), {})
    import_model(_model(op, gates, ways=2, direction=', direction = "bidirectional"'), {})
