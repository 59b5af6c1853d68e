"""Quantized ONNX on the device: QuantizeLinear / DequantizeLinear (QDQ format) and the operator-format ops
(QLinearMatMul, QLinearConv, MatMulInteger, ConvInteger, DynamicQuantizeLinear).

Integer tensors live on the device in the float compute dtype (lowering/eltwise.py), and every value a
quantized model carries (int8 / uint8 / int16 / uint16 codes, the int32 accumulators of the integer ops) is
an integer the float dtype holds exactly within its mantissa (8 bits in bfloat16, 24 in float32).  So the
ops are exact round-and-clamp chains of float eltwise ops, with ONNX's semantics:

- QuantizeLinear: `y = clamp(round_half_even(x / scale) + zero_point, qmin, qmax)` (divide, round, add, clip);
- DequantizeLinear: `y = (x - zero_point) * scale` (subtract, multiply).

ttnn's own quantize / dequantize / requantize take or give INT32 device tensors and neither rounds nor
saturates as ONNX says (docs/ttnn-facts.md §18), so they are not used.  A DequantizeLinear of a constant
weight never gets here: passes/fold_dequantize.py folds it into a float weight on import, and the rules that
upload weights (ttnn.linear's, conv2d's) upload it as bfloat8_b.

Scales and zero points are per tensor (one element), per axis (a 1-D tensor along `axis`, opset 13 on) or
per block (opset 21 on: the shape of x with dim `axis` divided by `block_size`, rounded up).  Constant ones
become scalar arguments or broadcastable weights; runtime ones (DynamicQuantizeLinear's) are device tensors.
A zero or negative constant scale, an axis out of range, or a zero point of the wrong type or shape is bad
input: one error naming the node.

The operator-format ops are lowered in the DQ -> float op -> Q form onnxruntime's own QDQ transformer
recognises: their inputs dequantized, the float MatMul or Conv rule, the result quantized (QLinear*) or
left as its exact integer value (the *Integer ops: int32 sums of products of integers below 2^8).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.context import LoweringContext, is_integer_value
from onnx2ttnn.lowering.eltwise import intermediate, ranked_operand
from onnx2ttnn.lowering.registry import FUSED_DOMAIN, lookup, register

# the integer types a quantized tensor may have, per op (float8 / 4-bit / 2-bit codes have no ttnn type)
QUANT_TYPES = ("int8", "uint8", "int16", "uint16")
DEQUANT_TYPES = QUANT_TYPES + ("int32",)
FLOAT_SCALES = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class QParams:
    """A validated scale / zero point pair of one Q or DQ node."""

    scale: gs.Tensor
    zero: Optional[gs.Tensor]  # None: no zero point (0)
    axis: Optional[int]  # the quantization axis, None when per tensor
    block: int  # block size along `axis` (0: per axis or per tensor)
    dtype: np.dtype  # the quantized type

    @property
    def per_tensor(self) -> bool:
        return self.axis is None

    @property
    def range(self) -> tuple[int, int]:
        info = np.iinfo(self.dtype)
        return int(info.min), int(info.max)


def _bad(ctx, what: str) -> ConversionError:
    """The error of a malformed node; `ctx` is the lowering context or the node's name."""
    return ConversionError(f"node {getattr(ctx, 'source', ctx)!r}: {what}")


def _type_name(tensor: gs.Tensor) -> str:
    dtype = tensor.dtype
    if isinstance(dtype, int):
        return onnx.TensorProto.DataType.Name(dtype).lower()
    return np.dtype(dtype).name if dtype is not None else "unknown"


