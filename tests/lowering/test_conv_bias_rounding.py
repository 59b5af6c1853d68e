"""lowering/conv_bias_rounding.py: a conv's bias rounded as ttnn.conv2d prepares it beside a block-float weight,
put into the constants the fusions will fold into that bias."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.frontend.importer import import_proto
from onnx2ttnn.lowering.block_float import bfp_round
from onnx2ttnn.lowering.conv_bias_rounding import conv_bias_rounding

F = TensorProto.FLOAT
OC = 32


def _graph(nodes, constants: dict, output: str):
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", F, [1, 8, 6, 6])],
                              [helper.make_tensor_value_info(output, F, [1, OC, 6, 6])],
                              initializer=[numpy_helper.from_array(np.asarray(v, np.float32), n)
                                           for n, v in constants.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return import_proto(model, None, {}, 1).graph


def _bias(rng):
    b = rng.uniform(0.5, 1.5, OC)
    b[::16] = 40.0  # one large bias per group of 16 channels: bfloat8_b keeps the others to the nearest 0.5
    return b


def test_an_add_after_the_conv_takes_its_bias_rounding():
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((OC, 8, 1, 1)), _bias(rng)
    graph = _graph([helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Add", ["c", "b"], ["y"])],
                   {"w": w, "b": b.reshape(1, OC, 1, 1)}, "y")
    found = conv_bias_rounding(graph.tensors()["w"], "bfp8")
    assert list(found) == ["b"] and found["b"].shape == (1, OC, 1, 1)
    want = bfp_round(b.astype(np.float32).reshape(1, OC), "bfp8").reshape(-1)
    assert np.allclose(found["b"].reshape(-1), want, atol=1e-6) and not np.allclose(want, b, atol=0.01)


def test_a_batchnorm_s_shift_takes_the_rounding_of_the_bias_conv_batchnorm_folds():
    rng = np.random.default_rng(1)
    w, b = rng.standard_normal((OC, 8, 1, 1)), rng.standard_normal(OC)
    gamma, beta, mean, var = rng.uniform(0.5, 2, OC), _bias(rng), rng.standard_normal(OC), rng.uniform(0.5, 2, OC)
    graph = _graph([helper.make_node("Conv", ["x", "w", "b"], ["c"]),
                    helper.make_node("BatchNormalization", ["c", "g", "beta", "m", "v"], ["y"], epsilon=1e-5)],
                   {"w": w, "b": b, "g": gamma, "beta": beta, "m": mean, "v": var}, "y")
    found = conv_bias_rounding(graph.tensors()["w"], "bfp8")
    assert list(found) == ["beta"]
    scale = gamma / np.sqrt(var + 1e-5)
    fused = lambda shift: (b - mean) * scale + shift  # noqa: E731 - conv-batchnorm's bias
    want = bfp_round(fused(beta).astype(np.float32).reshape(1, OC), "bfp8").reshape(-1)
    assert np.allclose(fused(found["beta"].astype(np.float64)), want, atol=1e-5)


def test_a_conv_without_a_bias_gives_nothing():
    rng = np.random.default_rng(2)
    graph = _graph([helper.make_node("Conv", ["x", "w"], ["y"])], {"w": rng.standard_normal((OC, 8, 1, 1))}, "y")
    assert conv_bias_rounding(graph.tensors()["w"], "bfp8") == {}
