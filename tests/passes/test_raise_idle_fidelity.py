"""raise-idle-fidelity: a block-float conv that is not compute-bound at HiFi4 runs at HiFi4, where it reads every
bit of its activation (HiFi2's truncated bit scales every result by about 0.9972); a compute-bound one keeps
HiFi2, and a forced --math-fidelity is left alone."""
from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
from tests.program_run import run


def _conv(channels: int, side: int):
    """One 3x3 conv, channels -> channels, on a side x side image."""
    w = (np.random.default_rng(0).standard_normal((channels, channels, 3, 3)) * 0.05).astype(np.float32)
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], "conv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, side, side])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _fidelity(conversion) -> str:
    return next(n for n in conversion.module.graph.nodes if n.op == "conv2d").attrs["compute_config"].math_fidelity


def test_a_memory_bound_block_float_conv_is_raised_to_hifi4():
    conversion = onnx2ttnn.convert(_conv(16, 16), weights="bfp8")
    assert _fidelity(conversion) == "HiFi4"
    assert conversion.module.notes["raise-idle-fidelity"] == {"raised": 1, "kept": 0}
    assert "weights_dtype=ttnn.bfloat8_b" in conversion.source and "compute_config=hifi4" in conversion.source


def test_a_compute_bound_conv_keeps_hifi2():
    conversion = onnx2ttnn.convert(_conv(64, 56), weights="bfp8")  # 3x3, 64 channels, 56x56: the matrix engine
    assert _fidelity(conversion) == "HiFi2"
    assert conversion.module.notes["raise-idle-fidelity"] == {"raised": 0, "kept": 1}


@pytest.mark.parametrize("fidelity", ["hifi2", "lofi"])
def test_a_forced_fidelity_is_left_as_asked(fidelity):
    conversion = onnx2ttnn.convert(_conv(16, 16), weights="bfp8", math_fidelity=fidelity)
    assert _fidelity(conversion) == {"hifi2": "HiFi2", "lofi": "LoFi"}[fidelity]
    assert "raise-idle-fidelity" not in conversion.module.notes


def test_bf16_weights_are_not_touched():
    conversion = onnx2ttnn.convert(_conv(16, 16), weights="bf16")
    assert _fidelity(conversion) == "HiFi4"
    assert conversion.module.notes["raise-idle-fidelity"] == {"raised": 0, "kept": 0}


def _gain(fidelity: str) -> float:
    """The least-squares gain of the simulated bf16 conv's output against onnxruntime's (bfloat8_b weights)."""
    m = _conv(16, 16)
    x = np.random.default_rng(1).standard_normal((1, 16, 16, 16)).astype(np.float32)
    x = (x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)  # bf16 values: the upload is exact
    outputs, leaks, _ = run(m, {"x": x}, dtype="bf16", weights="bfp8", math_fidelity=fidelity)
    assert leaks == []
    got = outputs["y"].float().numpy().astype(np.float64)
    session = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(["y"], {"x": x})[0].astype(np.float64)
    return float((got * want).sum() / (want * want).sum())


def test_the_raised_conv_has_no_systematic_gain():
    """At HiFi2 every product reads the activation's top 6 mantissa bits, truncated: the result is about 0.28 %
    small (docs/design.md §6.42); at HiFi4 only the weights' and the result's roundings remain, unbiased."""
    assert _gain("hifi2") == pytest.approx(1 - 2.0 ** -8 / (2 * np.log(2)), abs=1e-3)
    assert abs(_gain("auto") - 1.0) < 5e-4
