"""The weights file: a dequantized weight stored as its integer codes and scales, multiplied back bit for bit
at load; weights that do not factor exactly stay float32."""
from __future__ import annotations

import io

import numpy as np
import onnx

from onnx2ttnn.convert import convert
from onnx2ttnn.emit.weights import compact_weight, expand_blocks, npz_bytes
from onnx2ttnn.verify import verify
from tests.lowering.test_quantize import I8, _const, _model, qdq_linear
from onnx import TensorProto, helper

rng = np.random.default_rng(3)


def _load(conversion):
    """The weights as the program's load_parameters reads them: the file's bytes, then dequantized_weight."""
    namespace: dict = {}
    exec(compile("import numpy\n" + _helper(conversion.source), "<program>", "exec"), namespace)
    data = np.load(io.BytesIO(npz_bytes(conversion.program.weights)), allow_pickle=False)
    return data, namespace.get("dequantized_weight")


def _helper(source: str) -> str:
    lines = source.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("def dequantized_weight(")), None)
    if start is None:
        return ""
    end = next(i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" "))
    return "\n".join(lines[start:end]) + "\n"


def test_a_dequantized_weight_is_stored_as_int8_codes_and_scales():
    weight = rng.integers(-127, 128, (64, 32)).astype(np.int8)
    scales = rng.uniform(0.001, 0.02, 32).astype(np.float32)
    model = qdq_linear(weight=weight, w_scale=scales)
    conversion = convert(model)
    stored = conversion.program.weights
    assert "wd" not in stored and stored["wd.codes"].dtype == np.int8 and stored["wd.scale"].dtype == np.float32
    assert (stored["wd.codes"] == weight).all() and stored["wd.scale"].shape == (1, 32)
    data, dequantized_weight = _load(conversion)
    folded = weight.astype(np.float32) * scales  # what fold-dequantize computes (zero point 0)
    assert dequantized_weight(data, "wd").tobytes() == folded.tobytes()
    assert "torch.from_numpy(dequantized_weight(data, 'wd'))" in conversion.source
    assert conversion.weight_bytes() < folded.nbytes / 3
    assert verify(model, conversion=conversion).passed


def test_a_uint8_weight_with_a_zero_point_is_stored_as_int16_centred_codes():
    n = 16
    nodes = [helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], name="dq_w", axis=1),
             helper.make_node("MatMul", ["x", "wd"], ["y"], name="mm")]
    codes = rng.integers(0, 256, (32, n)).astype(np.uint8)
    zeros = np.full(n, 3, np.uint8)
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, n])],
                   [_const("w", codes), _const("ws", np.full(n, 0.01, np.float32)), _const("wz", zeros)])
    conversion = convert(model)
    stored = conversion.program.weights
    assert stored["wd.codes"].dtype == np.int16
    assert (stored["wd.codes"] == codes.astype(np.int16) - 3).all()
    assert verify(model, conversion=conversion).passed


def test_a_gemm_transposed_weight_finds_its_scales_along_the_other_axis():
    n, k = 24, 48
    weight = rng.integers(-127, 128, (n, k)).astype(np.int8)  # Gemm transB: [N, K], scales along N (axis 0)
    nodes = [helper.make_node("DequantizeLinear", ["w", "ws"], ["wd"], name="dq_w", axis=0),
             helper.make_node("Gemm", ["x", "wd"], ["y"], name="fc", transB=1)]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, k])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, n])],
                   [_const("w", weight), _const("ws", rng.uniform(0.01, 0.02, n).astype(np.float32))])
    conversion = convert(model)
    stored = conversion.program.weights
    assert stored["wd_t.codes"].shape == (k, n) and (stored["wd_t.codes"] == weight.T).all()
    assert verify(model, conversion=conversion).passed


def test_a_weight_scaled_after_folding_stays_float32():
    n, k = 8, 16
    nodes = [helper.make_node("DequantizeLinear", ["w", "ws"], ["wd"], name="dq_w", axis=0),
             helper.make_node("Gemm", ["x", "wd"], ["y"], name="fc", transB=1, alpha=0.3)]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, k])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, n])],
                   [_const("w", rng.integers(-127, 128, (n, k)).astype(np.int8)),
                    _const("ws", rng.uniform(0.01, 0.02, n).astype(np.float32))])
    conversion = convert(model)
    stored = conversion.program.weights
    assert not any(key.endswith(".codes") for key in stored)
    assert stored["wd_t"].dtype == np.float32 and "dequantized_weight" not in conversion.source


def test_compact_weight_refuses_what_it_cannot_give_back_exactly():
    scale = np.array([0.5, 0.25], np.float32)
    codes = np.array([[3, -4], [127, 0]], np.int8)
    value = codes.astype(np.float32) * scale
    found = compact_weight(value, scale.reshape(1, 2))
    assert found is not None and (found[0] == codes).all() and found[0].dtype == np.int8 and found[2] is None
    assert compact_weight(value + np.float32(0.1), scale.reshape(1, 2)) is None  # not on the grid
    assert compact_weight(value * np.float32(1000), scale.reshape(1, 2)) is None  # codes past 16 bits
    assert compact_weight(value.astype(np.float64), scale.reshape(1, 2)) is None  # not a float32 weight


def test_blocked_scales_are_stored_one_per_block():
    rng = np.random.default_rng(5)
    blocks = rng.uniform(0.01, 0.1, (3, 5)).astype(np.float32)  # 3 blocks of 32 along axis 0 (70 rows: 32, 32, 6)
    steps = expand_blocks(blocks, (0, 32), 70)
    codes = rng.integers(-8, 8, (70, 5)).astype(np.int8)
    value = codes.astype(np.float32) * steps
    found = compact_weight(value, steps)
    assert found is not None and found[2] == (0, 32) and found[1].shape == (3, 5)
    assert (found[0] == codes).all()
    mixed = steps.copy()
    mixed[40, 0] *= 2  # not one value per block any more: stays float32
    assert compact_weight(codes.astype(np.float32) * mixed, mixed) is None


def test_the_conversion_summary_counts_a_compact_weight_once(tmp_path):
    from tests.test_cli import run_inprocess

    onnx.save(qdq_linear(), tmp_path / "q.onnx")
    run = run_inprocess(["convert", "q.onnx", "-o", "q_ttnn.py"], tmp_path)
    assert run.code == 0, run.stderr
    summary = run.stdout + run.stderr
    assert "weights: 1 tensors, " in summary and "(1 as integer codes and scales)" in summary
