"""Conv / ConvTranspose / BatchNormalization (lowering/conv.py) against onnxruntime on the simulator (fp32)."""
from __future__ import annotations

import numpy as np
import pytest

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.verify import verify
from tests.lowering._nodes import f32, model, ttnn_ops

CASES = {
    "conv-1d": model("Conv", {"x": [2, 4, 17]}, [f32(6, 4, 3), f32(6)], {"strides": [2], "pads": [1, 2]}),
    "conv-1d-dilated-groups": model("Conv", {"x": [1, 4, 16]}, [f32(4, 2, 3)], {"dilations": [2], "group": 2}),
    "conv-2d-same-lower": model("Conv", {"x": [1, 3, 9, 9]}, [f32(5, 3, 3, 3)], {"auto_pad": "SAME_LOWER",
                                                                               "strides": [2, 2]}),
    "conv-2d-depthwise-dilated": model("Conv", {"x": [1, 4, 9, 9]}, [f32(4, 1, 3, 3), f32(4)],
                                       {"group": 4, "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    "convtranspose-2d": model("ConvTranspose", {"x": [1, 2, 4, 4]}, [f32(2, 3, 3, 3), f32(3)],
                              {"strides": [2, 2], "pads": [1, 0, 1, 0]}),
    "convtranspose-output-shape": model("ConvTranspose", {"x": [1, 1, 3, 3]}, [f32(1, 2, 3, 3)],
                                        {"strides": [3, 2], "output_shape": [10, 8]}),
    "convtranspose-same-upper": model("ConvTranspose", {"x": [1, 1, 3, 3]}, [f32(1, 2, 3, 3)],
                                      {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    "convtranspose-groups": model("ConvTranspose", {"x": [2, 4, 3, 3]}, [f32(4, 1, 3, 3)], {"group": 2}),
    "convtranspose-1d": model("ConvTranspose", {"x": [1, 2, 5]}, [f32(2, 3, 3)], {"strides": [2],
                                                                               "output_padding": [1]}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_family_matches_onnxruntime(name):
    report = verify(CASES[name], dtype="fp32")
    assert report.passed, report.text()


def test_conv_1d_runs_as_conv2d():
    assert ttnn_ops(CASES["conv-1d"], dtype="fp32").count("conv2d") == 1


@pytest.mark.parametrize("op, weight", [("Conv", f32(3, 2, 2, 2, 2)), ("ConvTranspose", f32(2, 3, 2, 2, 2))])
def test_3d_is_declined_to_the_host_fallback(op, weight):
    m = model(op, {"x": [1, 2, 4, 4, 4]}, [weight])
    with pytest.raises(ConversionError, match="only 1-D and 2-D"):
        ttnn_ops(m, fallback=False)
    ops = ttnn_ops(m, dtype="fp32")
    assert "conv2d" not in ops and "conv_transpose2d" not in ops and "host_compute" in ops


def test_output_padding_not_below_stride_is_refused():
    m = model("ConvTranspose", {"x": [1, 1, 3, 3]}, [f32(1, 1, 3, 3)], {"strides": [2, 2],
                                                                       "output_padding": [2, 2]})
    with pytest.raises(ConversionError, match="output_padding 2"):
        ttnn_ops(m, fallback=False)


def test_a_1d_conv_followed_by_batch_normalization_folds_per_output_channel():
    """Found by the fuzzer (seed 16 case 211): the conv-batchnorm fusion reshaped the scale to [C, 1, 1, 1], which
    turned a 1-D weight [6, 5, 2] into [6, 6, 5, 2]: an internal error (IR verifier after lower-to-ttnn)."""
    from onnx import TensorProto, helper, numpy_helper

    from onnx2ttnn import ort
    from tests.program_run import run

    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((6, 5, 2)), "scale": rng.standard_normal(6), "bias": rng.standard_normal(6),
              "mean": rng.standard_normal(6), "var": rng.random(6) + 0.5}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[2], pads=[1, 0]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y"])]
    graph = helper.make_graph(nodes, "conv1d_bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 6, 5])],
                              [numpy_helper.from_array(v.astype(np.float32), k) for k, v in params.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = rng.standard_normal((3, 5, 5)).astype(np.float32)
    outputs, leaks, _ = run(model, {"x": x})
    want = ort.run(ort.session(model.SerializeToString()), ["y"], {"x": x})[0]
    assert leaks == []
    np.testing.assert_allclose(outputs["y"].numpy(), want, rtol=1e-4, atol=1e-4)


# a long 1-D kernel (an STFT's framing conv, Silero VAD's 256 taps at stride 128, openWakeWord's 512 at 160):
# ttnn.conv2d refuses it on the mock, so it runs as slices, a concat and a linear (lowering/conv_frames.py); a
# kernel of no whole number of strides reads part of its last chunk, and zeros complete the input's last chunk
FRAMES = {
    "frames-one-channel": model("Conv", {"x": [1, 1, 200]}, [f32(9, 1, 64)], {"strides": [32]}),
    "frames-channels-bias-batch": model("Conv", {"x": [2, 3, 130]}, [f32(5, 3, 60), f32(5)], {"strides": [20]}),
    "frames-one-stride": model("Conv", {"x": [1, 2, 80]}, [f32(4, 2, 64)], {"strides": [64]}),
    "frames-no-whole-strides": model("Conv", {"x": [1, 1, 200]}, [f32(4, 1, 64)], {"strides": [48]}),
    "frames-chunks-past-the-input": model("Conv", {"x": [2, 3, 112]}, [f32(4, 3, 64), f32(4)], {"strides": [48]}),
    "frames-stride-over-kernel": model("Conv", {"x": [1, 1, 1000]}, [f32(3, 1, 50)], {"strides": [400]}),
    # a frame of many chunks: two levels (groups of 4 chunks, then 4 groups a frame, the last in part)
    "frames-two-levels": model("Conv", {"x": [2, 3, 300]}, [f32(4, 3, 61), f32(4)], {"strides": [4]}),
    "frames-two-levels-past-the-input": model("Conv", {"x": [1, 2, 290]}, [f32(3, 2, 61)], {"strides": [4]}),
}


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_a_long_1d_kernel_runs_as_frames_and_a_linear(name):
    report = verify(FRAMES[name], dtype="fp32")
    assert report.passed, report.text()
    ops = ttnn_ops(FRAMES[name], dtype="fp32")
    assert "conv2d" not in ops and ops.count("linear") == 1
    if name == "frames-two-levels":  # 16 chunks a frame: 4 + 4 slices, not 16
        assert ops.count("slice") == 8 and ops.count("concat") == 2



def test_frames_of_one_weight_at_two_strides_and_an_infinite_input_value():
    """One weight read by two long-kernel convs at strides 48 and 64 (the frames matrix is the weight's, whatever
    the stride: the review found a second conv given the first's zero-padded one), and an inf at a position only
    the chunk tail past the kernel would have multiplied (zero taps made NaN of it)."""
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.random.default_rng(2).standard_normal((4, 1, 64)).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["a"], strides=[48]),
                               helper.make_node("Conv", ["x", "w"], ["b"], strides=[64])], "shared",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 256])],
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, None)], [weight])
    shared = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert verify(shared, dtype="fp32").passed
    x = np.random.default_rng(3).standard_normal((1, 1, 200)).astype(np.float32)
    x[0, 0, 70] = np.inf  # frame 1 reads 48..111: inf; frame 0 (0..63) and frame 2 (96..159) must not see it
    report = verify(FRAMES["frames-no-whole-strides"], dtype="fp32", inputs={"x": x})
    assert report.passed, report.text()
