"""TopK and CumSum (lowering/select.py) against onnxruntime on the simulator (fp32)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from onnx2ttnn import convert
from onnx2ttnn.verify import verify
from tests.lowering._nodes import model

TOPK_OUT = dict(outputs=("v", "i"), out_types=[TensorProto.FLOAT, TensorProto.INT64])
CASES = {
    "topk-largest-axis1": model("TopK", {"x": [3, 6]}, [np.array([2])], {"axis": 1}, opset=11, **TOPK_OUT),
    "topk-smallest-axis0": model("TopK", {"x": [5, 4]}, [np.array([3])], {"axis": 0, "largest": 0}, opset=11,
                                 **TOPK_OUT),
    "topk-opset10-k-input": model("TopK", {"x": [3, 6]}, [np.array([4])], {"axis": 1}, opset=10, **TOPK_OUT),
    "topk-opset9-k-attribute": model("TopK", {"x": [5, 4]}, attrs={"axis": 0, "k": 2}, opset=9, **TOPK_OUT),
    "cumsum-axis1": model("CumSum", {"x": [3, 5]}, [np.array(1)], opset=14),
    "cumsum-exclusive": model("CumSum", {"x": [3, 5]}, [np.array(1)], {"exclusive": 1}, opset=14),
    "cumsum-reverse-exclusive": model("CumSum", {"x": [4, 3]}, [np.array(0)], {"exclusive": 1, "reverse": 1},
                                      opset=14),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_select_matches_onnxruntime(name):
    report = verify(CASES[name], dtype="fp32")
    assert report.passed, report.text()


def test_topk_ties_come_lowest_index_first():
    x = np.array([[2.0, 1.0, 2.0, 2.0]], np.float32)
    m = model("TopK", {"x": [1, 4]}, [np.array([2])], {"axis": 1}, opset=11, **TOPK_OUT)
    report = verify(m, inputs={"x": x}, dtype="fp32")
    assert report.passed, report.text()


@pytest.mark.parametrize("dtype, raw", [("bf16", "uint16"), ("fp32", "uint32")])
def test_topk_indices_declared_as_real_ttnn_returns_them(dtype, raw):
    """Real ttnn.topk gives UINT16 indices for bf16 inputs, UINT32 for float32; they are typecast to UINT32."""
    from onnx2ttnn.convert import convert
    from onnx2ttnn.ir.graph import layout_of

    m = model("TopK", {"x": [2, 40]}, [np.array([3])], {"axis": 1}, opset=11, **TOPK_OUT)
    graph = convert(m, dtype=dtype).module.graph
    topk = next(n for n in graph.nodes if n.op == "topk")
    assert layout_of(topk.outputs[1]).ttnn_dtype == raw
    casts = [n for n in graph.nodes if n.op == "typecast"]
    assert len(casts) == (1 if raw == "uint16" else len(casts))  # a uint32 -> uint32 cast may be dropped
    for cast in casts:
        assert cast.inputs[0] is topk.outputs[1] and layout_of(cast.outputs[0]).ttnn_dtype == "uint32"
    report = verify(m, dtype=dtype)
    assert report.passed, report.text()


@pytest.mark.parametrize("exclusive", [0, 1])
def test_integer_cumsum_of_embedding_ids_runs_in_int32(exclusive):
    """RoBERTa's position ids: a cumsum of integer ids that also index an embedding (so they are UINT32 on
    the device): typecast to int32, summed exactly in int32 (a bfloat16 sum would round past 256)."""
    from onnx import helper, numpy_helper

    nodes = [helper.make_node("Gather", ["table", "ids"], ["e"]),
             helper.make_node("CumSum", ["ids", "axis"], ["c"], exclusive=exclusive)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 6])],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 6, 4]),
         helper.make_tensor_value_info("c", TensorProto.INT64, [1, 6])],
        [numpy_helper.from_array(np.arange(40, dtype=np.float32).reshape(10, 4), "table"),
         numpy_helper.from_array(np.array(1), "axis")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    body = convert(m, dtype="bf16").source.split("def forward", 1)[1]
    assert body.index("ttnn.typecast(") < body.index("ttnn.cumsum(") and "dtype=ttnn.int32" in body
    ids = np.array([[1, 3, 0, 2, 9, 1]], np.int64)
    for dtype in ("fp32", "bf16"):
        report = verify(m, inputs={"ids": ids}, dtype=dtype)
        assert report.passed and report.outputs[1].max_abs == 0, report.text()
