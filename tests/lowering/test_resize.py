"""Resize / Upsample (lowering/resize.py): per-axis maps against onnxruntime, and the ttnn ops chosen."""
from __future__ import annotations

import numpy as np
import pytest

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.resize import ResizeSpec, interpolation_matrix, nearest_indices, source_coordinates
from onnx2ttnn.verify import verify
from tests.lowering._nodes import model, ttnn_ops

F32 = np.float32
EMPTY = np.zeros(0, F32)


def resize(shape, *, scales=None, sizes=None, roi=None, opset=19, **attrs):
    consts = [EMPTY if roi is None else np.asarray(roi, F32), EMPTY if scales is None else np.asarray(scales, F32)]
    if sizes is not None:
        consts.append(np.asarray(sizes, np.int64))
    return model("Resize", {"x": shape}, consts, attrs=attrs, opset=opset)


CASES = {
    "nearest-2x-native": resize([1, 3, 4, 5], scales=[1, 1, 2, 2]),
    "nearest-2x3x-asym-floor": resize([2, 2, 3, 4], scales=[1, 1, 2, 3], coordinate_transformation_mode="asymmetric",
                                      nearest_mode="floor"),
    "nearest-fractional-up": resize([1, 2, 4, 4], sizes=[1, 2, 7, 9], nearest_mode="round_prefer_ceil"),
    "nearest-down-half": resize([1, 2, 8, 8], scales=[1, 1, 0.5, 0.5]),
    "nearest-align-corners-ceil": resize([1, 1, 3, 5], sizes=[1, 1, 7, 4], coordinate_transformation_mode="align_corners",
                                         nearest_mode="ceil"),
    "nearest-channels": resize([1, 3, 4, 4], scales=[1, 2, 1, 1]),
    "nearest-3d-axes": resize([1, 2, 5], scales=[3.0], axes=[2]),
    "linear-half-pixel": resize([1, 3, 5, 6], scales=[1, 1, 2, 2], mode="linear"),
    "linear-align-corners": resize([2, 2, 4, 4], sizes=[2, 2, 7, 9], mode="linear",
                                   coordinate_transformation_mode="align_corners"),
    "linear-asymmetric": resize([1, 2, 4, 6], scales=[1, 1, 1.5, 0.5], mode="linear",
                                coordinate_transformation_mode="asymmetric"),
    "linear-pytorch-half-pixel": resize([1, 2, 6, 6], sizes=[1, 2, 3, 1], mode="linear",
                                        coordinate_transformation_mode="pytorch_half_pixel"),
    "linear-antialias": resize([1, 1, 8, 8], scales=[1, 1, 0.4, 0.6], mode="linear", antialias=1),
    "cubic-exclude-outside": resize([1, 1, 5, 5], scales=[1, 1, 1.6, 0.8], mode="cubic", exclude_outside=1,
                                    cubic_coeff_a=-0.5),
    "tf-crop-extrapolate": resize([1, 1, 6, 6], sizes=[1, 1, 4, 5], roi=[0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3],
                                  mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                                  extrapolation_value=2.5),
    "not-larger": resize([1, 1, 4, 6], sizes=[8, 9], axes=[2, 3], keep_aspect_ratio_policy="not_larger"),
    "opset10-nearest": model("Resize", {"x": [1, 2, 3, 3]}, [np.array([1, 1, 2, 1.5], F32)], opset=10),
    "opset11-linear": resize([1, 2, 4, 4], scales=[1, 1, 2, 2], mode="linear", opset=11),
    "upsample7-linear": model("Upsample", {"x": [1, 2, 3, 4]}, attrs={"mode": "linear", "scales": [1.0, 1.0, 2.0, 2.0]},
                              opset=7),
    "upsample9-nearest": model("Upsample", {"x": [1, 2, 3, 4]}, [np.array([1, 1, 3, 2], F32)], opset=9),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_resize_matches_onnxruntime_fp32(name):
    report = verify(CASES[name], dtype="fp32")
    assert report.passed, report.text()


@pytest.mark.parametrize("name", ["nearest-2x-native", "linear-align-corners", "cubic-exclude-outside"])
def test_resize_matches_onnxruntime_bf16(name):
    report = verify(CASES[name], dtype="bf16")
    assert report.passed, report.text()


def test_integer_nearest_upsampling_uses_ttnn_upsample():
    ops = ttnn_ops(CASES["nearest-2x-native"], dtype="fp32")
    assert ops.count("upsample") == 1 and "matmul" not in ops and "concat" not in ops


def test_nearest_is_data_movement_and_linear_a_matmul_per_axis():
    assert set(ttnn_ops(CASES["nearest-fractional-up"], dtype="fp32")) >= {"slice", "concat"}
    assert "matmul" not in ttnn_ops(CASES["nearest-fractional-up"], dtype="fp32")
    assert ttnn_ops(CASES["nearest-down-half"], dtype="fp32").count("slice") == 2  # one strided slice per axis
    assert "repeat" in ttnn_ops(CASES["nearest-channels"], dtype="fp32")
    assert ttnn_ops(CASES["linear-half-pixel"], dtype="fp32").count("matmul") == 2


def test_coordinate_maps():
    half = ResizeSpec("nearest", "half_pixel", "round_prefer_floor")
    x, outside = source_coordinates(half, 4, 8, 2.0)
    assert outside is None and np.allclose(x[:3], [-0.25, 0.25, 0.75])
    assert nearest_indices(half, x, 4, 2.0).tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    simple = ResizeSpec("nearest", "asymmetric", "simple")  # opset 10: ceil when downscaling
    x, _ = source_coordinates(simple, 5, 2, 0.4)
    assert nearest_indices(simple, x, 5, 0.4).tolist() == [0, 3]


def test_interpolation_rows_sum_to_one_and_clamp_at_the_border():
    spec = ResizeSpec("linear", "half_pixel", "round_prefer_floor")
    x, _ = source_coordinates(spec, 3, 6, 2.0)
    w = interpolation_matrix(spec, x, 3, 2.0)
    assert w.shape == (6, 3) and np.allclose(w.sum(axis=1), 1.0)
    assert np.allclose(w[0], [1, 0, 0]) and np.allclose(w[1], [0.75, 0.25, 0])


def test_runtime_scales_are_refused():
    m = model("Resize", {"x": [1, 1, 2, 2], "s": [4]}, [], opset=19)
    m.graph.node[0].input[:] = ["x", "", "s"]
    with pytest.raises(ConversionError, match="scales must be a constant"):
        ttnn_ops(m)


def test_antialias_nearest_is_refused():
    with pytest.raises(ConversionError, match="antialias"):
        ttnn_ops(resize([1, 1, 4, 4], scales=[1, 1, 0.5, 0.5], antialias=1))


def test_cubic_pytorch_half_pixel_to_one_element_samples_coordinate_0():
    """Found by the fuzzer (seed 7 case 417): the spec and onnxruntime map an output of length 1 to input
    coordinate 0 (onnx's reference implementation says -0.5); a cubic kernel around -0.5 weighs the first rows
    differently, a PCC of 0.98 against onnxruntime."""
    m = resize([8, 1, 3, 1], sizes=[8, 1, 1, 5], mode="cubic", coordinate_transformation_mode="pytorch_half_pixel")
    report = verify(m, dtype="fp32")
    assert report.passed and report.outputs[0].max_abs < 1e-4, report.text()


@pytest.mark.parametrize("mode", ["linear", "cubic", "nearest"])
@pytest.mark.parametrize("scale", [0.5, 0.4])
def test_pytorch_half_pixel_to_one_row_by_a_scale_samples_the_first_row(mode, scale):
    """Found by the fuzzer (seed 47 case 495): a scale of 0.5 on 3 rows gives one row (a length of 1.5 before
    flooring); onnxruntime samples coordinate 0, the spec's value for an output of length 1, where the program
    sampled 0.5 (the mean of rows 0 and 1)."""
    import onnxruntime

    from tests.program_run import run

    m = resize([1, 1, 3, 8], scales=[1, 1, scale, 1], mode=mode, coordinate_transformation_mode="pytorch_half_pixel")
    x = np.random.default_rng(0).standard_normal((1, 1, 3, 8)).astype(F32)
    want = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]
    np.testing.assert_array_equal(want, x[:, :, :1])
    outputs, leaks, _ = run(m, {"x": x})
    np.testing.assert_allclose(outputs["y"].numpy(), want, atol=1e-6)
    assert leaks == []


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("scale", [0.7, 1.3])
@pytest.mark.parametrize("coordinates", ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                         "asymmetric", "tf_crop_and_resize"])
def test_a_scale_giving_a_fractional_length_matches_onnxruntime(coordinates, scale, mode):
    """A scale of 0.7 (1.3) on 5 rows gives 3.5 (6.5) rows, floored to 3 (6).  align_corners and
    tf_crop_and_resize divided by the un-rounded length minus 1 (onnx's reference implementation) where the
    spec's length_resized and onnxruntime take the integer one: PCC 0.21 (0.7) to 0.84 (1.3) here."""
    roi = [0, 0, 0, 0, 1, 1, 1, 1] if coordinates == "tf_crop_and_resize" else None
    m = resize([1, 1, 5, 5], scales=[1, 1, scale, scale], roi=roi, mode=mode,
               coordinate_transformation_mode=coordinates)
    x = np.random.default_rng(1).standard_normal((1, 1, 5, 5)).astype(F32)
    report = verify(m, inputs={"x": x}, dtype="fp32")
    assert report.passed and report.outputs[0].max_abs < 1e-6, report.text()
