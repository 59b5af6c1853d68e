"""Quantized ONNX on the device: QuantizeLinear / DequantizeLinear (QDQ format), and the quantization parameters,
quantize and dequantize chains the operator-format ops share (lowering/quantize_operators.py: QLinearMatMul,
QLinearConv, MatMulInteger, ConvInteger, DynamicQuantizeLinear; lowering/quantize_contrib.py: com.microsoft's
QLinearAdd, QLinearMul, MatMulNBits).

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
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.fusion.quantize import EXACT_CODES, MAX_MOVES, MOVES
from onnx2ttnn.ir.graph import TTNNCall, TTNNRef, onnx_domain
from onnx2ttnn.lowering.context import LoweringContext, is_integer_value
from onnx2ttnn.lowering.eltwise import ranked_operand
from onnx2ttnn.lowering.registry import FUSED_DOMAIN, register

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


def bad(ctx, what: str) -> ConversionError:
    """The error of a malformed node; `ctx` is the lowering context or the node's name."""
    return ConversionError(f"node {getattr(ctx, 'source', ctx)!r}: {what}")


def type_name(tensor: gs.Tensor) -> str:
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
    if type_name(scale) not in FLOAT_SCALES:
        raise bad(ctx, f"scale {scale.name!r} has type {type_name(scale)}; a float scale is needed")
    value = LoweringContext.constant(scale)
    if value is not None:
        values = np.asarray(value, dtype=np.float32)
        if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
            worst = values.reshape(-1)[np.argmin(values.reshape(-1))] if values.size else "none"
            raise bad(ctx, f"scale {scale.name!r} must be positive and finite (got {worst})")
    one = lambda t: int(np.prod(t.shape or (), dtype=np.int64)) == 1 and len(t.shape or ()) <= 1  # noqa: E731
    if zero is not None and tuple(zero.shape or ()) != tuple(scale.shape or ()) and not (one(zero) and one(scale)):
        raise bad(ctx, f"zero point {zero.name!r} has shape {list(zero.shape or ())}, its scale "
                        f"{list(scale.shape or ())}")
    fixed = axis is not None
    axis = axis if fixed else int(node.attrs.get("axis", 1))
    if "axis" in node.attrs and not fixed and not -rank <= axis < max(rank, 1):
        raise bad(ctx, f"axis {axis} out of range for a rank-{rank} input")
    block = int(node.attrs.get("block_size", 0)) if block_allowed else 0
    if block < 0:
        raise bad(ctx, f"block_size {block} must not be negative")
    shape = tuple(int(d) for d in (scale.shape or ()))
    size = int(np.prod(shape, dtype=np.int64))
    if block == 0 and size == 1 and len(shape) <= 1:
        return QParams(scale, zero, None, 0, dtype)
    if not axis_allowed:
        raise bad(ctx, f"scale {scale.name!r} of shape {list(shape)} must have one element at this opset")
    if rank == 0:
        raise bad(ctx, f"a scale of shape {list(shape)} for a rank-0 input")
    axis %= rank
    if block == 0:
        if shape != (int(x_shape[axis]),):
            raise bad(ctx, f"scale {scale.name!r} of shape {list(shape)} fits neither per tensor nor per axis "
                            f"{axis} of an input of shape {list(x_shape)}")
        return QParams(scale, zero, axis, 0, dtype)
    want = tuple(-(-int(d) // block) if i == axis else int(d) for i, d in enumerate(x_shape))
    if shape != want:
        raise bad(ctx, f"blocked scale {scale.name!r} has shape {list(shape)}; block_size {block} along axis "
                        f"{axis} of an input of shape {list(x_shape)} needs {list(want)}")
    return QParams(scale, zero, axis, block, dtype)


def zero_point_type(ctx: LoweringContext, zero: Optional[gs.Tensor], allowed: tuple[str, ...],
                    what: str) -> Optional[str]:
    if zero is None:
        return None
    name = type_name(zero)
    if name not in allowed:
        raise bad(ctx, f"zero point {zero.name!r} has type {name}; {what}")
    return name


def optional_input(node: gs.Node, index: int) -> Optional[gs.Tensor]:
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
        if q.per_tensor or value.size == 1:  # one value broadcasts as a number (a per-tensor zero point
            return float(value.reshape(-1)[0])  # beside a per-channel multiplier)
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


def quantize_value(ctx: LoweringContext, x: gs.Tensor, q: QParams, out: gs.Tensor, *, multiply: bool = False) -> None:
    """out = clamp(round(x / scale) + zero_point, qmin, qmax), bound in x's form; `multiply`: x * scale, the
    scale being a requantization multiplier (an integer accumulator times x_scale * w_scale / y_scale)."""
    shape = tuple(int(d) for d in x.shape)
    var, form = _form_for(ctx, x, q)
    scaled = _binary(ctx, "multiply" if multiply else "divide", var,
                     _operand(ctx, q.scale, q, shape, form, "multiplier" if multiply else "scale"),
                     out.name + "_scaled")
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
    x, scale, zero = node.inputs[0], node.inputs[1], optional_input(node, 2)
    zero_type = zero_point_type(ctx, zero, QUANT_TYPES, "QuantizeLinear takes an int8, uint8, int16 or uint16 one")
    attr = int(node.attrs.get("output_dtype", 0)) if block_allowed else 0
    out_type = onnx.helper.tensor_dtype_to_np_dtype(attr).name if attr else None
    if out_type is not None and out_type not in QUANT_TYPES:
        ctx.decline(f"quantizing to {out_type} (ttnn has no such type)")
    if int(node.attrs.get("precision", 0)) == onnx.TensorProto.FLOAT16:  # opset 23 (fuzz seed 47 case 322)
        ctx.decline("precision FLOAT16 (a float16 division; ttnn has no float16)")
    if zero_type and out_type and zero_type != out_type:
        raise bad(ctx, f"zero point {zero.name!r} has type {zero_type} but output_dtype is {out_type}")
    dtype = np.dtype(zero_type or out_type or "uint8")
    if type_name(x) not in FLOAT_SCALES + ("int32",):
        raise bad(ctx, f"input {x.name!r} has type {type_name(x)}; QuantizeLinear quantizes float or int32")
    q = qparams(ctx, node, x.shape, scale, zero, dtype, axis_allowed=axis_allowed, block_allowed=block_allowed)
    quantize_value(ctx, x, q, node.outputs[0])


def _dequantize(ctx: LoweringContext, node: gs.Node, *, axis_allowed: bool, block_allowed: bool) -> None:
    x, scale, zero = node.inputs[0], node.inputs[1], optional_input(node, 2)
    x_type = type_name(x)
    if x_type not in DEQUANT_TYPES:
        ctx.decline(f"dequantizing {x_type} (ttnn has no such type)")
    if zero is not None and type_name(zero) != x_type:
        raise bad(ctx, f"zero point {zero.name!r} has type {type_name(zero)}, its input {x.name!r} {x_type}")
    q = qparams(ctx, node, x.shape, scale, zero, np.dtype(x_type), axis_allowed=axis_allowed,
                block_allowed=block_allowed)
    dequantize_value(ctx, x, q, node.outputs[0])


@register("QuantizeLinear", versions=(10, 13, 19, 21, 23, 24, 25, 28), ttnn=("divide", "round", "add", "clip"),
          note="per tensor, per axis or per block; int8/uint8/int16/uint16 outputs; round half to even, saturate")
def quantize_linear(ctx: LoweringContext, node: gs.Node) -> None:
    """QuantizeLinear-10: a one-element scale, uint8 / int8; 13: `axis` (per-axis scales; default 1); 19:
    float16 / bfloat16 inputs, float8 outputs with `saturate`; 21: `block_size` (blocked scales; default 0,
    none), `output_dtype` (default: the zero point's type), int16 / uint16 / 4-bit outputs; 23: `precision`
    (the division's: ours is the compute dtype; FLOAT16 is declined, onnxruntime's float16 quotient rounds
    differently), float4; 24: float8e8m0 scales; 25: 2-bit; 28: float6 outputs.
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




@register("QuantizeDequantize", versions=(1,), domain=FUSED_DOMAIN, ttnn=("divide", "multiply"),
          note="fused QuantizeLinear -> DequantizeLinear: clamp(round(x / s), qmin - z, qmax - z) * s, two calls")
def quantize_dequantize(ctx: LoweringContext, node: gs.Node) -> None:
    """An activation's quantize-dequantize pair (fusion/quantize.py): the value onnxruntime computes, in x's
    form.  Two calls: `divide(x, s)`, then `multiply(q, s)` whose `input_tensor_a_activations` round and clamp
    q before the multiply (round_tile and hardtanh_tile in the multiply's kernel, ttnn.round's and
    ttnn.hardtanh's own SFPU calls: docs/ttnn-facts.md §41).  The integers they give are held exactly in the
    kernel's dest, so the result is that of the four calls divide, round, clip, multiply.  Codes wider than
    8 bits (int16 / uint16 quantizers) keep the four calls."""
    x, scale = node.inputs[:2]
    s = float(np.asarray(ctx.require_constant(scale, "QuantizeDequantize scale"), dtype=np.float32).reshape(-1)[0])
    low, high = float(node.attrs["low"]), float(node.attrs["high"])
    out = node.outputs[0]
    var, form = ctx.value_with_form(x)
    y = ctx.op("divide", [var], var.shape, name=out.name + "_scaled", input_tensor_b=s)
    if max(abs(low), abs(high)) <= EXACT_CODES:
        codes = [TTNNCall("UnaryWithParam", TTNNRef("UnaryOpType.ROUND"), 0.0),
                 TTNNCall("UnaryWithParam", TTNNRef("UnaryOpType.HARDTANH"), low, high)]
        as_codes = _read_as_codes(ctx, out)
        ctx.pair_codes.update((name, s) for name in as_codes)  # before the moves bind them: no probes of codes
        ctx.bind(out, ctx.op("multiply", [y], y.shape, name=out.name + ("_codes" if as_codes else ""),
                             input_tensor_b=1.0 if as_codes else s, input_tensor_a_activations=codes), form)
        return
    y = ctx.op("round", [y], y.shape, name=out.name + "_rounded")
    y = ctx.op("clip", [y], y.shape, name=out.name + "_codes", min=low, max=high)
    ctx.bind(out, ctx.op("multiply", [y], y.shape, name=out.name, input_tensor_b=s), form)


def _read_as_codes(ctx: LoweringContext, out: gs.Tensor) -> list[str]:
    """The tensors that hold the pair's codes instead of its value (empty: none, the pair gives its value):
    `out` and the data movement after it (Reshape, Transpose, ...: codes commute with it) when every reader at the
    end is a MatMul or fused Linear that reads them as its activation and runs on its weight's codes
    (weight_codes.linear_codes), which then multiplies the pair's scale in with the weight's (lowering/matmul.py).
    The matrix engine reads the codes whole, where it truncates a float32 value to TF32 (docs/ttnn-facts.md §48;
    docs/design.md §6.40)."""

    if ctx.dtype != "fp32":
        return []
    chain, frontier = [], [out]
    while frontier:
        tensor = frontier.pop()
        if tensor.name in ctx.output_names or not tensor.outputs or len(chain) > MAX_MOVES:
            return []
        chain.append(tensor.name)
        for node in tensor.outputs:
            if node.op in MOVES and node.inputs[0] is tensor and onnx_domain(node) == "":
                frontier.append(node.outputs[0])
            elif not _coded_reader(ctx, node, tensor):
                return []
    return chain


def _coded_reader(ctx: LoweringContext, node: gs.Node, tensor: gs.Tensor) -> bool:
    """`node` reads `tensor` as the activation of a linear on its weight's codes (as lowering/matmul.py lowers a
    MatMul, a fused Linear, or a Gemm of a constant weight and bias with no transA: its weight as gemm uploads it)."""
    from onnx2ttnn.lowering.weight_codes import steps_codes
    from onnx2ttnn.lowering.weight_dtype import weight_upload

    if node.inputs[0] is not tensor or len(tensor.shape or ()) < 2 or len(node.inputs) < 2:
        return False
    weight, name = ctx.constant(node.inputs[1]), node.inputs[1].name
    if weight is None or name not in ctx.dequantized:
        return False
    if node.op in ("MatMul", "Linear") and onnx_domain(node) in ("", FUSED_DOMAIN):
        return steps_codes(ctx, np.asarray(weight), ctx.dequantized[name]) is not None
    if node.op != "Gemm" or onnx_domain(node) != "" or node.attrs.get("transA", 0) or \
            float(node.attrs.get("alpha", 1.0)) != 1.0:
        return False
    c = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2].name else None
    bias = ctx.constant(c) if c is not None else None
    if c is not None and (bias is None or bias.size not in (1, int(node.outputs[0].shape[-1]))):
        return False  # a full [M, N] C: gemm's general path, no linear
    upload = weight_upload(node)
    return steps_codes(ctx, upload.to(np.asarray(weight)), upload.to(np.asarray(ctx.dequantized[name]))) is not None
