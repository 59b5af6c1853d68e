"""Quantized operands the matrix engine reads whole in a float32 program (docs/design.md §6.40): the attention's
MatMul of two quantize-dequantize pairs on their codes (fusion/coded_matmul.py, lowering/coded_matmul.py), a QDQ
conv on its weight's integer codes (lowering/weight_codes.conv_codes).  The device reads a float32 operand as
TF32 (ttnn-facts §48), which the simulator models under ONNX2TTNN_SIM_TF32=1: dequantized values lose their low
mantissa bits there, codes do not, so the results stay onnxruntime's to float32 rounding."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from tests.program_run import run

F = TensorProto.FLOAT
V = helper.make_tensor_value_info
SCALE_A, SCALE_B = 0.0123457, 0.0345679  # long mantissas: c * s needs more than TF32's 10 bits


def _model(nodes, inputs, output, constants):
    graph = helper.make_graph(nodes, "m", inputs, [output],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in constants.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _pair(x, scale, out):
    return [helper.make_node("QuantizeLinear", [x, scale, "zero"], [out + "_q"]),
            helper.make_node("DequantizeLinear", [out + "_q", scale, "zero"], [out])]


def _reference(model, feeds):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def _attention_scores():
    """y = QDQ(a) @ Transpose(QDQ(b)): the K^T of attention reaches its MatMul through a Transpose."""
    nodes = [*_pair("a", "sa", "qa"), *_pair("b", "sb", "qb"),
             helper.make_node("Transpose", ["qb"], ["kt"], perm=[1, 0]), helper.make_node("MatMul", ["qa", "kt"], ["y"])]
    return _model(nodes, [V("a", F, [32, 64]), V("b", F, [48, 64])], V("y", F, [32, 48]),
                  {"sa": np.float32(SCALE_A), "sb": np.float32(SCALE_B), "zero": np.int8(0)})


def _qdq_conv():
    """A conv whose weight is dequantized per output channel at scales of long mantissas (k * s: 24 bits)."""
    rng = np.random.default_rng(3)
    codes = rng.integers(-127, 128, (8, 3, 4, 4)).astype(np.int8)
    nodes = [helper.make_node("DequantizeLinear", ["w_codes", "sw", "w_zero"], ["w"], axis=0),
             helper.make_node("Conv", ["x", "w", "bias"], ["y"], strides=[4, 4])]
    constants = {"w_codes": codes, "w_zero": np.zeros(8, np.int8),
                 "sw": (rng.uniform(0.001, 0.01, 8)).astype(np.float32), "bias": rng.standard_normal(8).astype(np.float32)}
    return _model(nodes, [V("x", F, [1, 3, 16, 16])], V("y", F, [1, 8, 4, 4]), constants)


def _worst_relative(got, want):
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


def test_a_matmul_of_two_pairs_multiplies_their_codes(monkeypatch):
    model = _attention_scores()
    rng = np.random.default_rng(0)
    feeds = {"a": rng.standard_normal((32, 64)).astype(np.float32), "b": rng.standard_normal((48, 64)).astype(np.float32)}
    conversion = convert(model, dtype="fp32")
    assert conversion.module.notes["fuse-patterns"]["applied"].get("coded-matmul") == 1
    scale = float(np.float32(SCALE_A) * np.float32(SCALE_B))
    assert "ttnn.matmul(y_a_codes, y_b_codes" in conversion.source and f"(y_codes_product, {scale!r}" in conversion.source
    assert "coded-matmul" not in convert(model, dtype="bf16").module.notes["fuse-patterns"]["applied"]
    monkeypatch.setenv("ONNX2TTNN_SIM_TF32", "1")
    got, leaked, _ = run(model, feeds)
    assert leaked == [] and _worst_relative(got["y"].numpy(), _reference(model, feeds)) < 1e-6


def test_a_qdq_conv_runs_on_its_weight_codes(monkeypatch):
    model = _qdq_conv()
    # an input TF32 holds whole (small integers): what is left to lose is the weight's, which the codes keep
    feeds = {"x": np.random.default_rng(1).integers(-8, 9, (1, 3, 16, 16)).astype(np.float32)}
    formats = convert(model, dtype="fp32").quantized_weights()
    assert formats["w"] == ("f32", "integer codes (exact), the scale applied after the conv")
    monkeypatch.setenv("ONNX2TTNN_SIM_TF32", "1")
    got, leaked, _ = run(model, feeds)
    assert leaked == [] and _worst_relative(got["y"].numpy(), _reference(model, feeds)) < 1e-6


def _pair_into_a_linear():
    """y = Gemm(Reshape(QDQ(x)), DQ(w), bias, transB=1): a pair's value reaches a linear on its weight's codes
    through a Reshape (as quantize_static writes a transformer's projections)."""
    rng = np.random.default_rng(4)
    nodes = [*_pair("x", "sx", "qx"), helper.make_node("Reshape", ["qx", "shape"], ["flat"]),
             helper.make_node("DequantizeLinear", ["w_codes", "sw", "w_zero"], ["w"], axis=0),
             helper.make_node("Gemm", ["flat", "w", "bias"], ["y"], transB=1)]
    constants = {"sx": np.float32(SCALE_A), "zero": np.int8(0), "shape": np.array([64, 64], np.int64),
                 "w_codes": rng.integers(-127, 128, (32, 64)).astype(np.int8), "w_zero": np.zeros(32, np.int8),
                 "sw": rng.uniform(0.001, 0.01, 32).astype(np.float32), "bias": rng.standard_normal(32).astype(np.float32)}
    return _model(nodes, [V("x", F, [2, 32, 64])], V("y", F, [64, 32]), constants)


def test_a_pair_read_by_a_coded_linear_gives_it_codes(monkeypatch):
    model = _pair_into_a_linear()
    feeds = {"x": np.random.default_rng(2).standard_normal((2, 32, 64)).astype(np.float32)}
    source = convert(model, dtype="fp32").source
    assert "qx_codes = ttnn.multiply(" in source and "1.0, input_tensor_a_activations" in source
    monkeypatch.setenv("ONNX2TTNN_SIM_TF32", "1")
    got, leaked, _ = run(model, feeds)
    assert leaked == [] and _worst_relative(got["y"].numpy(), _reference(model, feeds)) < 1e-6


def test_a_gemm_with_a_full_c_reads_the_pairs_value():
    """Gemm(QDQ(x), DQ(w), C, transB=1) with C of the output's full [M, N] shape takes gemm's general path (a
    matmul and an add, no linear on codes): the pair gives its value there (it gave its codes, unscaled, and the
    program was PCC 0.95 off), and a call that reads codes after all multiplies the scale back first."""
    rng = np.random.default_rng(5)
    nodes = [*_pair("x", "sx", "qx"),
             helper.make_node("DequantizeLinear", ["w_codes", "sw", "w_zero"], ["w"], axis=0),
             helper.make_node("Gemm", ["qx", "w", "c"], ["y"], transB=1)]
    constants = {"sx": np.float32(SCALE_A), "zero": np.int8(0), "w_zero": np.zeros(32, np.int8),
                 "w_codes": rng.integers(-127, 128, (32, 64)).astype(np.int8),
                 "sw": rng.uniform(0.001, 0.01, 32).astype(np.float32), "c": rng.standard_normal((64, 32)).astype(np.float32)}
    model = _model(nodes, [V("x", F, [64, 64])], V("y", F, [64, 32]), constants)
    feeds = {"x": rng.standard_normal((64, 64)).astype(np.float32)}
    got, leaked, _ = run(model, feeds)
    assert leaked == [] and _worst_relative(got["y"].numpy(), _reference(model, feeds)) < 1e-5
