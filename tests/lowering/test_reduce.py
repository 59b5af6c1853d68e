"""Reductions, ArgMax/ArgMin (lowering/reduce.py) against onnxruntime on the simulator (fp32)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering import lookup
from onnx2ttnn.lowering.reduce import REDUCE
from onnx2ttnn.verify import verify
from tests.lowering._nodes import f32, model, ttnn_ops

X = {"x": [2, 3, 5]}
CASES = {
    "sum-axes-input-negative": model("ReduceSum", X, [np.array([-1, 0])], {"keepdims": 0}, opset=13),
    "sum-attr-opset11": model("ReduceSum", X, attrs={"axes": [1]}, opset=11),
    "mean-default-all": model("ReduceMean", X, opset=18),
    "max-keepdims": model("ReduceMax", X, [np.array([1])], opset=18),
    "min-attr": model("ReduceMin", X, attrs={"axes": [2], "keepdims": 0}, opset=13),
    "prod-two-axes": model("ReduceProd", X, [np.array([0, 2])], opset=18),
    "l1": model("ReduceL1", X, [np.array([1])], opset=18),
    "l2": model("ReduceL2", X, [np.array([2])], {"keepdims": 0}, opset=18),
    "sum-square": model("ReduceSumSquare", X, [np.array([0])], opset=18),
    "log-sum-exp": model("ReduceLogSumExp", X, [np.array([1])], opset=18),
    "argmax-last-index": model("ArgMax", X, attrs={"axis": 1, "select_last_index": 1}, opset=13,
                               out_types=[TensorProto.INT64]),
    "argmin-keepdims0": model("ArgMin", X, attrs={"axis": -1, "keepdims": 0}, opset=13,
                              out_types=[TensorProto.INT64]),
}


# every reduction at each schema version of its `axes` attribute form (REDUCE), opset 9 standing for version 1
ATTR_FORM = [(op, version) for op, (_, versions, _) in REDUCE.items() for version in versions]


@pytest.mark.parametrize("op, version", ATTR_FORM, ids=[f"{op}-{v}" for op, v in ATTR_FORM])
def test_axes_attribute_versions_match_onnxruntime(op, version):
    opset = 9 if version == 1 else version
    m = model(op, X, attrs={"axes": [-1, 0] if version >= 11 else [2, 0], "keepdims": 0}, opset=opset)
    assert lookup("", op, opset).versions == REDUCE[op][1]
    report = verify(m, dtype="fp32")
    assert report.passed, report.text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_reduction_matches_onnxruntime(name):
    report = verify(CASES[name], dtype="fp32")
    assert report.passed, report.text()


def test_argmax_ties_and_last_index():
    x = np.array([[[1, 3, 3, 0, 3]]], np.float32)
    for last in (0, 1):  # first maximum at 1, last at 4
        m = model("ArgMax", {"x": [1, 1, 5]}, attrs={"axis": 2, "select_last_index": last}, opset=13,
                  out_types=[TensorProto.INT64])
        report = verify(m, inputs={"x": x}, dtype="fp32")
        assert report.passed, report.text()


def test_empty_axes_noop_is_identity_without_ops():
    m = model("ReduceSum", X, [np.array([], np.int64)], {"noop_with_empty_axes": 1}, opset=13)
    assert "sum" not in ttnn_ops(m, dtype="fp32")
    assert verify(m, dtype="fp32").passed


def test_reduction_over_zero_sized_axis_is_a_constant():
    m = model("ReduceProd", {"x": [2, 0, 4]}, [np.array([1])], opset=18)
    assert "prod" not in ttnn_ops(m, dtype="fp32")


def test_prod_reduces_one_dim_per_call():
    ops = ttnn_ops(model("ReduceProd", X, [np.array([0, 2])], opset=18), dtype="fp32")
    assert ops.count("prod") == 2


def test_runtime_axes_are_refused_with_the_input_named():
    import onnx

    m = onnx.parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 13]>
        g (float[2, 3] x, int64[1] axes) => (float y) {
            y = ReduceSum(x, axes)
        }""")
    with pytest.raises(ConversionError, match="axes must be a constant.*'axes'"):
        ttnn_ops(m, fallback=False)  # (the host fallback takes runtime axes)


def test_axis_out_of_range_is_refused():
    with pytest.raises(ConversionError, match=r"a ReduceMax node \(unnamed\): axis must be in \[-rank, rank-1\]"):
        ttnn_ops(model("ReduceMax", X, [np.array([3])], opset=18))


def test_rank0_reduction_feeding_an_elementwise_op_comes_back_rank0():
    """A rank-0 ONNX value lives on the device as [1] (ttnn has no rank-0 tensors); an elementwise op of two
    such values is still [1] on the device, and the program returns the ONNX shape ()."""
    import onnx

    m = onnx.parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 13]>
        g (float[3, 2] x, float[3, 2] w) => (float y) {
            s = ReduceSum<keepdims = 0>(x)
            t = ReduceSum<keepdims = 0>(w)
            y = Div(s, t)
        }""")
    w = np.abs(f32(3, 2)) + 1.0
    report = verify(m, inputs={"x": f32(3, 2), "w": w}, dtype="fp32")
    assert report.passed, report.text()
    assert report.outputs[0].shape == ()
