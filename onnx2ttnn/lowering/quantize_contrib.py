"""com.microsoft's quantized contrib ops on the device: QLinearAdd, QLinearMul (what onnxruntime's
`quantize_static(quant_format=QOperator)` writes for Add and Mul) and MatMulNBits (what its
`MatMulNBitsQuantizer` writes for a MatMul with a constant weight).

- QLinearAdd / QLinearMul: `C = QuantizeLinear(DequantizeLinear(A) op DequantizeLinear(B))` with per-tensor
  scales and zero points, numpy broadcasting: dequantize both (a constant operand is folded on the host), the
  float Add or Mul rule, then the exact round-half-to-even-and-saturate chain of QuantizeLinear
  (lowering/quantize.py) to C's scale and zero point.
- MatMulNBits: `Y = A @ dequantize(B)^T (+ bias)`, B the [N, K] weight in blocks of `block_size` along K, each
  code `bits` wide, packed low bits first into bytes ([N, k_blocks, block_size * bits / 8]); each block has a
  scale and a zero point (packed the same way, default 2^(bits-1)).  The weight is dequantized at conversion
  into a float [K, N] weight, which the linear rule uploads as bfloat8_b when that moves it by less than half
  a quantization step (lowering/weight_dtype.py), else bf16: the device has no 4-bit integer matmul.  Float
  zero points and g_idx (a permutation of K) are declined (a host region runs the node).
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.quantize import bad, optional_input, type_name
from onnx2ttnn.lowering.quantize_operators import (dequantized_operand, float_tensor, helper_node, requantize,
                                                   run_float_rule)
from onnx2ttnn.lowering.registry import FUSED_DOMAIN, register

MS_DOMAIN = "com.microsoft"
NBITS = (2, 4, 8)  # the code widths MatMulNBits packs (a byte holds 8 // bits codes)


def _qlinear_binary(ctx: LoweringContext, node: gs.Node, op: str) -> None:
    """C = Q(DQ(A) op DQ(B)) to C's scale and zero point."""
    if len(node.inputs) < 7:
        raise bad(ctx, f"{node.op} needs A, A_scale, A_zero_point, B, B_scale, B_zero_point and C_scale")
    a, a_scale, b, b_scale, c_scale = node.inputs[0], node.inputs[1], node.inputs[3], node.inputs[4], node.inputs[6]
    out = node.outputs[0]
    fa = dequantized_operand(ctx, node, a, a_scale, optional_input(node, 2), "input A")
    fb = dequantized_operand(ctx, node, b, b_scale, optional_input(node, 5), "input B")
    result = float_tensor(f"{out.name}_float", out.shape)
    run_float_rule(ctx, op, 14, helper_node(op, {}, [fa, fb], [result]))
    requantize(ctx, node, result, c_scale, optional_input(node, 7), out)


@register("QLinearAdd", versions=(1,), domain=MS_DOMAIN, ttnn=("subtract", "multiply", "add", "divide", "round",
                                                                "clip"),
          note="as DequantizeLinear -> Add -> QuantizeLinear; per-tensor scales, uint8 / int8")
def qlinear_add(ctx: LoweringContext, node: gs.Node) -> None:
    """com.microsoft QLinearAdd-1: uint8 / int8 A, B and C, per-tensor scales and zero points (optional)."""
    _qlinear_binary(ctx, node, "Add")


@register("QLinearMul", versions=(1,), domain=MS_DOMAIN, ttnn=("subtract", "multiply", "divide", "round", "add",
                                                                "clip"),
          note="as DequantizeLinear -> Mul -> QuantizeLinear; per-tensor scales, uint8 / int8")
def qlinear_mul(ctx: LoweringContext, node: gs.Node) -> None:
    """com.microsoft QLinearMul-1: as QLinearAdd, with a product."""
    _qlinear_binary(ctx, node, "Mul")


# ---- MatMulNBits ---------------------------------------------------------------------------------------------

