"""Build the small example models shipped in models/ (deterministic: fixed seeds, no torch needed).

    python models/make_examples.py            # writes models/mlp.onnx, cnn.onnx and the control-flow ones

The control-flow examples are written the way exporters write such graphs: an If on a condition computed from
an input's shape (if_rank.onnx), a recurrent cell as a Loop over a constant number of time steps
(loop_rnn.onnx), and a block defined once as a model-local function and called twice (local_function.onnx).
"""
from __future__ import annotations

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def _init(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def mlp(batch: int = 4, features: int = 64, hidden: int = 128, classes: int = 10) -> onnx.ModelProto:
    """x[batch, features] -> Gemm -> Relu -> MatMul + Add -> Relu -> Gemm -> Softmax."""
    rng = np.random.default_rng(0)
    inits = [
        _init("fc1.weight", rng.standard_normal((hidden, features)) / np.sqrt(features)),
        _init("fc1.bias", rng.standard_normal(hidden) * 0.1),
        _init("fc2.weight", rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)),
        _init("fc2.bias", rng.standard_normal(hidden) * 0.1),
        _init("head.weight", rng.standard_normal((hidden, classes)) / np.sqrt(hidden)),
        _init("head.bias", rng.standard_normal(classes) * 0.1),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h1"], name="fc1", transB=1),
        helper.make_node("Relu", ["h1"], ["a1"], name="relu1"),
        helper.make_node("MatMul", ["a1", "fc2.weight"], ["h2"], name="fc2"),
        helper.make_node("Add", ["h2", "fc2.bias"], ["h2b"], name="fc2_bias"),
        helper.make_node("Relu", ["h2b"], ["a2"], name="relu2"),
        helper.make_node("Gemm", ["a2", "head.weight", "head.bias"], ["logits"], name="head"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, features])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [batch, classes])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx2ttnn-examples")


