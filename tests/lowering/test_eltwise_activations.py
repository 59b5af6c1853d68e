"""Activation lowering rules (lowering/activations.py): ONNX parameters reach ttnn, or are composed.

One-node models run on the simulator (fp32) against onnxruntime; each test also checks which ttnn ops the
rule chose (e.g. ttnn.hardsigmoid only for its own constants) and that the program fits the API manifest.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.lowering.test_eltwise import check, f32, model, rng, run
from tests.program_run import forward_text
from tests.ttnn_api import check_source


@pytest.mark.parametrize("attrs", [{}, {"alpha": 0.5, "beta": 0.6}])
def test_hardsigmoid_with_onnx_constants_is_composed(tmp_path, attrs):
    feeds = {"x": f32(3, 4, 5, scale=3)}
    check(model("HardSigmoid", feeds, attrs=attrs), feeds, tmp_path, calls=["multiply", "add", "clip"],
          absent=["hardsigmoid"])


def test_hardsigmoid_with_torch_constants_uses_ttnn_hardsigmoid(tmp_path):
    feeds = {"x": f32(3, 40, scale=4)}
    check(model("HardSigmoid", feeds, attrs={"alpha": 1.0 / 6.0, "beta": 0.5}), feeds, tmp_path,
          calls=["hardsigmoid"], absent=["clip"])


@pytest.mark.parametrize("op,attrs,ttnn_op,param", [
    ("LeakyRelu", {}, "leaky_relu", "negative_slope=0.01"),
    ("LeakyRelu", {"alpha": 0.2}, "leaky_relu", "negative_slope=0.2"),
    ("Elu", {"alpha": 2.0}, "elu", "alpha=2.0"),
    ("Celu", {"alpha": 2.0}, "celu", "alpha=2.0"),
    ("Selu", {}, "selu", "scale=1.0507010221481323"),
    ("Selu", {"alpha": 2.0, "gamma": 3.0}, "selu", "scale=3.0"),
    ("ThresholdedRelu", {"alpha": 0.5}, "threshold", "threshold=0.5"),
    ("ThresholdedRelu", {}, "threshold", "threshold=1.0"),
    ("Softplus", {}, "softplus", "beta=1.0"),
    ("Softsign", {}, "softsign", ""),
    ("Mish", {}, "mish", ""),
    ("HardSwish", {}, "hardswish", ""),
])
def test_parametrised_activation(tmp_path, op, attrs, ttnn_op, param):
    feeds = {"x": f32(3, 4, 5, scale=3)}
    source = check(model(op, feeds, attrs=attrs), feeds, tmp_path, calls=[ttnn_op])
    assert param in source


def test_selu_default_alpha_is_onnx_float32_constant(tmp_path):
    feeds = {"x": f32(200, scale=3)}
    source = check(model("Selu", feeds), feeds, tmp_path, calls=["selu"])
    assert "alpha=1.6732631921768188" in source


def test_prelu_with_a_scalar_slope_is_leaky_relu(tmp_path):
    feeds = {"x": f32(3, 40)}
    check(model("PRelu", feeds, consts={"s": np.array([0.25], np.float32)}), feeds, tmp_path,
          calls=["leaky_relu"], absent=["minimum"])


@pytest.mark.parametrize("slope_shape", [(5,), (3, 4, 5)])
def test_prelu_with_a_slope_tensor_broadcasts(tmp_path, slope_shape):
    """A slope computed at run time may be infinite: the rule selects (see the next test)."""
    feeds = {"x": f32(3, 4, 5), "s": f32(*slope_shape)}
    check(model("PRelu", feeds), feeds, tmp_path, calls=["lt", "multiply", "where"], absent=["minimum"])


@pytest.mark.parametrize("slope_shape", [(5,), (3, 4, 5)])
def test_prelu_with_a_finite_constant_slope_is_composed(tmp_path, slope_shape):
    feeds = {"x": f32(3, 4, 5)}
    check(model("PRelu", feeds, consts={"s": f32(*slope_shape)}), feeds, tmp_path,
          calls=["relu", "minimum", "multiply", "add"], absent=["where"])


@pytest.mark.parametrize("slope", [np.array([0.5, np.inf, -np.inf, np.nan, 2.0], np.float32),
                                   np.array([np.inf], np.float32)])
def test_prelu_with_an_infinite_slope_gives_x_where_x_is_not_negative(tmp_path, slope):
    """Found by the fuzzer (seed 61 case 1494: PRelu(|x|, slope) with one slope inf): the spec's PRelu is x for
    x >= 0 whatever the slope; relu(x) + slope * min(x, 0) made inf * 0 = NaN there (onnxruntime: x)."""
    x = np.array([[-2.0, 0.0, 3.0, -1.0, 0.5], [1.0, -3.0, -0.0, 4.0, -0.25]], np.float32)
    feeds = {"x": x}
    got, want, source = run(model("PRelu", feeds, consts={"s": slope}), feeds, tmp_path)
    np.testing.assert_array_equal(got[x >= 0], x[x >= 0])
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
    assert "ttnn.where(" in source and "ttnn.leaky_relu(" not in source


def test_prelu_after_conv_stays_in_nhwc(tmp_path):
    """A per-channel slope [C,1,1] after a Conv is applied in the flattened NHWC form (no permute back)."""
    weight = numpy_helper.from_array(f32(4, 3, 3, 3), "w")
    slope = numpy_helper.from_array(np.abs(f32(4, 1, 1)), "s")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("PRelu", ["c", "s"], ["p"]),
             helper.make_node("Conv", ["p", "w2"], ["y"], pads=[1, 1, 1, 1])]
    weight2 = numpy_helper.from_array(f32(4, 4, 3, 3), "w2")
    graph = helper.make_graph(nodes, "conv_prelu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [weight, slope, weight2])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    feeds = {"x": f32(1, 3, 8, 8)}
    got, want, source = run(m, feeds, tmp_path)
    assert np.abs(got - want).max() < 0.01 * np.abs(want).max()  # conv weights are bf16 on the device
    assert forward_text(source).count("ttnn.permute(") == 2  # NCHW -> NHWC at the input, back at the output only


@pytest.mark.parametrize("attrs,ttnn_op", [({"lambd": 1.5}, "hardshrink"),
                                           ({"lambd": 1.5, "bias": 1.5}, "softshrink"),
                                           ({"lambd": 1.0, "bias": 0.25}, "hardshrink")])
def test_shrink(tmp_path, attrs, ttnn_op):
    feeds = {"x": np.concatenate([np.linspace(-3, 3, 25, dtype=np.float32), f32(15, scale=2)])}
    check(model("Shrink", feeds, attrs=attrs), feeds, tmp_path, calls=[ttnn_op])


@pytest.mark.parametrize("attrs", [{"lambd": -1e9, "bias": 0.2}, {"lambd": -0.5, "bias": -0.5},
                                   {"lambd": -0.5}, {"lambd": -1.0, "bias": 1e9}])
def test_shrink_with_a_negative_lambd_switches_bias_at_minus_lambd(tmp_path, attrs):
    """lambd < 0: x + bias below -lambd, x - bias from there on (both of the spec's conditions hold between
    lambd and -lambd, the first wins; no 0 anywhere).  Fuzz seed 107 case 810: lambd -1e9 gave x - bias for
    x > 0; bias = lambd < 0 crashed the simulator's softshrink."""
    feeds = {"x": np.concatenate([np.linspace(-3, 3, 25, dtype=np.float32), f32(15, scale=2)])}
    check(model("Shrink", feeds, attrs=attrs), feeds, tmp_path, absent=["hardshrink", "softshrink"])


