"""Dropout (lowering/dropout.py): inference identity with an all-true mask; training mode refused."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.verify import verify
from tests.lowering._nodes import model, ttnn_ops


def test_dropout_output_and_mask_at_inference():
    m = model("Dropout", {"x": [2, 3, 4]}, [np.array(0.3, np.float32)], outputs=("y", "mask"),
              out_types=[TensorProto.FLOAT, TensorProto.BOOL], opset=13)
    report = verify(m, dtype="fp32")
    assert report.passed, report.text()
    assert [op for op in ttnn_ops(m) if op not in ("from_torch", "to_torch", "deallocate")] == []


def test_dropout_opset7_mask_is_all_true():
    """The ONNX reference gives an all-true mask (onnxruntime's opset < 12 kernels return zeros: not followed)."""
    from onnx2ttnn.convert import convert

    m = model("Dropout", {"x": [2, 5]}, attrs={"ratio": 0.2}, outputs=("y", "mask"), opset=7,
              out_shape=[2, 5])  # shape inference leaves the opset-7 mask shapeless
    graph = convert(m, dtype="fp32").module.graph
    params = [n.inputs[0].values for n in graph.nodes if n.attrs.get("_param")]
    assert len(params) == 1 and params[0].shape == (2, 5) and np.all(params[0] == 1)
    assert [n.op for n in graph.nodes if not n.attrs.get("_param")].count("to_torch") == 2


def test_training_mode_with_zero_ratio_is_identity_and_otherwise_refused():
    zero = model("Dropout", {"x": [4]}, [np.array(0.0, np.float32), np.array(True)], opset=13)
    assert verify(zero, dtype="fp32").passed
    random = model("Dropout", {"x": [4]}, [np.array(0.5, np.float32), np.array(True)], opset=13)
    with pytest.raises(ConversionError, match="training mode"):
        ttnn_ops(random)


def test_dropout_before_opset_7_is_not_served():
    """Dropout-6 picks test mode with `is_test`, which defaults to training: no rule was checked against it."""
    from onnx2ttnn.errors import UnsupportedOpsError

    m = model("Dropout", {"x": [2, 5]}, attrs={"is_test": 1}, opset=6)
    with pytest.raises(UnsupportedOpsError, match=r"Dropout \(opset 6 schema 6\): 'Dropout_0' \(rules were checked "
                                                  r"against schema 7, 10, 12, 13, 22 only\)"):
        ttnn_ops(m)
