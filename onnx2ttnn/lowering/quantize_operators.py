"""Operator-format quantized ONNX on the device: QLinearMatMul, QLinearConv, MatMulInteger, ConvInteger and
DynamicQuantizeLinear.

Each is lowered in the DQ -> float op -> Q form onnxruntime's own QDQ transformer recognises: its inputs
dequantized (lowering/quantize.py: a constant one folded into a float weight the rules upload as bfloat8_b),
the float MatMul or Conv rule, the result quantized (QLinear*) or left as its exact integer value (the *Integer
ops: int32 sums of products of integers below 2^8).  com.microsoft's QLinearAdd, QLinearMul and MatMulNBits
reuse these helpers (lowering/quantize_contrib.py).

QLinearMatMul and QLinearConv in a float32 program, with constant scales, compute what onnxruntime's kernels
compute instead (docs/design.md §6.36): the int32 accumulator sum((x - x_zero) * (w - w_zero)) (+ the int32
bias) as the float MatMul / Conv of the centred codes, exact while every partial sum stays below 2^24 in
magnitude, then `clamp(round_half_even(acc * m) + y_zero)` with onnxruntime's one float32 multiplier
m = x_scale * w_scale / y_scale (per output channel with per-channel w_scale), so that ties round as its do.
A bfloat16 program keeps the dequantize chain: bfloat16 holds the accumulator to 8 significant bits and the
multiplier to 8, so neither form gives onnxruntime's codes (§6.36: 2.6-10 % of the codes off on random
models, either way); runtime scales keep it too.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.quantize import (bad, broadcast_param, dequantize_array, dequantize_value, optional_input,
                                         qparams, quantize_value, type_name, zero_point_type)
from onnx2ttnn.lowering.registry import lookup, register

def float_tensor(name: str, shape) -> gs.Variable:
    """An ONNX-level float tensor for a dequantized operand or a float result inside a lowered op."""
    return gs.Variable(name, dtype=np.float32, shape=[int(d) for d in shape])


def _unit_scale(zero: Optional[gs.Tensor], name: str) -> gs.Constant:
    """A scale of 1 shaped like `zero` (the *Integer ops' centring: x - zero_point, no scale)."""
    shape = tuple(zero.shape or ()) if zero is not None else ()
    return gs.Constant(name, np.ones(shape, dtype=np.float32))


def dequantized_operand(ctx: LoweringContext, node: gs.Node, x: gs.Tensor, scale: gs.Tensor,
                         zero: Optional[gs.Tensor], what: str, *, axis: Optional[int] = None,
                         centred: bool = False) -> gs.Tensor:
    """x dequantized: a float constant for a constant x (a weight, marked for a bfloat8_b upload), else a
    float tensor computed on the device; `centred`: x - zero_point only (integers, exact in float), the scale
    checked but left for the requantization multiplier."""
    x_type = type_name(x)
    if x_type not in ("int8", "uint8"):
        raise bad(ctx, f"{what} {x.name!r} has type {x_type}; int8 or uint8 is needed")
    if zero is not None and type_name(zero) != x_type:
        raise bad(ctx, f"zero point {zero.name!r} has type {type_name(zero)}, its input {x.name!r} {x_type}")
    shape = tuple(int(d) for d in x.shape)
    q = qparams(ctx, node, shape, scale, zero, np.dtype(x_type), axis_allowed=axis is not None,
                block_allowed=False, axis=axis)
    if centred:
        scale = _unit_scale(zero, f"{x.name}_unit_scale")
        q = qparams(ctx, node, shape, scale, zero, np.dtype(x_type), axis_allowed=axis is not None,
                    block_allowed=False, axis=axis)
    value, scales = ctx.constant(x), ctx.constant(scale)
    zeros = ctx.constant(zero) if zero is not None else None
    if value is not None and scales is not None and (zero is None or zeros is not None):
        name = f"{x.name}_{'centred' if centred else 'dequantized'}"
        scales = np.asarray(scales, dtype=np.float32)
        ctx.dequantized.setdefault(name, np.float32(1.0) if centred else broadcast_param(scales, q, shape))
        return gs.Constant(name, dequantize_array(np.asarray(value), q, scales, zeros))
    out = float_tensor(f"{x.name}_{ctx.source}_dequantized", shape)
    dequantize_value(ctx, x, q, out)
    return out


def requantize(ctx: LoweringContext, node: gs.Node, y: gs.Tensor, scale: gs.Tensor, zero: Optional[gs.Tensor],
                out: gs.Tensor) -> None:
    """out = QuantizeLinear(y, scale, zero) with a per-tensor scale, to the zero point's type (uint8 without)."""
    zero_type = zero_point_type(ctx, zero, ("int8", "uint8"), "int8 or uint8 is needed")
    q = qparams(ctx, node, y.shape, scale, zero, np.dtype(zero_type or "uint8"), axis_allowed=False,
                block_allowed=False)
    quantize_value(ctx, y, q, out)


def requant_multiplier(ctx: LoweringContext, x_scale: gs.Tensor, w_scale: gs.Tensor,
                       y_scale: gs.Tensor) -> Optional[np.ndarray]:
    """onnxruntime's requantization multiplier x_scale * w_scale / y_scale, each step rounded to float32 as
    its kernels compute it (one per element of w_scale), when the three scales are constants; else None."""
    values = [ctx.constant(t) for t in (x_scale, w_scale, y_scale)]
    if ctx.dtype != "fp32" or any(v is None for v in values):
        return None
    xs, ws, ys = (np.asarray(v, dtype=np.float32).reshape(-1) for v in values)
    return np.asarray((xs[0] * ws) / ys[0], dtype=np.float32)


def requantize_accumulator(ctx: LoweringContext, node: gs.Node, acc: gs.Tensor, multiplier: np.ndarray, axis: int,
                           y_scale: gs.Tensor, zero: Optional[gs.Tensor], out: gs.Tensor) -> None:
    """out = clamp(round_half_even(acc * multiplier) + zero, qmin, qmax): the requantization onnxruntime applies
    to the int32 accumulator of QLinearMatMul / QLinearConv, the multiplier per tensor or per `axis` of acc."""
    zero_type = zero_point_type(ctx, zero, ("int8", "uint8"), "int8 or uint8 is needed")
    q = qparams(ctx, node, acc.shape, y_scale, zero, np.dtype(zero_type or "uint8"), axis_allowed=False,
                block_allowed=False)
    per_tensor = multiplier.size == 1
    factor = gs.Constant(f"{out.name}_multiplier", multiplier.reshape(()) if per_tensor else multiplier)
    q = replace(q, scale=factor, axis=None if per_tensor else axis % len(acc.shape))
    quantize_value(ctx, acc, q, out, multiply=True)


def helper_node(op: str, attrs: dict, inputs: list, outputs: list) -> gs.Node:
    return gs.Node(op, attrs=dict(attrs), inputs=list(inputs), outputs=list(outputs))


def run_float_rule(ctx: LoweringContext, op: str, opset: int, helper: gs.Node, domain: str = "") -> None:
    """Lower `helper` (a float MatMul, Conv, Add, ... standing in for the quantized op) with the float rule, then
    detach it from the tensors it borrowed."""
    try:
        lookup(domain, op, opset).fn(ctx, helper)
    finally:
        helper.inputs.clear()
        helper.outputs.clear()


@register("QLinearMatMul", versions=(10, 21), ttnn=("subtract", "multiply", "linear", "matmul", "divide", "round",
                                                    "add", "clip"),
          note="as DequantizeLinear -> MatMul -> QuantizeLinear; a constant b is a bfloat8_b weight")
def qlinear_matmul(ctx: LoweringContext, node: gs.Node) -> None:
    """QLinearMatMul-10: uint8 / int8 a and b, per-tensor a and y scales, b's per tensor or per column;
    21: float16 / bfloat16 scales."""
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = node.inputs[:8]
    out = node.outputs[0]
    multiplier = requant_multiplier(ctx, a_scale, b_scale, y_scale)
    exact = multiplier is not None
    fa = dequantized_operand(ctx, node, a, a_scale, a_zero, "input a", centred=exact)
    fb = dequantized_operand(ctx, node, b, b_scale, b_zero, "input b", axis=len(b.shape) - 1, centred=exact)
    product = float_tensor(f"{out.name}_{'accumulator' if exact else 'float'}", out.shape)
    run_float_rule(ctx, "MatMul", 13, helper_node("MatMul", {}, [fa, fb], [product]))
    if exact:
        requantize_accumulator(ctx, node, product, multiplier, -1, y_scale, y_zero, out)
    else:
        requantize(ctx, node, product, y_scale, y_zero, out)


@register("QLinearConv", versions=(10,), ttnn=("subtract", "multiply", "conv2d", "divide", "round", "add", "clip"),
          note="as DequantizeLinear -> Conv -> QuantizeLinear; w (per tensor or per output channel) and the int32 "
               "bias must be constants")
def qlinear_conv(ctx: LoweringContext, node: gs.Node) -> None:
    """QLinearConv-10: uint8 / int8 x and w, per-tensor x and y scales, w's per tensor or per output channel,
    an int32 bias quantized with scale x_scale * w_scale and zero point 0."""
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero = node.inputs[:8]
    bias = optional_input(node, 8)
    out = node.outputs[0]
    if ctx.constant(w) is None:
        raise bad(ctx, f"weight {w.name!r} must be a constant")
    multiplier = requant_multiplier(ctx, x_scale, w_scale, y_scale)
    exact = multiplier is not None
    fx = dequantized_operand(ctx, node, x, x_scale, x_zero, "input x", centred=exact)
    fw = dequantized_operand(ctx, node, w, w_scale, w_zero, "weight w", axis=0, centred=exact)
    inputs = [fx, fw]
    if bias is not None:
        b = ctx.require_constant(bias, "QLinearConv bias")
        if type_name(bias) != "int32":
            raise bad(ctx, f"bias {bias.name!r} has type {type_name(bias)}; int32 is needed")
        if exact:  # added to the integer accumulator, as onnxruntime adds it before the multiplier
            inputs.append(gs.Constant(f"{bias.name}_integer", b.astype(np.float32)))
        else:
            xs = np.asarray(ctx.require_constant(x_scale, "x_scale"), dtype=np.float32).reshape(-1)[0]
            ws = np.asarray(ctx.require_constant(w_scale, "w_scale"), dtype=np.float32).reshape(-1)
            inputs.append(gs.Constant(f"{bias.name}_dequantized",
                                      (b.astype(np.float32) * (xs * ws)).astype(np.float32)))
    result = float_tensor(f"{out.name}_{'accumulator' if exact else 'float'}", out.shape)
    run_float_rule(ctx, "Conv", 11, helper_node("Conv", node.attrs, inputs, [result]))
    if exact:
        requantize_accumulator(ctx, node, result, multiplier, 1, y_scale, y_zero, out)
    else:
        requantize(ctx, node, result, y_scale, y_zero, out)


@register("MatMulInteger", versions=(10,), ttnn=("subtract", "linear", "matmul"),
          note="(A - a_zero_point) @ (B - b_zero_point) in float: exact int32 sums while they fit the mantissa")
def matmul_integer(ctx: LoweringContext, node: gs.Node) -> None:
    """MatMulInteger-10: uint8 / int8 A and B, a_zero_point per tensor, b_zero_point per tensor or per
    column; the int32 result is computed on float values (exact in float32 below 2^24, in bfloat16 below 2^8)."""
    a, b = node.inputs[:2]
    a_zero, b_zero = optional_input(node, 2), optional_input(node, 3)
    out = node.outputs[0]
    fa = dequantized_operand(ctx, node, a, _unit_scale(a_zero, f"{a.name}_unit_scale"), a_zero, "input A")
    fb = dequantized_operand(ctx, node, b, _unit_scale(b_zero, f"{b.name}_unit_scale"), b_zero, "input B",
                              axis=len(b.shape) - 1)
    run_float_rule(ctx, "MatMul", 13, helper_node("MatMul", {}, [fa, fb], [out]))


@register("ConvInteger", versions=(10,), ttnn=("subtract", "conv2d"),
          note="conv of (x - x_zero_point) and (w - w_zero_point) in float; w must be a constant")
def conv_integer(ctx: LoweringContext, node: gs.Node) -> None:
    """ConvInteger-10: uint8 / int8 x and w, x_zero_point per tensor, w_zero_point per tensor or per output
    channel; the int32 result is computed on float values."""
    x, w = node.inputs[:2]
    x_zero, w_zero = optional_input(node, 2), optional_input(node, 3)
    if ctx.constant(w) is None:
        raise bad(ctx, f"weight {w.name!r} must be a constant")
    fx = dequantized_operand(ctx, node, x, _unit_scale(x_zero, f"{x.name}_unit_scale"), x_zero, "input x")
    fw = dequantized_operand(ctx, node, w, _unit_scale(w_zero, f"{w.name}_unit_scale"), w_zero, "weight w",
                              axis=0)
    run_float_rule(ctx, "Conv", 11, helper_node("Conv", node.attrs, [fx, fw], [node.outputs[0]]))


@register("DynamicQuantizeLinear", versions=(11,), ttnn=("max", "min", "maximum", "minimum", "subtract", "multiply",
                                                          "divide", "eq", "round", "add", "clip", "reshape"),
          note="uint8: the range of x (with 0) over 255 as scale, computed on the device")
def dynamic_quantize_linear(ctx: LoweringContext, node: gs.Node) -> None:
    """DynamicQuantizeLinear-11: y_scale = (max(0, max x) - min(0, min x)) / 255, y_zero_point =
    saturate(round(-min(0, min x) / y_scale)), y = saturate(round(x / y_scale) + y_zero_point), uint8.
    An x of zeros has y_scale 1, as onnxruntime gives (the formula's 0 made 0 / 0 a NaN zero point, and a
    DequantizeLinear after it NaN where onnxruntime and onnx's reference give 0: fuzz seed 67 case 1085)."""
    from onnx2ttnn.lowering.reduce import reduce_to

    x = node.inputs[0]
    y, y_scale, y_zero = node.outputs[:3]
    var, form = ctx.value_with_form(x)  # reduced over everything: any form will do (NHWC stays NHWC)
    rank = len(var.shape)
    dims = list(range(rank))
    name = y.name
    hi = ctx.op("maximum", [reduce_to(ctx, var, "max", dims, name + "_max")], [1] * rank, name=name + "_hi",
                input_tensor_b=0.0)
    lo = ctx.op("minimum", [reduce_to(ctx, var, "min", dims, name + "_min")], [1] * rank, name=name + "_lo",
                input_tensor_b=0.0)
    span = ctx.op("subtract", [hi, lo], [1] * rank, name=name + "_span")
    scale = ctx.op("divide", [span], [1] * rank, name=name + "_range_scale", input_tensor_b=255.0)
    empty = ctx.op("eq", [span], [1] * rank, name=name + "_empty", input_tensor_b=0.0)  # x all 0: scale 1
    scale = ctx.op("add", [scale, empty], [1] * rank, name=name + "_scale")
    negated = ctx.op("multiply", [lo], [1] * rank, name=name + "_neg_lo", input_tensor_b=-1.0)
    zero = ctx.op("clip", [ctx.op("round", [ctx.op("divide", [negated, scale], [1] * rank, name=name + "_zp_f")],
                                  [1] * rank, name=name + "_zp_r")], [1] * rank, name=name + "_zp", min=0.0,
                  max=255.0)
    q = ctx.op("divide", [var, scale], var.shape, name=name + "_scaled")
    q = ctx.op("add", [ctx.op("round", [q], var.shape, name=name + "_rounded"), zero], var.shape,
               name=name + "_shifted")
    ctx.bind(y, ctx.op("clip", [q], var.shape, name=name, min=0.0, max=255.0), form)
    for onnx_out, value in ((y_scale, scale), (y_zero, zero)):
        if onnx_out.name:
            ctx.bind(onnx_out, ctx.op("reshape", [value], [1], name=onnx_out.name, shape=[1]))
