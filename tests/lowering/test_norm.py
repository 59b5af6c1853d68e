"""Softmax family and normalizations (lowering/norm.py) against onnxruntime on the simulator (fp32)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx2ttnn.verify import verify
from tests.lowering._nodes import f32, model, ttnn_ops

CASES = {
    "softmax-axis0": model("Softmax", {"x": [3, 4, 5]}, attrs={"axis": 0}, opset=13),
    "softmax-opset11-coerced": model("Softmax", {"x": [3, 4, 5]}, attrs={"axis": 1}, opset=11),
    "softmax-opset9-default-axis": model("Softmax", {"x": [3, 4, 5]}, opset=9),  # schema 1
    "logsoftmax-axis1": model("LogSoftmax", {"x": [3, 4, 5]}, attrs={"axis": 1}, opset=13),
    "logsoftmax-opset11-axis0": model("LogSoftmax", {"x": [3, 4, 5]}, attrs={"axis": 0}, opset=11),
    "logsoftmax-opset9-axis2": model("LogSoftmax", {"x": [3, 4, 5]}, attrs={"axis": 2}, opset=9),  # schema 1
    "layernorm-axis1": model("LayerNormalization", {"x": [2, 3, 4, 5]}, [f32(3, 4, 5), f32(3, 4, 5)],
                             {"axis": 1}, opset=17),
    "layernorm-no-bias": model("LayerNormalization", {"x": [2, 7, 48]}, [f32(48)], opset=17),
    "rmsnorm-axis2": model("RMSNormalization", {"x": [2, 3, 4, 5]}, [f32(4, 5)], {"axis": 2}, opset=23),
    "groupnorm": model("GroupNormalization", {"x": [3, 4, 2, 2]}, [f32(4), f32(4)], {"num_groups": 2},
                       opset=21, out_shape=[3, 4, 2, 2]),
    "groupnorm-opset18-per-group": model("GroupNormalization", {"x": [3, 4, 2, 2]}, [f32(2), f32(2)],
                                         {"num_groups": 2}, opset=18, out_shape=[3, 4, 2, 2]),
    "instancenorm": model("InstanceNormalization", {"x": [2, 3, 4, 5]}, [f32(3), f32(3)], {"epsilon": 0.01}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_norm_matches_onnxruntime(name):
    report = verify(CASES[name], dtype="fp32")
    assert report.passed, report.text()


def test_logsoftmax_does_not_underflow():
    x = np.array([[0.0, -200.0, 200.0]], np.float32)
    report = verify(model("LogSoftmax", {"x": [1, 3]}, opset=13), inputs={"x": x}, dtype="fp32")
    assert report.passed, report.text()


def test_layernorm_mean_and_inv_std_outputs():
    m = model("LayerNormalization", {"x": [2, 3, 5]}, [f32(3, 5), f32(3, 5)], {"axis": 1, "epsilon": 0.1},
              outputs=("y", "mean", "inv_std"), opset=17)
    report = verify(m, dtype="fp32")
    assert report.passed and len(report.outputs) == 3, report.text()


def test_layernorm_runtime_scale_uses_ttnn_layer_norm():
    m = model("LayerNormalization", {"x": [2, 3, 8], "w": [3, 8]}, attrs={"axis": 1}, opset=17)
    assert verify(m, dtype="fp32").passed
    assert ttnn_ops(m, dtype="fp32").count("layer_norm") == 1


def test_rms_norm_lowers_to_ttnn_rms_norm():
    assert "rms_norm" in ttnn_ops(CASES["rmsnorm-axis2"], dtype="fp32")


@pytest.mark.parametrize("op,opset,axis", [("RMSNormalization", 23, -3), ("LayerNormalization", 17, 1)])
def test_a_scale_that_does_not_broadcast_to_the_normalised_dims_is_refused(op, opset, axis):
    """Fuzz seed 59 case 1406: a constant scale of shape [4, 2, 5, 1] for normalised dims [4, 2, 5] (onnxruntime
    refuses it at run time) was an internal error (numpy's broadcast); now one error naming the node."""
    from onnx2ttnn.convert import convert
    from onnx2ttnn.errors import ConversionError

    m = model(op, {"x": [2, 4, 2, 5]}, [f32(4, 2, 5, 1)], {"axis": axis}, opset=opset)
    with pytest.raises(ConversionError, match=r"the scale of shape \[4, 2, 5, 1\] does not broadcast with the "
                                              r"normalised dims \[4, 2, 5\]"):
        convert(m)


@pytest.mark.parametrize("op,opset", [("LayerNormalization", 17), ("RMSNormalization", 23)])
def test_a_scale_with_leading_ones_or_batch_dims_follows_the_specs_broadcast(op, opset):
    """Found in review: the spec multiplies the scale with numpy broadcasting against the whole input, and
    onnxruntime runs a [1, 1, 4] scale for the last dim (leading 1s: the device norm) and a [2, 3, 4] one that
    varies over the batch dims (declined: a host step computes it); both had been refused."""
    from onnx2ttnn.convert import convert

    leading = model(op, {"x": [2, 3, 4]}, [f32(1, 1, 4)], {"axis": -1}, opset=opset)
    assert verify(leading, dtype="fp32").passed
    assert "_norm(" in convert(leading, dtype="fp32").source
    batched = model(op, {"x": [2, 3, 4]}, [f32(2, 3, 4)], {"axis": -1}, opset=opset)
    report = verify(batched, dtype="fp32")
    assert report.passed, report.text()


# --- LRN ----------------------------------------------------------------------------------------------------

def _conv_lrn(dtype_opset=13):
    """Conv -> LRN -> Relu, as in AlexNet: the LRN input arrives in ttnn's NHWC form."""
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(f32(8, 3, 3, 3) * 0.3, "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("LRN", ["c"], ["l"], size=5, alpha=1e-3, beta=0.75, bias=2.0),
             helper.make_node("Relu", ["l"], ["y"])]
    graph = helper.make_graph(nodes, "conv_lrn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", dtype_opset)])


@pytest.mark.parametrize("size", [1, 3, 5])  # onnxruntime accepts odd sizes only
def test_lrn_matches_onnxruntime(size):
    m = model("LRN", {"x": [2, 7, 3, 4]}, attrs={"size": size, "alpha": 0.5, "beta": 0.6, "bias": 1.5}, opset=13)
    report = verify(m, dtype="fp32")
    assert report.passed, report.text()


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_lrn_after_conv_stays_nhwc(dtype):
    m = _conv_lrn()
    report = verify(m, dtype=dtype)
    assert report.passed, report.text()
    ops = ttnn_ops(m, dtype=dtype)
    window = ops[ops.index("conv2d"):ops.index("divide")]
    assert "permute" not in window and window.count("slice") == 5