def qparams(ctx, node: gs.Node, x_shape, scale: gs.Tensor, zero: Optional[gs.Tensor],
            dtype: np.dtype, *, axis_allowed: bool, block_allowed: bool, axis: Optional[int] = None) -> QParams:
    """Check the scale and zero point of a Q/DQ node against the spec and the input's shape (`ctx`: the
    lowering context, or the node's name when a pass checks it); `axis` is the quantization axis of an op
    without the attribute (the operator-format ops)."""
    rank = len(x_shape)
    if _type_name(scale) not in FLOAT_SCALES:
        raise _bad(ctx, f"scale {scale.name!r} has type {_type_name(scale)}; a float scale is needed")
    value = LoweringContext.constant(scale)
    if value is not None:
        values = np.asarray(value, dtype=np.float32)
        if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
            worst = values.reshape(-1)[np.argmin(values.reshape(-1))] if values.size else "none"
            raise _bad(ctx, f"scale {scale.name!r} must be positive and finite (got {worst})")
    one = lambda t: int(np.prod(t.shape or (), dtype=np.int64)) == 1 and len(t.shape or ()) <= 1  # noqa: E731
    if zero is not None and tuple(zero.shape or ()) != tuple(scale.shape or ()) and not (one(zero) and one(scale)):
        raise _bad(ctx, f"zero point {zero.name!r} has shape {list(zero.shape or ())}, its scale "
                        f"{list(scale.shape or ())}")
    fixed = axis is not None
    axis = axis if fixed else int(node.attrs.get("axis", 1))
    if "axis" in node.attrs and not fixed and not -rank <= axis < max(rank, 1):
        raise _bad(ctx, f"axis {axis} out of range for a rank-{rank} input")
    block = int(node.attrs.get("block_size", 0)) if block_allowed else 0
    if block < 0:
        raise _bad(ctx, f"block_size {block} must not be negative")
    shape = tuple(int(d) for d in (scale.shape or ()))
    size = int(np.prod(shape, dtype=np.int64))
    if block == 0 and size == 1 and len(shape) <= 1:
        return QParams(scale, zero, None, 0, dtype)
    if not axis_allowed:
        raise _bad(ctx, f"scale {scale.name!r} of shape {list(shape)} must have one element at this opset")
    if rank == 0:
        raise _bad(ctx, f"a scale of shape {list(shape)} for a rank-0 input")
    axis %= rank
    if block == 0:
        if shape != (int(x_shape[axis]),):
            raise _bad(ctx, f"scale {scale.name!r} of shape {list(shape)} fits neither per tensor nor per axis "
                            f"{axis} of an input of shape {list(x_shape)}")
        return QParams(scale, zero, axis, 0, dtype)
    want = tuple(-(-int(d) // block) if i == axis else int(d) for i, d in enumerate(x_shape))
    if shape != want:
        raise _bad(ctx, f"blocked scale {scale.name!r} has shape {list(shape)}; block_size {block} along axis "
                        f"{axis} of an input of shape {list(x_shape)} needs {list(want)}")
    return QParams(scale, zero, axis, block, dtype)


def _zero_type(ctx: LoweringContext, zero: Optional[gs.Tensor], allowed: tuple[str, ...], what: str) -> Optional[str]:
    if zero is None:
        return None
    name = _type_name(zero)
    if name not in allowed:
        raise _bad(ctx, f"zero point {zero.name!r} has type {name}; {what}")
    return name


def _optional(node: gs.Node, index: int) -> Optional[gs.Tensor]:
    return node.inputs[index] if len(node.inputs) > index and node.inputs[index].name else None


# ---- operands ------------------------------------------------------------------------------------------------

def _form_for(ctx: LoweringContext, x: gs.Tensor, q: QParams):
    """x's ttnn tensor and form: kept in NHWC when the parameters broadcast over it (per tensor, or per
    channel of an NCHW tensor with constant parameters), else plain."""
    var, form = ctx.value_with_form(x)
    if form is None or q.per_tensor or (q.axis == 1 and q.block == 0 and ctx.constant(q.scale) is not None
                                        and (q.zero is None or ctx.constant(q.zero) is not None)):
        return var, form
    return ctx.value(x), None


def _operand(ctx: LoweringContext, t: gs.Tensor, q: QParams, x_shape, form, key: str):
    """A scale or zero point as the second operand of a binary op on x: a Python number, or a tensor that
    broadcasts over x (in x's form)."""
    rank = len(x_shape)
    value = ctx.constant(t)
    if value is not None:
        value = np.asarray(value, dtype=np.float32)
        if q.per_tensor:
            return float(value.reshape(-1)[0])
        if form is not None:  # per channel of an NHWC tensor
            return ctx.param(value.reshape(1, 1, 1, -1), t.name, key=(t.name, key, "nhwc"))
        if q.block:
            full = np.repeat(value, q.block, axis=q.axis)
            full = np.take(full, np.arange(int(x_shape[q.axis])), axis=q.axis)
            return ctx.param(np.ascontiguousarray(full), t.name, key=(t.name, key, "blocks"))
        shape = [1] * rank
        shape[q.axis] = -1
        return ctx.param(value.reshape(shape), t.name, key=(t.name, key, rank, q.axis))
    if q.per_tensor:
        return ranked_operand(ctx, t, max(rank, 4 if form is not None else 1))
    if q.block:
        ctx.decline("a blocked scale or zero point computed at run time")
    shape = [1] * rank
    shape[q.axis] = int(x_shape[q.axis])
    return ctx.op("reshape", [ctx.value(t)], shape, name=f"{t.name}_axis{q.axis}", shape=shape)


def _binary(ctx: LoweringContext, op: str, x: gs.Variable, operand, name: str) -> gs.Variable:
    if isinstance(operand, float):
        return ctx.op(op, [x], x.shape, name=name, input_tensor_b=operand)
    shape = np.broadcast_shapes(tuple(x.shape), tuple(operand.shape))
    return ctx.op(op, list(ctx.one_kind(x, operand)), shape, name=name)


def _has_zero(ctx: LoweringContext, q: QParams) -> bool:
    if q.zero is None:
        return False
    value = ctx.constant(q.zero)
    return value is None or bool(np.any(value != 0))


def quantize_value(ctx: LoweringContext, x: gs.Tensor, q: QParams, out: gs.Tensor) -> None:
    """out = clamp(round(x / scale) + zero_point, qmin, qmax), bound in x's form."""
    shape = tuple(int(d) for d in x.shape)
    var, form = _form_for(ctx, x, q)
    scaled = _binary(ctx, "divide", var, _operand(ctx, q.scale, q, shape, form, "scale"), out.name + "_scaled")
    y = ctx.op("round", [scaled], scaled.shape, name=out.name + "_rounded")
    if _has_zero(ctx, q):
        y = _binary(ctx, "add", y, _operand(ctx, q.zero, q, shape, form, "zero"), out.name + "_shifted")
    lo, hi = q.range
    ctx.bind(out, ctx.op("clip", [y], y.shape, name=out.name, min=float(lo), max=float(hi)), form)


def dequantize_value(ctx: LoweringContext, x: gs.Tensor, q: QParams, out: gs.Tensor) -> None:
    """out = (x - zero_point) * scale, bound in x's form."""
    shape = tuple(int(d) for d in x.shape)
    var, form = _form_for(ctx, x, q)
    if is_integer_value(var):  # codes uploaded as int32 (an integer graph input): the arithmetic is in float
        var = ctx.op("typecast", [var], var.shape, name=out.name + "_codes", dtype=np.float32)
    unit = ctx.constant(q.scale) is not None and bool(np.all(ctx.constant(q.scale) == 1))  # the *Integer ops
    if _has_zero(ctx, q):
        name = out.name + ("" if unit else "_centred")
        var = _binary(ctx, "subtract", var, _operand(ctx, q.zero, q, shape, form, "zero"), name)
    if not unit:
        var = _binary(ctx, "multiply", var, _operand(ctx, q.scale, q, shape, form, "scale"), out.name)
    ctx.bind(out, var, form)


# ---- constant weights ----------------------------------------------------------------------------------------

def broadcast_param(value: np.ndarray, q: QParams, x_shape) -> np.ndarray:
    """A constant scale or zero point expanded to broadcast over x (numpy, for folding)."""
    value = np.asarray(value)
    if q.per_tensor:
        return value.reshape(())
    if q.block:
        full = np.repeat(value, q.block, axis=q.axis)
        return np.take(full, np.arange(int(x_shape[q.axis])), axis=q.axis)
    shape = [1] * len(x_shape)
    shape[q.axis] = -1
    return value.reshape(shape)


def dequantize_array(x: np.ndarray, q: QParams, scale: np.ndarray, zero: Optional[np.ndarray]) -> np.ndarray:
    """(x - zero_point) * scale of constant operands, as float32 (what onnxruntime computes)."""
    codes = np.asarray(x).astype(np.int64)
    if zero is not None:
        codes = codes - broadcast_param(zero, q, x.shape).astype(np.int64)
    scaled = codes.astype(np.float32) * broadcast_param(scale, q, x.shape).astype(np.float32)
    return np.asarray(scaled, dtype=np.float32)  # (an array also for a rank-0 x: numpy makes that a scalar)


# ---- QuantizeLinear / DequantizeLinear -----------------------------------------------------------------------

def _quantize(ctx: LoweringContext, node: gs.Node, *, axis_allowed: bool, block_allowed: bool) -> None:
    x, scale, zero = node.inputs[0], node.inputs[1], _optional(node, 2)
    zero_type = _zero_type(ctx, zero, QUANT_TYPES, "QuantizeLinear takes an int8, uint8, int16 or uint16 one")
    attr = int(node.attrs.get("output_dtype", 0)) if block_allowed else 0
    out_type = onnx.helper.tensor_dtype_to_np_dtype(attr).name if attr else None
    if out_type is not None and out_type not in QUANT_TYPES:
        ctx.decline(f"quantizing to {out_type} (ttnn has no such type)")
    if zero_type and out_type and zero_type != out_type:
        raise _bad(ctx, f"zero point {zero.name!r} has type {zero_type} but output_dtype is {out_type}")
    dtype = np.dtype(zero_type or out_type or "uint8")
    if _type_name(x) not in FLOAT_SCALES + ("int32",):
        raise _bad(ctx, f"input {x.name!r} has type {_type_name(x)}; QuantizeLinear quantizes float or int32")
    q = qparams(ctx, node, x.shape, scale, zero, dtype, axis_allowed=axis_allowed, block_allowed=block_allowed)
    quantize_value(ctx, x, q, node.outputs[0])


def _dequantize(ctx: LoweringContext, node: gs.Node, *, axis_allowed: bool, block_allowed: bool) -> None:
    x, scale, zero = node.inputs[0], node.inputs[1], _optional(node, 2)
    x_type = _type_name(x)
    if x_type not in DEQUANT_TYPES:
        ctx.decline(f"dequantizing {x_type} (ttnn has no such type)")
    if zero is not None and _type_name(zero) != x_type:
        raise _bad(ctx, f"zero point {zero.name!r} has type {_type_name(zero)}, its input {x.name!r} {x_type}")
    q = qparams(ctx, node, x.shape, scale, zero, np.dtype(x_type), axis_allowed=axis_allowed,
                block_allowed=block_allowed)
    dequantize_value(ctx, x, q, node.outputs[0])


@register("QuantizeLinear", versions=(10, 13, 19, 21, 23, 24, 25, 28), ttnn=("divide", "round", "add", "clip"),
          note="per tensor, per axis or per block; int8/uint8/int16/uint16 outputs; round half to even, saturate")
def quantize_linear(ctx: LoweringContext, node: gs.Node) -> None:
    """QuantizeLinear-10: a one-element scale, uint8 / int8; 13: `axis` (per-axis scales; default 1); 19:
    float16 / bfloat16 inputs, float8 outputs with `saturate`; 21: `block_size` (blocked scales; default 0,
    none), `output_dtype` (default: the zero point's type), int16 / uint16 / 4-bit outputs; 23: `precision`
    (the division's: ours is the compute dtype), float4; 24: float8e8m0 scales; 25: 2-bit; 28: float6 outputs.
    Each version's new attributes keep the earlier meaning at their defaults, and every type added beyond
    16-bit integers has no ttnn type (declined), so one rule serves them all."""
    _quantize(ctx, node, axis_allowed=True, block_allowed=True)


@register("DequantizeLinear", versions=(10, 13, 19, 21, 23, 24, 25, 28), ttnn=("subtract", "multiply"),
          note="per tensor, per axis or per block; int8/uint8/int16/uint16/int32 inputs")
def dequantize_linear(ctx: LoweringContext, node: gs.Node) -> None:
    """DequantizeLinear-10: a one-element scale, uint8 / int8 / int32; 13: `axis` (default 1); 19: float16 /
    bfloat16 scales, float8 inputs; 21: `block_size` (default 0), int16 / uint16 / 4-bit; 23: `output_dtype`
    (default: the scale's type), float4; 24: float8e8m0 scales; 25: 2-bit; 28: float6 inputs.  As for
    QuantizeLinear, the defaults keep the earlier meaning and the sub-byte and float8 codes are declined."""
    _dequantize(ctx, node, axis_allowed=True, block_allowed=True)


@register("QuantizeDequantize", versions=(1,), domain=FUSED_DOMAIN, ttnn=("divide", "round", "clip", "multiply"),
          note="fused QuantizeLinear -> DequantizeLinear: clamp(round(x / s), qmin - z, qmax - z) * s")
def quantize_dequantize(ctx: LoweringContext, node: gs.Node) -> None:
    """An activation's quantize-dequantize pair (fusion/quantize.py): the value onnxruntime computes, in x's
    form."""
    x, scale = node.inputs[:2]
    s = float(np.asarray(ctx.require_constant(scale, "QuantizeDequantize scale"), dtype=np.float32).reshape(-1)[0])
    out = node.outputs[0]
    var, form = ctx.value_with_form(x)
    y = ctx.op("divide", [var], var.shape, name=out.name + "_scaled", input_tensor_b=s)
    y = ctx.op("round", [y], y.shape, name=out.name + "_rounded")
    y = ctx.op("clip", [y], y.shape, name=out.name + "_codes", min=float(node.attrs["low"]),
               max=float(node.attrs["high"]))
    ctx.bind(out, ctx.op("multiply", [y], y.shape, name=out.name, input_tensor_b=s), form)


# ---- operator format: QLinearMatMul, QLinearConv, MatMulInteger, ConvInteger, DynamicQuantizeLinear ---------

def _float_tensor(name: str, shape) -> gs.Variable:
    """An ONNX-level float tensor for a dequantized operand or a float result inside a lowered op."""
    return gs.Variable(name, dtype=np.float32, shape=[int(d) for d in shape])


def _unit_scale(zero: Optional[gs.Tensor], name: str) -> gs.Constant:
    """A scale of 1 shaped like `zero` (the *Integer ops' centring: x - zero_point, no scale)."""
    shape = tuple(zero.shape or ()) if zero is not None else ()
    return gs.Constant(name, np.ones(shape, dtype=np.float32))


def _dequantized_operand(ctx: LoweringContext, node: gs.Node, x: gs.Tensor, scale: gs.Tensor,
                         zero: Optional[gs.Tensor], what: str, *, axis: Optional[int] = None) -> gs.Tensor:
    """x dequantized: a float constant for a constant x (a weight, marked for a bfloat8_b upload), else a
    float tensor computed on the device."""
    x_type = _type_name(x)
    if x_type not in ("int8", "uint8"):
        raise _bad(ctx, f"{what} {x.name!r} has type {x_type}; int8 or uint8 is needed")
    if zero is not None and _type_name(zero) != x_type:
        raise _bad(ctx, f"zero point {zero.name!r} has type {_type_name(zero)}, its input {x.name!r} {x_type}")
    shape = tuple(int(d) for d in x.shape)
    q = qparams(ctx, node, shape, scale, zero, np.dtype(x_type), axis_allowed=axis is not None,
                block_allowed=False, axis=axis)
    value, scales = ctx.constant(x), ctx.constant(scale)
    zeros = ctx.constant(zero) if zero is not None else None
    if value is not None and scales is not None and (zero is None or zeros is not None):
        name = f"{x.name}_dequantized"
        scales = np.asarray(scales, dtype=np.float32)
        ctx.dequantized.setdefault(name, broadcast_param(scales, q, shape))
        return gs.Constant(name, dequantize_array(np.asarray(value), q, scales, zeros))
    out = _float_tensor(f"{x.name}_{ctx.source}_dequantized", shape)
    dequantize_value(ctx, x, q, out)
    return out


def _requantize(ctx: LoweringContext, node: gs.Node, y: gs.Tensor, scale: gs.Tensor, zero: Optional[gs.Tensor],
                out: gs.Tensor) -> None:
    """out = QuantizeLinear(y, scale, zero) with a per-tensor scale, to the zero point's type (uint8 without)."""
    zero_type = _zero_type(ctx, zero, ("int8", "uint8"), "int8 or uint8 is needed")
    q = qparams(ctx, node, y.shape, scale, zero, np.dtype(zero_type or "uint8"), axis_allowed=False,
                block_allowed=False)
    quantize_value(ctx, y, q, out)


def _helper_node(op: str, attrs: dict, inputs: list, outputs: list) -> gs.Node:
    return gs.Node(op, attrs=dict(attrs), inputs=list(inputs), outputs=list(outputs))


def _run_float_rule(ctx: LoweringContext, op: str, opset: int, helper: gs.Node) -> None:
    """Lower `helper` (a float MatMul or Conv standing in for the quantized op) with the float rule, then
    detach it from the tensors it borrowed."""
    try:
        lookup("", op, opset).fn(ctx, helper)
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
    fa = _dequantized_operand(ctx, node, a, a_scale, a_zero, "input a")
    fb = _dequantized_operand(ctx, node, b, b_scale, b_zero, "input b", axis=len(b.shape) - 1)
    product = _float_tensor(f"{out.name}_float", out.shape)
    _run_float_rule(ctx, "MatMul", 13, _helper_node("MatMul", {}, [fa, fb], [product]))
    _requantize(ctx, node, product, y_scale, y_zero, out)


@register("QLinearConv", versions=(10,), ttnn=("subtract", "multiply", "conv2d", "divide", "round", "add", "clip"),
          note="as DequantizeLinear -> Conv -> QuantizeLinear; w (per tensor or per output channel) and the int32 "
               "bias must be constants")
def qlinear_conv(ctx: LoweringContext, node: gs.Node) -> None:
    """QLinearConv-10: uint8 / int8 x and w, per-tensor x and y scales, w's per tensor or per output channel,
    an int32 bias quantized with scale x_scale * w_scale and zero point 0."""
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero = node.inputs[:8]
    bias = _optional(node, 8)
    out = node.outputs[0]
    if ctx.constant(w) is None:
        raise _bad(ctx, f"weight {w.name!r} must be a constant")
    fx = _dequantized_operand(ctx, node, x, x_scale, x_zero, "input x")
    fw = _dequantized_operand(ctx, node, w, w_scale, w_zero, "weight w", axis=0)
    inputs = [fx, fw]
    if bias is not None:
        b = ctx.require_constant(bias, "QLinearConv bias")
        if _type_name(bias) != "int32":
            raise _bad(ctx, f"bias {bias.name!r} has type {_type_name(bias)}; int32 is needed")
        xs = np.asarray(ctx.require_constant(x_scale, "x_scale"), dtype=np.float32).reshape(-1)[0]
        ws = np.asarray(ctx.require_constant(w_scale, "w_scale"), dtype=np.float32).reshape(-1)
        inputs.append(gs.Constant(f"{bias.name}_dequantized", (b.astype(np.float32) * (xs * ws)).astype(np.float32)))
    result = _float_tensor(f"{out.name}_float", out.shape)
    _run_float_rule(ctx, "Conv", 11, _helper_node("Conv", node.attrs, inputs, [result]))
    _requantize(ctx, node, result, y_scale, y_zero, out)


@register("MatMulInteger", versions=(10,), ttnn=("subtract", "linear", "matmul"),
          note="(A - a_zero_point) @ (B - b_zero_point) in float: exact int32 sums while they fit the mantissa")
def matmul_integer(ctx: LoweringContext, node: gs.Node) -> None:
    """MatMulInteger-10: uint8 / int8 A and B, a_zero_point per tensor, b_zero_point per tensor or per
    column; the int32 result is computed on float values (exact in float32 below 2^24, in bfloat16 below 2^8)."""
    a, b = node.inputs[:2]
    a_zero, b_zero = _optional(node, 2), _optional(node, 3)
    out = node.outputs[0]
    fa = _dequantized_operand(ctx, node, a, _unit_scale(a_zero, f"{a.name}_unit_scale"), a_zero, "input A")
    fb = _dequantized_operand(ctx, node, b, _unit_scale(b_zero, f"{b.name}_unit_scale"), b_zero, "input B",
                              axis=len(b.shape) - 1)
    _run_float_rule(ctx, "MatMul", 13, _helper_node("MatMul", {}, [fa, fb], [out]))


@register("ConvInteger", versions=(10,), ttnn=("subtract", "conv2d"),
          note="conv of (x - x_zero_point) and (w - w_zero_point) in float; w must be a constant")
def conv_integer(ctx: LoweringContext, node: gs.Node) -> None:
    """ConvInteger-10: uint8 / int8 x and w, x_zero_point per tensor, w_zero_point per tensor or per output
    channel; the int32 result is computed on float values."""
    x, w = node.inputs[:2]
    x_zero, w_zero = _optional(node, 2), _optional(node, 3)
    if ctx.constant(w) is None:
        raise _bad(ctx, f"weight {w.name!r} must be a constant")
    fx = _dequantized_operand(ctx, node, x, _unit_scale(x_zero, f"{x.name}_unit_scale"), x_zero, "input x")
    fw = _dequantized_operand(ctx, node, w, _unit_scale(w_zero, f"{w.name}_unit_scale"), w_zero, "weight w",
                              axis=0)
    _run_float_rule(ctx, "Conv", 11, _helper_node("Conv", node.attrs, [fx, fw], [node.outputs[0]]))


@register("DynamicQuantizeLinear", versions=(11,), ttnn=("max", "min", "maximum", "minimum", "subtract", "multiply",
                                                          "divide", "round", "add", "clip", "reshape"),
          note="uint8: the range of x (with 0) over 255 as scale, computed on the device")
def dynamic_quantize_linear(ctx: LoweringContext, node: gs.Node) -> None:
    """DynamicQuantizeLinear-11: y_scale = (max(0, max x) - min(0, min x)) / 255, y_zero_point =
    saturate(round(-min(0, min x) / y_scale)), y = saturate(round(x / y_scale) + y_zero_point), uint8."""
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
    scale = ctx.op("divide", [span], [1] * rank, name=name + "_scale", input_tensor_b=255.0)
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
