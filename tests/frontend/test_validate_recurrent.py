"""validate_recurrent: LSTM, GRU and RNN operands of another shape than the spec gives them are refused."""
from __future__ import annotations

import numpy as np
import pytest

from onnx2ttnn.frontend.importer import import_model
from tests.frontend._validate_models import parsed, rejected


def _recurrent(op: str, attrs: str, inputs: str, x: str = "float[4, 3, 2]", **initializers):
    return parsed(f"""
    <ir_version: 8, opset_import: ["" : 14]>
    g ({x} x) => (float y, float h) {{
        y, h = {op}<hidden_size = 5{attrs}>({inputs})
    }}
    """, **initializers)


def _ones(*shape):
    return np.ones(shape, np.float32)


GRU = {"w": _ones(1, 15, 2), "r": _ones(1, 15, 5)}


@pytest.mark.parametrize("op, attrs, inputs, consts, reason", [
    # seed 67 case 1806: W [5] (onnxruntime: "Input W must have shape {1,15,3}. Actual:{5}")
    ("GRU", "", "x, w, r", {"w": _ones(5), "r": GRU["r"]}, "W has shape [5]; it must be [1, 15, 2]"),
    # seed 67 case 1894: initial_h [1, 2, 3, 5] was an internal error (IRVerificationError after lower-to-ttnn)
    ("GRU", "", 'x, w, r, "", "", h0', {**GRU, "h0": _ones(1, 2, 3, 5)},
     "initial_h has shape [1, 2, 3, 5]; it must be [1, 3, 5]"),
    ("GRU", ', direction = "bidirectional"', "x, w, r", GRU, "W has shape [1, 15, 2]; it must be [2, 15, 2]"),
    ("GRU", "", "x, w, r, b", {**GRU, "b": _ones(1, 15)}, "B has shape [1, 15]; it must be [1, 30]"),
    ("RNN", "", "x, w, r", {"w": _ones(1, 5, 2), "r": _ones(1, 5, 4)}, "R has shape [1, 5, 4]; it must be [1, 5, 5]"),
    ("RNN", "", "x, w, r, b, s", {"w": _ones(1, 5, 2), "r": _ones(1, 5, 5), "b": _ones(1, 10),
                                  "s": np.array([4, 4], np.int32)},
     "sequence_lens has shape [2]; it must be [3]"),
    ("LSTM", "", 'x, w, r, "", "", "", c0', {"w": _ones(1, 20, 2), "r": _ones(1, 20, 5), "c0": _ones(1, 5, 3)},
     "initial_c has shape [1, 5, 3]; it must be [1, 3, 5]"),
    ("LSTM", "", 'x, w, r, "", "", "", "", p', {"w": _ones(1, 20, 2), "r": _ones(1, 20, 5), "p": _ones(1, 20)},
     "P has shape [1, 20]; it must be [1, 15]"),
])
def test_what_seed_67_found_onnxruntime_refusing_is_refused(op, attrs, inputs, consts, reason):
    """Found by the fuzzer (seed 67 cases 1806, 1894): strict inference reads only hidden_size and X for the
    outputs; onnxruntime checks every operand's shape when it runs the node."""
    assert rejected(_recurrent(op, attrs, inputs, **consts)).endswith(f"({op}): {reason} (hidden_size 5)")


@pytest.mark.parametrize("op, attrs, inputs, x, consts", [
    ("GRU", "", 'x, w, r, b, "", h0', "float[4, 3, 2]", {**GRU, "b": _ones(1, 30), "h0": _ones(1, 3, 5)}),
    ("GRU", ', direction = "bidirectional"', "x, w, r", "float[4, 3, 2]", {"w": _ones(2, 15, 2),
                                                                            "r": _ones(2, 15, 5)}),
    ("LSTM", "", 'x, w, r, b, s, h0, c0, p', "float[4, 3, 2]",
     {"w": _ones(1, 20, 2), "r": _ones(1, 20, 5), "b": _ones(1, 40), "s": np.array([4, 2, 3], np.int32),
      "h0": _ones(1, 3, 5), "c0": _ones(1, 3, 5), "p": _ones(1, 15)}),
    ("RNN", ", layout = 1", "x, w, r, \"\", \"\", h0", "float[3, 4, 2]", {"w": _ones(1, 5, 2), "r": _ones(1, 5, 5),
                                                                       "h0": _ones(3, 1, 5)}),
])
def test_their_valid_neighbours_pass_validation(op, attrs, inputs, x, consts):
    import_model(_recurrent(op, attrs, inputs, x, **consts), {})


def test_a_hidden_size_not_positive_and_sequence_lens_past_the_sequence_are_refused():
    """Fuzz seed 79 case 1950 (hidden_size -2147483648, in a host region onnxruntime then failed in) and seed 89
    cases 588 (hidden_size 0) and 480 (a sequence length past X's 3 steps: onnxruntime "All values must be >= 0
    and <= seq_length")."""
    rnn = {"w": _ones(1, 5, 2), "r": _ones(1, 5, 5), "b": _ones(1, 10)}
    zero = parsed("""
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[4, 3, 2] x) => (float y, float h) {
        y, h = RNN<hidden_size = 0>(x, w, r)
    }
    """, w=_ones(1, 0, 2), r=_ones(1, 0, 0))
    assert rejected(zero).endswith("(RNN): hidden_size 0 must be positive")
    lens = _recurrent("RNN", "", "x, w, r, b, s", **rnn, s=np.array([4, 5, 1], np.int32))
    assert rejected(lens).endswith("(RNN): sequence_lens holds 5, outside [0, 4]")

def test_a_w_with_twice_the_gate_rows_is_refused():
    """Found by the fuzzer (seed 61 case 1416: a GRU with hidden_size 1 and a W of 6 rows, [1, 6, 1], converted;
    onnxruntime "Input W must have shape {1,3,1}. Actual:{1,6,1}"): W's height is the gates times hidden_size."""
    consts = {"w": _ones(1, 30, 2), "r": GRU["r"]}
    assert rejected(_recurrent("GRU", "", "x, w, r", **consts)).endswith(
        "(GRU): W has shape [1, 30, 2]; it must be [1, 15, 2] (hidden_size 5)")


def test_a_recurrent_node_without_hidden_size_is_refused():
    """Fuzz seed 179 case 1108: a GRU whose hidden_size was dropped was an internal error (its Y_h had the
    symbolic last dim shape inference leaves without hidden_size, and a host region reading it took the dim for
    a number); onnxruntime: "hidden_size > 0 was false"."""
    model = parsed("""
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[4, 3, 2] x) => (float y, float h) {
        y, h = GRU(x, w, r)
    }
    """, **GRU)
    assert rejected(model).endswith("(GRU): hidden_size is not given: shape inference leaves the outputs' last dim "
                                    "unknown without it, and onnxruntime requires it")
