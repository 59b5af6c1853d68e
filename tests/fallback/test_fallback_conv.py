"""Host fallbacks for 3-D Conv / ConvTranspose (fallback/conv.py, host/conv.py) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn import convert
from onnx2ttnn.verify import verify
from tests.ttnn_api import check_source

rng = np.random.default_rng(3)
FLOAT = TensorProto.FLOAT


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def relu_then(op, x_shape, weights, attrs):
    """`y = op(relu(x), *weights)`: the fallback reads a device tensor and its result goes back to the device."""
    names = [f"w{i}" for i in range(len(weights))]
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node(op, ["r", *names], ["c"], **attrs),
             helper.make_node("Neg", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", FLOAT, None)],
                              [numpy_helper.from_array(w, n) for n, w in zip(names, weights)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


CASES = {
    "conv3d-pads-strides-bias": relu_then("Conv", [1, 2, 5, 6, 7], [f32(3, 2, 3, 3, 3), f32(3)],
                                          {"pads": [1, 0, 2, 0, 1, 1], "strides": [2, 1, 2]}),
    "conv3d-same-lower-groups": relu_then("Conv", [2, 4, 6, 6, 5], [f32(4, 2, 3, 2, 3)],
                                          {"auto_pad": "SAME_LOWER", "group": 2}),
    "conv3d-dilated": relu_then("Conv", [1, 2, 7, 6, 6], [f32(2, 2, 2, 3, 2)], {"dilations": [2, 1, 2]}),
    "conv3d-same-upper-strided": relu_then("Conv", [1, 1, 7, 6, 5], [f32(2, 1, 2, 3, 2)],
                                           {"auto_pad": "SAME_UPPER", "strides": [2, 3, 2]}),
    "convtranspose3d-pads-bias": relu_then("ConvTranspose", [1, 2, 3, 4, 3], [f32(2, 3, 3, 3, 2), f32(3)],
                                           {"strides": [2, 1, 2], "pads": [1, 0, 0, 0, 1, 1]}),
    "convtranspose3d-output-padding-groups": relu_then("ConvTranspose", [1, 4, 3, 3, 2], [f32(4, 1, 2, 2, 2)],
                                                       {"strides": [2, 2, 3], "output_padding": [1, 0, 2],
                                                        "group": 2}),
    "convtranspose3d-output-shape": relu_then("ConvTranspose", [1, 1, 3, 3, 3], [f32(1, 2, 3, 3, 3)],
                                              {"strides": [2, 2, 2], "output_shape": [7, 8, 6]}),
    "convtranspose3d-same-upper": relu_then("ConvTranspose", [1, 1, 3, 2, 3], [f32(1, 1, 3, 2, 3)],
                                            {"strides": [2, 2, 1], "auto_pad": "SAME_UPPER"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_3d_convolution_on_the_host_matches_onnxruntime(name):
    conversion = convert(CASES[name], dtype="fp32")
    op = "Conv" if name.startswith("conv3d") else "ConvTranspose"
    assert conversion.fallback_counts() == {op: 1}
    assert check_source(conversion.source) == []
    report = verify(CASES[name], dtype="fp32")
    assert report.passed, report.text()


def test_2d_convolution_stays_on_ttnn():
    m = relu_then("Conv", [1, 2, 6, 6], [f32(3, 2, 3, 3)], {"pads": [1, 1, 1, 1]})
    conversion = convert(m, dtype="fp32")
    assert conversion.fallback_counts() == {} and conversion.op_counts()["conv2d"] == 1
