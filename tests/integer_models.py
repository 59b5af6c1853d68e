"""Small integer ONNX models shared by the integer tests (tests/test_verify_compare.py, tests/real_ttnn):
integer inputs and constants whose values bfloat16 cannot hold (40001 is 40064 in bf16), out of int32's range,
and a graph mixing the integer ops (Add, Sub, Mul, Clip, Pow, Div, Where, comparisons, Cast, Gather, MaxPool)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

I64, F32 = TensorProto.INT64, TensorProto.FLOAT


def _model(nodes, inputs, outputs, inits=(), opset=18) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "integers", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs], list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def add_one() -> onnx.ModelProto:
    """y = x + 1 on int64 [4] (issue 16: [1001, 2001, 3001, 40001] + 1 came out off by up to 66)."""
    return _model([helper.make_node("Add", ["x", "one"], ["y"])], [("x", I64, [4])], [("y", I64, [4])],
                  [numpy_helper.from_array(np.array([1], np.int64), "one")])


ADD_ONE_INPUTS = {"x": np.array([1001, 2001, 3001, 40001], np.int64)}
WIDE = np.array([2**40, -2**40, 2**62, 7], np.int64)  # became [0, 0, 0, 7] on upload


def wide_constant() -> onnx.ModelProto:
    """y = x + [2^40, -2^40, 2^62, 7]: a constant int32 cannot carry."""
    return _model([helper.make_node("Add", ["x", "c"], ["y"])], [("x", I64, [4])], [("y", I64, [4])],
                  [numpy_helper.from_array(WIDE, "c")])


def mixed(gather: bool = True) -> onnx.ModelProto:
    """The integer ops together on int64 [1, 2, 4, 4] inputs a, b (b > 0), indices `idx` and a float x
    (`gather`: with the Gather of a constant float table by the runtime indices)."""
    shape = [1, 2, 4, 4]
    const = {"three": np.array(3, np.int64), "seven": np.array(7, np.int64), "two": np.array(2, np.int64),
             "lo": np.array(-50, np.int64), "hi": np.array(4000, np.int64),
             "offsets": np.arange(32, dtype=np.int64).reshape(shape) * 1001,
             "table": np.arange(30, dtype=np.float32).reshape(10, 3)}
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]),
             helper.make_node("Sub", ["s", "offsets"], ["d"]),
             helper.make_node("Mul", ["d", "three"], ["m"]),
             helper.make_node("Clip", ["m", "lo", "hi"], ["clipped"]),
             helper.make_node("Pow", ["a", "two"], ["squared"]),
             helper.make_node("Pow", ["b", "b"], ["powered"]),  # tensor exponent: host fallback
             helper.make_node("Div", ["d", "b"], ["quotient"]),  # integer division truncates
             helper.make_node("Greater", ["a", "b"], ["greater"]),
             helper.make_node("Where", ["greater", "d", "seven"], ["selected"]),
             helper.make_node("Equal", ["a", "b"], ["equal"]),
             helper.make_node("Cast", ["x"], ["truncated"], to=I64),
             helper.make_node("Cast", ["a"], ["af"], to=F32),
             helper.make_node("Add", ["af", "x"], ["floats"])]
    if gather:
        nodes.append(helper.make_node("Gather", ["table", "idx"], ["gathered"], axis=0))
    outs = [("clipped", I64, shape), ("squared", I64, shape), ("powered", I64, shape), ("quotient", I64, shape),
            ("selected", I64, shape), ("equal", TensorProto.BOOL, shape), ("truncated", I64, shape),
            ("floats", F32, shape)] + ([("gathered", F32, [5, 3])] if gather else [])
    inputs = [("a", I64, shape), ("b", I64, shape), ("x", F32, shape)] + ([("idx", I64, [5])] if gather else [])
    if not gather:
        del const["table"]
    return _model(nodes, inputs, outs, [numpy_helper.from_array(v, k) for k, v in const.items()])


def mixed_inputs(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    shape = (1, 2, 4, 4)
    return {"a": rng.integers(-3000, 3000, shape).astype(np.int64), "b": rng.integers(1, 6, shape).astype(np.int64),
            # halves below 128: exact in bfloat16 too, so Cast(x -> int64) truncates the value onnxruntime sees
            "x": (rng.integers(-255, 256, shape) / 2).astype(np.float32),
            "idx": np.array([0, 9, 1, 3, 7], np.int64)}


def max_pool_uint8() -> onnx.ModelProto:
    """MaxPool over uint8 (its integer types: int8, uint8), padded: the padding must not win."""
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1])
    return _model([node], [("x", TensorProto.UINT8, [1, 2, 6, 6])], [("y", TensorProto.UINT8, [1, 2, 4, 4])])


def max_pool_inputs(seed: int = 0) -> dict:
    return {"x": np.random.default_rng(seed).integers(0, 256, (1, 2, 6, 6)).astype(np.uint8)}
