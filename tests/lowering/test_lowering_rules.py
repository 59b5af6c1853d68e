"""Each lowering rule of the converter issue, on a one-node model, against onnxruntime (simulator, fp32)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.verify import verify


def one_node(op, x_shape, attrs=None, consts=(), extra_inputs=(), out_shape=None, opset=18):
    """A model `y = op(x, *consts)` with constants as initializers."""
    inits = [numpy_helper.from_array(np.asarray(v), f"c{i}") for i, v in enumerate(consts)]
    inputs = ["x"] + [f"c{i}" for i in range(len(consts))] + list(extra_inputs)
    node = helper.make_node(op, inputs, ["y"], **(attrs or {}))
    graph = helper.make_graph([node], op, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


rng = np.random.default_rng(0)
f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731

CASES = {
    "Add-broadcast": one_node("Add", [2, 3, 40], consts=[f32(40)]),
    "Sub-scalar-first": one_node("Sub", [2, 40], consts=[np.float32(1.0)]),
    "Mul-tensor": one_node("Mul", [2, 3, 40], consts=[f32(3, 1)]),
    "Div": one_node("Div", [2, 40], consts=[np.abs(f32(40)) + 1]),
    "Pow": one_node("Pow", [2, 40], consts=[np.float32(2.0)]),
    "Sqrt": one_node("Sqrt", [2, 40]),  # NaN for negatives on both sides
    "Neg": one_node("Neg", [5, 7]),
    "Exp": one_node("Exp", [5, 7]),
    "Sigmoid": one_node("Sigmoid", [5, 7]),
    "Tanh": one_node("Tanh", [5, 7]),
    "Erf": one_node("Erf", [5, 7]),
    "Gelu": one_node("Gelu", [5, 70], opset=20),
    "Softmax-axis1": one_node("Softmax", [2, 5, 7], attrs={"axis": 1}),
    "LayerNormalization": one_node("LayerNormalization", [2, 5, 48], consts=[f32(48), f32(48)]),
    "MatMul-activations": one_node("MatMul", [2, 5, 7], consts=[f32(2, 7, 9)]),
    "Gemm-transB": one_node("Gemm", [4, 7], attrs={"transB": 1, "alpha": 0.5, "beta": 2.0},
                            consts=[f32(9, 7), f32(9)]),
    "Conv-stride-groups": one_node("Conv", [1, 4, 9, 9], attrs={"strides": [2, 2], "pads": [1, 1, 1, 1],
                                                                 "group": 2}, consts=[f32(6, 2, 3, 3), f32(6)]),
    "MaxPool": one_node("MaxPool", [1, 8, 10, 10], attrs={"kernel_shape": [3, 3], "strides": [2, 2],
                                                          "pads": [1, 1, 1, 1]}),
    "AveragePool": one_node("AveragePool", [1, 8, 10, 10], attrs={"kernel_shape": [2, 2], "strides": [2, 2]}),
    "GlobalAveragePool": one_node("GlobalAveragePool", [2, 8, 5, 5]),
    "BatchNormalization": one_node("BatchNormalization", [2, 4, 3, 3],
                                   consts=[f32(4), f32(4), f32(4), np.abs(f32(4)) + 0.5]),
    "Reshape": one_node("Reshape", [2, 3, 8], consts=[np.array([4, -1], np.int64)]),
    "Transpose": one_node("Transpose", [2, 3, 8], attrs={"perm": [2, 0, 1]}),
    "Flatten": one_node("Flatten", [2, 3, 4, 5], attrs={"axis": 2}),
    "Concat": one_node("Concat", [2, 3], attrs={"axis": 1}, consts=[f32(2, 5)]),
    "Slice-steps": one_node("Slice", [6, 10], consts=[np.array([1, 0]), np.array([5, 10]), np.array([0, 1]),
                                                       np.array([1, 3])]),
    "Unsqueeze": one_node("Unsqueeze", [3, 4], consts=[np.array([0, 3])]),
    "Squeeze": one_node("Squeeze", [3, 1, 4], consts=[np.array([1])]),
    "Clip": one_node("Clip", [3, 40], consts=[np.float32(-0.5), np.float32(0.5)]),
    "Clip-6-attributes": one_node("Clip", [3, 40], attrs={"min": -0.5, "max": 0.25}, opset=9),
    "ReduceMean-axes": one_node("ReduceMean", [2, 3, 40], attrs={"keepdims": 0}, consts=[np.array([1, 2])]),
    "Expand": one_node("Expand", [3, 1], consts=[np.array([2, 3, 4])]),
    "Gather-constant-index": one_node("Gather", [5, 6], attrs={"axis": 1}, consts=[np.array([4, 0])]),
}

def _split_model():
    inits = [numpy_helper.from_array(np.array([2, 6], np.int64), "sizes")]
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1)
    relu = helper.make_node("Relu", ["b"], ["rb"])
    graph = helper.make_graph([node, relu], "split", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("rb", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _where_cast_model():
    nodes = [helper.make_node("Greater", ["x", "zero"], ["mask"]),
             helper.make_node("Where", ["mask", "x", "minus"], ["w"]),
             helper.make_node("Cast", ["mask"], ["m"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["w", "m"], ["y"])]
    inits = [numpy_helper.from_array(np.float32(0), "zero"), numpy_helper.from_array(np.float32(-1), "minus")]
    graph = helper.make_graph(nodes, "where", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 40])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _embedding_model():
    table = numpy_helper.from_array(f32(50, 48), "table")
    node = helper.make_node("Gather", ["table", "ids"], ["y"], axis=0)
    graph = helper.make_graph([node], "emb", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [table])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


CASES["Split"] = _split_model()
CASES["Where-Greater-Cast"] = _where_cast_model()
CASES["Gather-embedding"] = _embedding_model()


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_onnxruntime(name):
    report = verify(CASES[name], dtype="fp32")
    assert report.passed, report.text()
