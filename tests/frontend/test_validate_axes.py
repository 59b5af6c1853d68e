"""frontend/validate_axes.py: axis attributes and the operands sized by them, refused with one error naming the
node where onnxruntime refuses them at run time (ReverseSequence's axes: tests/frontend/test_validate_operands.py)."""
from __future__ import annotations

import numpy as np
import pytest

from onnx2ttnn.frontend.importer import import_model
from tests.frontend._validate_models import parsed, rejected

REVERSE = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[1, 5] x) => (float[1, 5] y) {
        y = ReverseSequence<batch_axis = 1, time_axis = 0>(x, n)
    }
"""


def test_a_reverse_sequence_with_a_length_per_other_than_each_batch_entry_is_refused():
    """Fuzz seed 139 case 318: sequence_lens of 8 for a batch of 5 (axis 1) converted (onnxruntime: "sequence_lens
    shape must be {batch_size}. Got:{8}. batch_size=5")."""
    assert rejected(parsed(REVERSE, n=np.ones(8, np.int64))).endswith(
        "(ReverseSequence): sequence_lens has shape [8]; it must be [5], one length per batch entry (axis 1 of the "
        "input)")
    import_model(parsed(REVERSE, n=np.ones(5, np.int64)), {})


@pytest.mark.parametrize("axis,refused", [(1099511627776, True), (-1099511627776, True), (4, False), (-4, False)])
def test_a_flatten_axis_beyond_the_rank_is_refused(axis, refused):
    """Fuzz seed 139 case 1618: Flatten with axis 1099511627776 converted (onnxruntime: "X_shape.NumDimensions() >=
    axis was false"); the spec takes [-rank, rank].  (Strict inference refuses 5 itself; 2^40, 0 in its int32,
    passes it.)"""
    model = parsed(f"""
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[1, 16, 1, 1] x) => (float[?, ?] y) {{
        y = Flatten<axis = {axis}>(x)
    }}
    """)
    if refused:
        assert rejected(model).endswith(f"(Flatten): axis {axis} is out of range for an input of rank 4 (Flatten "
                                        "takes -4 to 4)")
    else:
        import_model(model, {})