def cnn(batch: int = 1, size: int = 32) -> onnx.ModelProto:
    """A small ResNet-style CNN: conv-bn-relu, max pool, a residual block, average pool, global pool, gemm."""
    rng = np.random.default_rng(1)
    inits, nodes = [], []

    def conv_bn(name, x, cin, cout, k, stride, pad, relu=True):
        inits.append(_init(f"{name}.w", rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)))
        inits.append(_init(f"{name}.bn.g", 1 + 0.1 * rng.standard_normal(cout)))
        inits.append(_init(f"{name}.bn.b", 0.1 * rng.standard_normal(cout)))
        inits.append(_init(f"{name}.bn.m", 0.1 * rng.standard_normal(cout)))
        inits.append(_init(f"{name}.bn.v", 1 + 0.1 * rng.random(cout)))
        nodes.append(helper.make_node("Conv", [x, f"{name}.w"], [f"{name}.c"], name=f"{name}.conv",
                                      kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4))
        out = f"{name}.bn" if relu else f"{name}.out"
        nodes.append(helper.make_node("BatchNormalization", [f"{name}.c", f"{name}.bn.g", f"{name}.bn.b",
                                                             f"{name}.bn.m", f"{name}.bn.v"], [out],
                                      name=f"{name}.bn", epsilon=1e-5))
        if relu:
            nodes.append(helper.make_node("Relu", [out], [f"{name}.out"], name=f"{name}.relu"))
        return f"{name}.out"

    x = conv_bn("stem", "image", 3, 16, 3, 1, 1)
    nodes.append(helper.make_node("MaxPool", [x], ["pool1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]))
    y = conv_bn("block.a", "pool1", 16, 16, 3, 1, 1)
    y = conv_bn("block.b", y, 16, 16, 3, 1, 1, relu=False)
    nodes.append(helper.make_node("Add", ["pool1", y], ["res"], name="residual"))
    nodes.append(helper.make_node("Relu", ["res"], ["res.relu"], name="residual.relu"))
    nodes.append(helper.make_node("AveragePool", ["res.relu"], ["pool2"], name="pool2", kernel_shape=[2, 2],
                                  strides=[2, 2]))
    z = conv_bn("head.conv", "pool2", 16, 32, 3, 2, 1)
    nodes.append(helper.make_node("GlobalAveragePool", [z], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1))
    inits.append(_init("fc.w", rng.standard_normal((10, 32)) / np.sqrt(32)))
    inits.append(_init("fc.b", 0.1 * rng.standard_normal(10)))
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(nodes, "cnn",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, [batch, 3, size, size])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx2ttnn-examples")


def _opsets():
    return [helper.make_opsetid("", 17)]


def if_rank(batch: int = 2, features: int = 32) -> onnx.ModelProto:
    """x[batch, features]: `If(Equal(Size(Shape(x)), 2))` picks a Gemm branch (taken) or a Flatten-first branch."""
    rng = np.random.default_rng(2)
    inits = [_init("w", rng.standard_normal((features, 16)) / np.sqrt(features)), _init("b", rng.standard_normal(16)),
             numpy_helper.from_array(np.array(2, np.int64), "two")]
    out = helper.make_tensor_value_info("h", TensorProto.FLOAT, [batch, 16])
    then_branch = helper.make_graph([helper.make_node("Gemm", ["x", "w", "b"], ["h_then"], name="then_gemm")],
                                    "then", [], [helper.make_tensor_value_info("h_then", TensorProto.FLOAT, None)])
    else_branch = helper.make_graph([helper.make_node("Flatten", ["x"], ["flat"], name="else_flatten"),
                                     helper.make_node("Gemm", ["flat", "w", "b"], ["h_else"], name="else_gemm")],
                                    "else", [], [helper.make_tensor_value_info("h_else", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Size", ["shape"], ["rank"], name="rank"),
             helper.make_node("Equal", ["rank", "two"], ["is_2d"], name="is_2d"),
             helper.make_node("If", ["is_2d"], ["h0"], name="branch", then_branch=then_branch,
                              else_branch=else_branch),
             helper.make_node("Tanh", ["h0"], ["h"], name="tanh")]
    graph = helper.make_graph(nodes, "if_rank", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                               [batch, features])], [out], inits)
    return helper.make_model(graph, opset_imports=_opsets(), producer_name="onnx2ttnn-examples")


def loop_rnn(steps: int = 6, batch: int = 2, features: int = 16, hidden: int = 32) -> onnx.ModelProto:
    """An Elman RNN as a Loop over `steps` time steps: h = tanh(x[t] U + h W + b), every h stacked."""
    rng = np.random.default_rng(3)
    inits = [_init("U", rng.standard_normal((features, hidden)) / np.sqrt(features)),
             _init("W", rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)),
             _init("bias", 0.1 * rng.standard_normal(hidden)), _init("h0", np.zeros((batch, hidden))),
             numpy_helper.from_array(np.array(steps, np.int64), "steps"),
             numpy_helper.from_array(np.array(True), "true")]
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"], name="keep_going"),
         helper.make_node("Gather", ["x", "t"], ["x_t"], name="x_t", axis=0),
         helper.make_node("MatMul", ["x_t", "U"], ["xu"], name="xu"),
         helper.make_node("MatMul", ["h", "W"], ["hw"], name="hw"),
         helper.make_node("Add", ["xu", "hw"], ["pre"], name="sum"),
         helper.make_node("Add", ["pre", "bias"], ["pre_b"], name="sum_bias"),
         helper.make_node("Tanh", ["pre_b"], ["h_next"], name="cell"),
         helper.make_node("Identity", ["h_next"], ["h_seq"], name="record")],
        "step", [helper.make_tensor_value_info("t", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("h", TensorProto.FLOAT, [batch, hidden])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_next", TensorProto.FLOAT, [batch, hidden]),
         helper.make_tensor_value_info("h_seq", TensorProto.FLOAT, [batch, hidden])])
    nodes = [helper.make_node("Loop", ["steps", "true", "h0"], ["h_last", "h_all"], name="rnn", body=body)]
    graph = helper.make_graph(nodes, "loop_rnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, batch, features])],
                              [helper.make_tensor_value_info("h_last", TensorProto.FLOAT, [batch, hidden]),
                               helper.make_tensor_value_info("h_all", TensorProto.FLOAT, [steps, batch, hidden])],
                              inits)
    return helper.make_model(graph, opset_imports=_opsets(), producer_name="onnx2ttnn-examples")


def local_function(batch: int = 4, features: int = 32) -> onnx.ModelProto:
    """Two residual MLP blocks, each a call of the model-local function `blocks.Residual(x, w1, w2)`."""
    rng = np.random.default_rng(4)
    inits = [_init(f"{i}.{n}", rng.standard_normal((features, features)) / np.sqrt(features))
             for i in range(2) for n in ("w1", "w2")]
    body = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["a"]),
            helper.make_node("MatMul", ["a", "w2"], ["r"]), helper.make_node("Add", ["x", "r"], ["y"])]
    residual = helper.make_function("blocks", "Residual", ["x", "w1", "w2"], ["y"], body, _opsets())
    nodes = [helper.make_node("Residual", ["x", "0.w1", "0.w2"], ["y0"], name="block0", domain="blocks"),
             helper.make_node("Residual", ["y0", "1.w1", "1.w2"], ["y1"], name="block1", domain="blocks"),
             helper.make_node("Softmax", ["y1"], ["probs"], name="softmax", axis=-1)]
    graph = helper.make_graph(nodes, "local_function",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, features])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [batch, features])], inits)
    return helper.make_model(graph, opset_imports=_opsets() + [helper.make_opsetid("blocks", 1)],
                             functions=[residual], producer_name="onnx2ttnn-examples")


EXAMPLES = (("mlp", mlp), ("cnn", cnn), ("if_rank", if_rank), ("loop_rnn", loop_rnn),
            ("local_function", local_function))


def main(out_dir: str = HERE) -> None:
    for name, build in EXAMPLES:
        model = build()
        onnx.checker.check_model(model)
        path = os.path.join(out_dir, f"{name}.onnx")
        onnx.save(model, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main(*sys.argv[1:])