def test_gelu_tanh_approximation(tmp_path):
    feeds = {"x": f32(4, 40, scale=2)}
    source = check(model("Gelu", feeds, attrs={"approximate": "tanh"}, opset=20), feeds, tmp_path, calls=["gelu"])
    assert "variant=ttnn.GeluVariant.Tanh" in source  # not fast_and_approximate_mode=True: the FastLut kernel
    assert "fast_and_approximate_mode" not in source


def test_elu_negative_inputs_only(tmp_path):
    feeds = {"x": -np.abs(f32(64, scale=4))}
    check(model("Elu", feeds, attrs={"alpha": 0.5}), feeds, tmp_path)


def test_celu_and_selu_keep_positive_inputs(tmp_path):
    feeds = {"x": np.abs(rng.standard_normal(50)).astype(np.float32)}
    check(model("Celu", feeds, attrs={"alpha": 3.0}), feeds, tmp_path)


def test_celu_with_alpha_0_runs_on_the_host_as_onnxruntime_computes_it():
    """Fuzz seed 71 case 680: Celu alpha 0 crashed the simulator (torch's celu refuses it).  The rule declines
    it; the host fallback's formula gives onnxruntime's values: 0 below zero, NaN from zero on (x / 0)."""
    from onnx2ttnn.convert import convert
    from onnx2ttnn.verify import verify

    feeds = {"x": np.array([-2.0, -0.1, 0.0, 0.1, 3.0], np.float32)}
    for alpha in (0.0, float("inf")):  # (seed 83 case 1228: alpha inf, inf * 0 in the formula)
        m = model("Celu", feeds, attrs={"alpha": alpha})
        assert "ttnn.celu" not in convert(m, dtype="fp32").source
        report = verify(m, inputs=feeds, dtype="fp32")
        assert report.passed, report.text()


def test_neg_of_an_argmin_is_signed():
    """Fuzz seed 103 case 888: Neg of an ArgMin (uint32 on the device) crashed the simulator as it would real
    ttnn ("ttnn.neg: unsupported dtype DataType::UINT32"); the indices are int32 first."""
    from onnx import TensorProto as T, helper as h

    from onnx2ttnn.verify import verify

    nodes = [h.make_node("ArgMin", ["x"], ["i"], axis=1, keepdims=0), h.make_node("Neg", ["i"], ["n"]),
             h.make_node("Cast", ["n"], ["y"], to=T.FLOAT)]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [3, 4])],
                         [h.make_tensor_value_info("y", T.FLOAT, [3])])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    for dtype in ("fp32", "bf16"):
        report = verify(m, dtype=dtype)
        assert report.passed, report.text()


def test_sign_keeps_a_nan(tmp_path):
    """Fuzz seed 137 case 240: Sign of NaN (Tan of inf) gave 0, the simulator's torch sign; onnxruntime and the
    spec's numpy give NaN, and so does the program now; +-inf, 0 and finite values keep their signs."""
    feeds = {"x": np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 2.5, -1e-30, 3e38], np.float32)}
    got, want, source = run(model("Sign", feeds), feeds, tmp_path)
    np.testing.assert_array_equal(got, want)  # (NaNs at the same places count as equal)
    assert np.isnan(got[0])
    assert "ttnn.isnan(" in source and check_source(source) == []