def unpack_codes(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """The first `count` codes of each row of `packed` (uint8 [rows, bytes]), `bits` wide, low bits first."""
    per_byte = 8 // bits
    shifts = (np.arange(per_byte, dtype=np.uint8) * bits).astype(np.uint8)
    codes = (packed[..., None] >> shifts) & np.uint8((1 << bits) - 1)
    return codes.reshape(packed.shape[0], -1)[:, :count]


def nbits_weight(ctx, b: np.ndarray, scales: np.ndarray, zeros, k: int, n: int, bits: int,
                 block: int) -> tuple[np.ndarray, np.ndarray]:
    """The float32 [K, N] weight of MatMulNBits and its quantization steps (the scales, broadcast to it)."""
    blocks = -(-k // block)
    if tuple(b.shape) != (n, blocks, block * bits // 8):
        raise bad(ctx, f"B has shape {list(b.shape)}; K={k}, N={n}, bits={bits}, block_size={block} need "
                       f"{[n, blocks, block * bits // 8]}")
    if scales.size != n * blocks:
        raise bad(ctx, f"scales has {scales.size} values; N * k_blocks = {n * blocks} are needed")
    codes = unpack_codes(b.reshape(n, -1), bits, k).astype(np.int32)  # [N, K]
    if zeros is None:
        zero = np.full((n, blocks), 1 << (bits - 1), np.int32)
    else:
        per_row = -(-blocks * bits // 8)
        if zeros.size != n * per_row:
            raise bad(ctx, f"zero_points has {zeros.size} bytes; N * ceil(k_blocks * bits / 8) = {n * per_row} "
                           "are needed")
        zero = unpack_codes(zeros.reshape(n, per_row), bits, blocks).astype(np.int32)
    scale = np.asarray(scales, np.float32).reshape(n, blocks)
    if not np.all(np.isfinite(scale)) or np.any(scale == 0):  # (the symmetric quantizer writes negative ones)
        raise bad(ctx, "scales must be finite and non-zero")
    steps = np.repeat(scale, block, axis=1)[:, :k]
    weight = (codes - np.repeat(zero, block, axis=1)[:, :k]).astype(np.float32) * steps
    return np.ascontiguousarray(weight.T), np.ascontiguousarray(np.abs(steps).T)


@register("MatMulNBits", versions=(1,), domain=MS_DOMAIN, ttnn=("linear",),
          note="a constant block-quantized weight dequantized at conversion (bfloat8_b or bf16); uint8 zero points")
def matmul_nbits(ctx: LoweringContext, node: gs.Node) -> None:
    """com.microsoft MatMulNBits-1: Y = A @ dequantize(B)^T (+ bias); bits 2 / 4 / 8, B, scales and the packed
    uint8 zero points constant; g_idx and float zero points declined."""
    a, b, scales = node.inputs[:3]
    zeros, g_idx, bias = optional_input(node, 3), optional_input(node, 4), optional_input(node, 5)
    k, n = int(node.attrs["K"]), int(node.attrs["N"])
    bits, block = int(node.attrs.get("bits", 4)), int(node.attrs["block_size"])
    if bits not in NBITS:
        ctx.decline(f"{bits}-bit codes")
    if block < 16 or block & (block - 1):
        raise bad(ctx, f"block_size {block} must be a power of 2 and at least 16")
    if g_idx is not None:
        ctx.decline("a g_idx input (a permutation of K)")
    if zeros is not None and type_name(zeros) != "uint8":
        ctx.decline(f"{type_name(zeros)} zero points (only packed uint8 ones are lowered)")
    if type_name(b) != "uint8":
        raise bad(ctx, f"B {b.name!r} has type {type_name(b)}; uint8 is needed")
    packed = ctx.require_constant(b, "MatMulNBits B")
    scale = ctx.require_constant(scales, "MatMulNBits scales")
    zero = ctx.require_constant(zeros, "MatMulNBits zero_points") if zeros is not None else None
    weight, steps = nbits_weight(ctx, np.asarray(packed), np.asarray(scale), zero, k, n, bits, block)
    w = gs.Constant(f"{b.name}_dequantized", weight)
    ctx.dequantized.setdefault(w.name, steps)
    out = node.outputs[0]
    if bias is None:
        run_float_rule(ctx, "MatMul", 13, helper_node("MatMul", {}, [a, w], [out]))
        return
    ctx.require_constant(bias, "MatMulNBits bias")
    run_float_rule(ctx, "Linear", 1, helper_node("Linear", {}, [a, w, bias], [out]), domain=FUSED_DOMAIN)
