"""fusion/conv_bias.py: a conv's bias written as a separate constant Add joins the conv; what is not one value
per output channel does not; and at the output tail the sigmoid then reads the conv's float32 result."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn import convert
from onnx2ttnn.verify import verify
from tests.passes.test_fuse_patterns import _fused_ops
from tests.program_run import forward_text


def _model(op: str, bias_shape, tail: str = "", conv_bias: bool = False) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    c_in, c_out = 8, 4
    w = rng.standard_normal((c_out, c_in, 3, 3) if op == "Conv" else (c_in, c_out, 2, 2)).astype(np.float32) / 4
    attrs = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]) if op == "Conv" else dict(kernel_shape=[2, 2], strides=[2, 2])
    side = 8 if op == "Conv" else 16
    inits = [numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(rng.standard_normal(bias_shape).astype(np.float32), "b")]
    conv_inputs = ["x", "w"]
    if conv_bias:
        inits.append(numpy_helper.from_array(np.full(c_out, 0.5, np.float32), "own"))
        conv_inputs.append("own")
    nodes = [helper.make_node(op, conv_inputs, ["c"], name="conv", **attrs),
             helper.make_node("Add", ["c", "b"], ["a" if tail else "y"], name="bias")]
    if tail:
        nodes.append(helper.make_node(tail, ["a"], ["y"], name="tail"))
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c_out, side, side])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("op", ["Conv", "ConvTranspose"])
@pytest.mark.parametrize("shape", [(1, 4, 1, 1), (4, 1, 1), (1,), ()])
def test_a_per_channel_constant_add_joins_the_conv(op, shape):
    assert _fused_ops(_model(op, shape)) == [op]


@pytest.mark.parametrize("shape", [(1, 4, 8, 8), (1, 1, 1, 8), (8,)])
def test_an_add_that_is_not_one_value_per_channel_stays(shape):
    # [8] broadcasts along the width (the last dim), not the channels
    assert _fused_ops(_model("Conv", shape)) == ["Conv", "Add"]


@pytest.mark.parametrize("op", ["Conv", "ConvTranspose"])
def test_the_fused_conv_matches_onnxruntime_with_its_own_bias_kept(op):
    report = verify(_model(op, (1, 4, 1, 1), conv_bias=True), weights="bf16")
    assert report.passed, report.text()


def test_a_sigmoid_after_a_biased_conv_transpose_reads_its_float32_result():
    """The DB head's tail: ConvTranspose, bias Add, Sigmoid: the conv writes float32 (lowering/accuracy.py)."""
    model = _model("ConvTranspose", (1, 4, 1, 1), tail="Sigmoid")
    forward = forward_text(convert(model).source)
    conv = next(line for line in forward.splitlines() if "ttnn.conv_transpose2d(" in line)
    assert "dtype=ttnn.float32" in conv and "bias_tensor=" in conv
    assert "ttnn.add(" not in forward
    assert verify(model).passed
