"""Build the small example models shipped in models/ (deterministic: fixed seeds, no torch needed).

    python models/make_examples.py            # writes models/mlp.onnx and models/cnn.onnx
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


def main(out_dir: str = HERE) -> None:
    for name, build in (("mlp", mlp), ("cnn", cnn)):
        model = build()
        onnx.checker.check_model(model)
        path = os.path.join(out_dir, f"{name}.onnx")
        onnx.save(model, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main(*sys.argv[1:])
