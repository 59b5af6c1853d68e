"""QLinearMatMul and QLinearConv (onnx2ttnn/lowering/quantize_operators.py): in float32 programs their codes are
onnxruntime's, ties included; onnxruntime requantizes the exact integer accumulator times one float32
multiplier x_scale * w_scale / y_scale, and the dequantize -> float op -> quantize chain they were lowered as
rounded such ties apart by one code (QLinearMatMul of every product of codes, x_scale 0.05, w_scale 0.05,
y_scale 0.25: 760 of 65280 codes)."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from tests.program_run import run

U8, I8 = TensorProto.UINT8, TensorProto.INT8
rng = np.random.default_rng(5)


def _model(node, x_shape, y_shape, inits):
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", U8, x_shape)],
                              [helper.make_tensor_value_info("y", U8, y_shape)],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _onnxruntime(model, x):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _matmul(w, ws, scales):
    xs, ys = scales
    node = helper.make_node("QLinearMatMul", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"])
    inits = {"xs": np.float32(xs), "xz": np.uint8(128), "w": w, "ws": ws, "wz": np.zeros(ws.shape, np.int8),
             "ys": np.float32(ys), "yz": np.uint8(128)}
    return node, inits


@pytest.mark.parametrize("scales", [(0.05, 0.05, 0.25), (0.1, 0.05, 0.05), (0.02, 0.1, 0.5)])
def test_qlinear_matmul_codes_equal_onnxruntimes_at_every_tie(scales):
    """Every product of a uint8 code (zero point 128) and an int8 code, decimal scales: many real-number ties."""
    xs, ws, ys = scales
    node, inits = _matmul(np.arange(-127, 128, dtype=np.int8)[None, :], np.float32(ws), (xs, ys))
    model = _model(node, [256, 1], [256, 255], inits)
    x = np.arange(256, dtype=np.uint8)[:, None]
    got, _, source = run(model, {"x": x})
    np.testing.assert_array_equal(got["y"].numpy(), _onnxruntime(model, x))
    assert "ttnn.divide" not in source  # one multiplier, not the quantize chain's division


def test_qlinear_matmul_per_column_scales_over_a_long_sum():
    """K = 64 products summed (operands bounded so that onnxruntime's u8s8 kernel without VNNI, whose pairs of
    products saturate at int16, sums them exactly), one weight scale per output column."""
    w = rng.integers(-64, 64, (64, 24)).astype(np.int8)
    node, inits = _matmul(w, rng.choice([0.01, 0.02, 0.05], 24).astype(np.float32), (0.05, 0.5))
    model = _model(node, [16, 64], [16, 24], inits)
    x = rng.integers(0, 256, (16, 64)).astype(np.uint8)
    x = np.clip(x, 64, 191).astype(np.uint8)  # centred codes in [-64, 63]
    got, _, _ = run(model, {"x": x})
    np.testing.assert_array_equal(got["y"].numpy(), _onnxruntime(model, x))


def conv_model():
    """A 3x3 QLinearConv of uint8 x [1, 4, 9, 9], int8 weights with per-channel decimal scales and an int32 bias."""
    w = rng.integers(-64, 64, (8, 4, 3, 3)).astype(np.int8)
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], pads=[1, 1, 1, 1])
    inits = {"xs": np.float32(0.1), "xz": np.uint8(128), "w": w, "ws": rng.choice([0.01, 0.05], 8).astype(np.float32),
             "wz": np.zeros(8, np.int8), "ys": np.float32(0.25), "yz": np.uint8(100),
             "b": rng.integers(-500, 500, 8).astype(np.int32)}
    return _model(node, [1, 4, 9, 9], [1, 8, 9, 9], inits)


def test_qlinear_conv_with_a_bias_and_per_channel_scales_gives_onnxruntimes_codes():
    model = conv_model()
    x = np.clip(rng.integers(0, 256, (1, 4, 9, 9)), 64, 191).astype(np.uint8)
    got, _, _ = run(model, {"x": x})
    np.testing.assert_array_equal(got["y"].numpy(), _onnxruntime(model, x))


def test_bf16_programs_keep_the_dequantize_chain():
    """bfloat16 holds an accumulator to 8 significant bits: no exact multiplier to gain; the chain is kept."""
    node, inits = _matmul(np.arange(-127, 128, dtype=np.int8)[None, :], np.float32(0.05), (0.05, 0.25))
    source = convert(_model(node, [256, 1], [256, 255], inits), dtype="bf16").source
    assert "ttnn.divide" in source and "y_multiplier" not in source
