"""lowering/quantize.py `quantize_dequantize`: an activation's fused Q -> DQ pair of 8-bit codes is two ttnn calls,
`divide(x, s)` and `multiply(q, s, input_tensor_a_activations=[ROUND, HARDTANH])` (docs/ttnn-facts.md §41), with
ONNX's numerics (halves to even, saturation at the codes' range); wider codes keep divide, round, clip, multiply."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from onnx2ttnn.convert import convert
from onnx2ttnn.verify import verify
from tests.lowering.test_quantize import _const, _model

F = TensorProto.FLOAT
V = helper.make_tensor_value_info
ROUND = "ttnn.UnaryWithParam(ttnn.UnaryOpType.ROUND, 0.0)"


def pair_then_relu(zero, opset=17):
    """x -> Q -> DQ -> Relu -> y, scale 0.5 and the given zero point (its type the codes'; 16-bit: opset 21)."""
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q"),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq"),
             helper.make_node("Relu", ["xd"], ["y"], name="relu")]
    return _model(nodes, [V("x", F, [4, 32])], [V("y", F, [4, 32])], [_const("s", np.float32(0.5)),
                                                                     _const("z", zero)], opset)


def _ops(conversion):
    return [n.op for n in conversion.module.graph.nodes if not n.attrs.get("_param")]


# ties of x / s (0.25 / 0.5 = 0.5 -> 0, 0.75 -> 2, -1.25 -> -2), saturation at both ends of the codes' range
EDGES = np.array([0.25, 0.75, -1.25, 1.75, 1000.0, -1000.0, 63.25, -64.75], np.float32)


@pytest.mark.parametrize("zero, bounds", [(np.uint8(100), "-100.0, 155.0"), (np.int8(-3), "-125.0, 130.0")])
def test_an_8_bit_pair_is_two_calls_with_onnx_numerics(zero, bounds):
    model = pair_then_relu(zero)
    conversion = convert(model, dtype="fp32")
    ops = _ops(conversion)
    assert ops.count("divide") == 1 and ops.count("multiply") == 1
    assert "round" not in ops and "clip" not in ops
    assert f"input_tensor_a_activations=[{ROUND}, ttnn.UnaryWithParam(ttnn.UnaryOpType.HARDTANH, {bounds})]" \
        in conversion.source
    x = np.random.default_rng(3).normal(0, 40, (4, 32)).astype(np.float32)
    x[0, :8] = EDGES
    report = verify(model, conversion=conversion, inputs={"x": x})
    assert report.passed and report.outputs[0].max_abs == 0.0, report  # float32: onnxruntime's values exactly


def test_the_bf16_pair_computes_what_the_four_calls_did():
    """Same model, bf16: the two-call pair gives the values of divide, round, clip, multiply in the simulator."""
    from onnx2ttnn import sim as ttnn

    model = pair_then_relu(np.uint8(128))
    assert verify(model, conversion=convert(model)).passed
    device = ttnn.open_device(device_id=0)
    try:
        x = np.random.default_rng(4).normal(0, 40, (1, 1, 32, 64)).astype(np.float32)
        t = ttnn.from_torch(__import__("torch").from_numpy(x), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                            device=device)
        q = ttnn.divide(t, 0.5)
        U, T = ttnn.UnaryWithParam, ttnn.UnaryOpType
        two = ttnn.multiply(q, 0.5, input_tensor_a_activations=[U(T.ROUND, 0.0), U(T.HARDTANH, -128.0, 127.0)])
        four = ttnn.multiply(ttnn.clip(ttnn.round(q), min=-128.0, max=127.0), 0.5)
        assert (ttnn.to_torch(two) == ttnn.to_torch(four)).all()
    finally:
        ttnn.close_device(device)


def test_16_bit_codes_keep_the_four_calls():
    conversion = convert(pair_then_relu(np.uint16(1000), opset=21))
    ops = _ops(conversion)
    assert ops.count("round") == 1 and ops.count("clip") == 1 and "input_tensor_a_activations" not in \
        conversion.source
