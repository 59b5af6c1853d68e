"""assign-layouts (onnx2ttnn/passes/assign_layouts.py): integer dtypes and where's output dtype."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.verify import verify


def _model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs], list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _layouts(conversion, op):
    return [(layout_of(n.inputs[0]).dtype, layout_of(n.outputs[0]).dtype)
            for n in conversion.module.graph.nodes if n.op == op]


def test_casts_to_signed_integers_are_int32_and_to_unsigned_uint32():
    m = _model([helper.make_node("Cast", ["x"], ["s"], to=TensorProto.INT64),
                helper.make_node("Cast", ["x"], ["u"], to=TensorProto.UINT32)],
               [("x", TensorProto.FLOAT, [4])], [("s", TensorProto.INT64, [4]), ("u", TensorProto.UINT32, [4])])
    assert sorted(_layouts(convert(m, dtype="fp32"), "typecast")) == [("f32", "i32"), ("f32", "u32")]


def test_where_output_has_the_dtype_of_its_first_tensor_value():
    """ttnn.where returns true_value's dtype (or false_value's, or with two scalars the predicate's)."""
    m = _model([helper.make_node("Cast", ["x"], ["i"], to=TensorProto.INT32),
                helper.make_node("Greater", ["x", "zero"], ["mask"]),
                helper.make_node("Where", ["mask", "i", "seven"], ["y"]),
                helper.make_node("Where", ["mask", "zerof", "onef"], ["z"])],
               [("x", TensorProto.FLOAT, [2, 4])], [("y", TensorProto.INT32, [2, 4]), ("z", TensorProto.FLOAT, [2, 4])],
               [numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
                numpy_helper.from_array(np.array(7, np.int32), "seven"),
                numpy_helper.from_array(np.array(0.0, np.float32), "zerof"),
                numpy_helper.from_array(np.array(1.0, np.float32), "onef")])
    conversion = convert(m, dtype="bf16")
    outs = {n.outputs[0].name: (len(n.inputs), layout_of(n.outputs[0]).dtype)
            for n in conversion.module.graph.nodes if n.op == "where"}
    # int32 values go as tensors (ttnn refuses a scalar beside an int32 value: probe_integers.py)
    assert sorted(outs.values()) == [(1, "bf16"), (3, "i32")]


def test_arithmetic_and_reshapes_of_integer_tensors_keep_their_integer_dtype():
    """ttnn.add / ttnn.reshape return input a's dtype: a mask cast from a boolean to an integer type is int32
    like every other integer (int32 and uint32 operands do not mix on ttnn), and stays int32 through them (the
    IR must declare what runs)."""
    m = _model([helper.make_node("Greater", ["x", "zero"], ["b"]),
                helper.make_node("Cast", ["b"], ["u"], to=TensorProto.INT32),
                helper.make_node("Cast", ["x"], ["s"], to=TensorProto.INT32),
                helper.make_node("Add", ["u", "one"], ["u1"]),
                helper.make_node("Add", ["s", "one"], ["s1"]),
                helper.make_node("Reshape", ["u1", "shape"], ["ur"])],
               [("x", TensorProto.FLOAT, [2, 4])], [("ur", TensorProto.INT32, [8]), ("s1", TensorProto.INT32, [2, 4])],
               [numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
                numpy_helper.from_array(np.array(1, np.int32), "one"),
                numpy_helper.from_array(np.array([8], np.int64), "shape")])
    conversion = convert(m, dtype="bf16")
    assert sorted(_layouts(conversion, "typecast")) == [("bf16", "i32"), ("bf16", "i32")]
    assert sorted(_layouts(conversion, "add")) == [("i32", "i32"), ("i32", "i32")]
    assert _layouts(conversion, "reshape") == [("i32", "i32")]
    report = verify(m, inputs={"x": np.array([[1.5, -2.0, 0.0, 3.0], [-7.0, 2.0, 9.0, -1.0]], np.float32)},
                    dtype="bf16")
    assert report.passed, report.text()
