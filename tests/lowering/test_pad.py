"""Pad (onnx2ttnn/lowering/pad.py) on one-node models against onnxruntime, fp32 and bf16, with leak checks."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.verify import verify
from tests.program_run import run

rng = np.random.default_rng(4)


def pad_model(shape, pads, mode="constant", value=None, axes=None, opset=18, runtime_value=False):
    """`y = Pad(x, pads, value, axes)` with constant pads/axes (opset >= 11) or attributes (opset < 11)."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)]
    inits, names, attrs = [], ["x"], {"mode": mode}
    if opset < 11:
        attrs["pads"] = pads
        if value is not None:
            attrs["value"] = float(value)
    else:
        inits.append(numpy_helper.from_array(np.array(pads, np.int64), "pads"))
        names.append("pads")
        if runtime_value:
            inputs.append(helper.make_tensor_value_info("value", TensorProto.FLOAT, []))
            names.append("value")
        elif value is not None:
            inits.append(numpy_helper.from_array(np.array(value, np.float32), "value"))
            names.append("value")
        if axes is not None:
            names += [""] * (3 - len(names)) + ["axes"]
            inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
    node = helper.make_node("Pad", names, ["y"], **attrs)
    graph = helper.make_graph([node], "pad", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


CASES = {
    "constant-front-and-back": (pad_model([2, 3, 5], [0, 1, 2, 0, 3, 1], value=1.5), {}),
    "constant-trailing-only": (pad_model([2, 3, 5], [0, 0, 0, 1, 2, 3]), {}),
    "constant-negative-crops": (pad_model([4, 6], [-1, 2, 1, -3], value=-2.0), {}),
    "constant-axes-opset18": (pad_model([2, 3, 4], [1, 2], value=3.0, axes=[-1]), {}),
    "constant-attrs-opset2": (pad_model([3, 4], [1, 0, 0, 2], value=0.25, opset=2), {}),
    "constant-runtime-value": (pad_model([2, 3, 4], [0, 1, 1, 0, 2, 1], runtime_value=True),
                               {"value": np.array(-4.5, np.float32)}),
    "edge": (pad_model([2, 3, 4], [0, 2, 1, 0, 1, 3], mode="edge"), {}),
    "reflect": (pad_model([1, 3, 5], [0, 2, 1, 0, 1, 4], mode="reflect"), {}),
    "wrap-opset19": (pad_model([3, 4], [2, 1, 1, 4], mode="wrap", opset=19), {}),
    "reflect-after-crop": (pad_model([4, 6], [-1, 2, 1, -2], mode="reflect"), {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pad_matches_onnxruntime(name):
    model, extra = CASES[name]
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    inputs = {"x": rng.standard_normal(shape).astype(np.float32), **extra}
    outputs, leaks, _ = run(model, inputs)
    assert leaks == []
    for dtype in ("fp32", "bf16"):
        report = verify(model, inputs=inputs, dtype=dtype)
        assert report.passed, report.text()


def test_front_padding_asks_for_row_major_and_trailing_padding_stays_tile():
    front = convert(pad_model([2, 3, 5], [0, 1, 0, 0, 0, 0]), dtype="fp32").source
    assert "layout=ttnn.ROW_MAJOR_LAYOUT" in front and "ttnn.pad(" in front  # TILE cannot pad the front
    back = convert(pad_model([2, 3, 5], [0, 0, 0, 0, 1, 2]), dtype="fp32").source
    assert "ROW_MAJOR" not in back and "ttnn.pad(" in back


def test_reflect_pad_must_be_smaller_than_the_axis():
    with pytest.raises(ConversionError, match="reflect Pad of 3 on an axis of 3"):
        convert(pad_model([2, 3], [0, 3, 0, 0], mode="reflect"), dtype="fp32")


def test_negative_pads_may_not_empty_an_axis():
    with pytest.raises(ConversionError, match="remove every element"):
        convert(pad_model([2, 3], [0, -2, 0, -1]), dtype="fp32")


def test_front_padding_output_is_row_major_like_its_input_so_views_of_it_are_tracked():
    """MobileNetV2 (TorchScript export): Pad (front) -> Conv. pad reads ROW_MAJOR, so its output and the
    permute after it are ROW_MAJOR: the reshape to conv2d's flat input is then a view, and the permute's
    buffer must live until the conv has run (the simulator raises on use-after-free)."""
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((8, 1, 3, 3)).astype(np.float32), "w")
    pads = numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Pad", ["r", "pads"], ["p"]),
             helper.make_node("Conv", ["p", "w"], ["y"], group=8, kernel_shape=[3, 3])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 6, 6])], [w, pads])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    from onnx2ttnn.verify import verify

    for dtype in ("bf16", "fp32"):
        report = verify(m, dtype=dtype)
        assert report.passed, report.text()
