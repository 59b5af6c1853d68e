"""Softmax, LogSoftmax and the normalizations -> ttnn.softmax / ttnn.layer_norm / ttnn.rms_norm (TILE inputs).

ttnn normalises over the last dim only, so a normalisation over the trailing axes `axis..rank-1` flattens
them into one last dim first (a reshape), and GroupNormalization / InstanceNormalization normalise
[N, G, C/G*spatial] with layer_norm, then apply the per-channel scale and bias.  Opsets before 13 coerce
Softmax/LogSoftmax inputs to 2-D at `axis`; that is the same flattening.  LogSoftmax is composed as
(x - max) - log(sum(exp(x - max))) so it does not underflow where softmax does.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import FUSED_DOMAIN, register


def _axis(ctx: LoweringContext, node: gs.Node, default: int) -> int:
    rank = len(node.inputs[0].shape)
    axis = int(node.attrs.get("axis", default))
    if not -rank <= axis < rank:
        raise ConversionError(f"node {ctx.source!r}: axis {axis} out of range for a rank-{rank} input")
    return axis % rank


def _reshape(ctx: LoweringContext, x: gs.Variable, shape, name: str) -> gs.Variable:
    shape = tuple(int(d) for d in shape)
    return x if tuple(x.shape) == shape else ctx.op("reshape", [x], shape, name=name, shape=shape)


def _flatten_from(ctx: LoweringContext, x: gs.Variable, axis: int, name: str) -> gs.Variable:
    """x as [d0, ..., d(axis-1), prod(d(axis):)] (at least 2-D), so ttnn can work on the last dim."""
    shape = tuple(x.shape)
    lead = shape[:axis] if axis else (1,)
    return _reshape(ctx, x, lead + (int(np.prod(shape[axis:], dtype=np.int64)),), name)


# --- softmax family --------------------------------------------------------------------------------------

def _softmax(ctx: LoweringContext, x: gs.Variable, dim: int, name: str) -> gs.Variable:
    return ctx.op("softmax", [x], x.shape, name=name, dim=-1 if dim == len(x.shape) - 1 else dim,
                  numeric_stable=True)


def _log_softmax(ctx: LoweringContext, x: gs.Variable, dim: int, name: str) -> gs.Variable:
    kept = [1 if i == dim else d for i, d in enumerate(x.shape)]
    m = ctx.op("max", [x], kept, name=name + "_max", dim=dim, keepdim=True)
    shifted = ctx.op("subtract", [x, m], x.shape, name=name + "_shifted")
    e = ctx.op("exp", [shifted], x.shape, name=name + "_exp")
    total = ctx.op("sum", [e], kept, name=name + "_sum", dim=dim, keepdim=True)
    logs = ctx.op("log", [total], kept, name=name + "_logsum")
    return ctx.op("subtract", [shifted, logs], x.shape, name=name)


def _along_axis(ctx: LoweringContext, node: gs.Node, fn, default_axis: int) -> None:
    """Opset >= 13: `fn` along the one axis."""
    x = ctx.value(node.inputs[0])
    ctx.bind(node.outputs[0], fn(ctx, x, _axis(ctx, node, default_axis), node.outputs[0].name))


def _coerced_2d(ctx: LoweringContext, node: gs.Node, fn) -> None:
    """Opset < 13: the input is flattened to 2-D at `axis` (default 1) and `fn` runs on the last dim."""
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    axis = _axis(ctx, node, 1)
    flat = _flatten_from(ctx, x, axis, out.name + "_2d")
    y = fn(ctx, flat, len(flat.shape) - 1, out.name + ("_flat" if flat is not x else ""))
    ctx.bind(out, _reshape(ctx, y, x.shape, out.name))


@register("Softmax", versions=(13,), ttnn=("softmax",))
def softmax(ctx: LoweringContext, node: gs.Node) -> None:
    """Softmax-13: along the one axis `axis` (default -1), no 2-D coercion; bfloat16."""
    _along_axis(ctx, node, _softmax, -1)


@register("Softmax", versions=(1, 11), ttnn=("softmax",), note="opsets < 13: 2-D coercion at axis")
def softmax_1(ctx: LoweringContext, node: gs.Node) -> None:
    """Softmax-1: the input coerced to 2-D at `axis` (default 1); 11: negative axes."""
    _coerced_2d(ctx, node, _softmax)


@register("LogSoftmax", versions=(13,), ttnn=("max", "subtract", "exp", "sum", "log"), note="composed")
def log_softmax(ctx: LoweringContext, node: gs.Node) -> None:
    """LogSoftmax-13: along the one axis `axis` (default -1), no 2-D coercion; bfloat16."""
    _along_axis(ctx, node, _log_softmax, -1)


@register("LogSoftmax", versions=(1, 11), ttnn=("max", "subtract", "exp", "sum", "log"),
          note="opsets < 13: 2-D coercion")
def log_softmax_1(ctx: LoweringContext, node: gs.Node) -> None:
    """LogSoftmax-1: the input coerced to 2-D at `axis` (default 1); 11: negative axes."""
    _coerced_2d(ctx, node, _log_softmax)


# --- layer / rms normalisation ----------------------------------------------------------------------------

def _affine_param(ctx: LoweringContext, tensor: gs.Tensor, norm_shape, width: int, what: str,
                  full_shape) -> gs.Variable:
    """A scale/bias broadcast to the normalised dims, as the [1, width] vector ttnn's norms take.  The spec's
    function multiplies (adds) it with numpy broadcasting against the whole input: leading 1s are dropped
    ([1, 1, 4] for the last dim), one that varies over the dims before the normalised ones is declined (ttnn's
    norms take one row), and one that does not broadcast to the input (fuzz seed 59 case 1406: [4, 2, 5, 1]
    for an input [2, 4, 2, 5]; onnxruntime refuses it at run time) is an error naming the node."""
    value = ctx.constant(tensor)
    if value is not None:
        shape = np.shape(value)
        if not _broadcasts_to(shape, tuple(full_shape)):
            raise ConversionError(f"node {ctx.source!r}: {what} {tensor.name!r} of shape {list(shape)} does not "
                                  f"broadcast to the input's shape {list(full_shape)}")
        lead = max(len(shape) - len(norm_shape), 0)
        if any(d != 1 for d in shape[:lead]):
            ctx.decline(f"a {what} of shape {list(shape)} varies over the dims before the normalised ones")
        value = np.reshape(value, shape[lead:])
        flat = np.broadcast_to(value, tuple(norm_shape)).reshape(1, width)
        return ctx.float_param(flat, tensor.name, key=(tensor.name, "norm", width))
    if int(np.prod(tensor.shape, dtype=np.int64)) != width:
        raise ConversionError(f"node {ctx.source!r}: a runtime {what} must hold one value per normalised "
                              f"element ({width}), got shape {tuple(tensor.shape)}")
    return _reshape(ctx, ctx.value(tensor), (1, width), tensor.name + "_row")


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Whether `shape` broadcasts to `target` without growing it (numpy's rule, one way)."""
    return len(shape) <= len(target) and all(d in (1, t) for d, t in zip(reversed(shape), reversed(target)))


def _last_dim_norm(ctx: LoweringContext, node: gs.Node, ttnn_op: str, axis: int, bias: Optional[gs.Tensor]):
    """ttnn.layer_norm / rms_norm over the dims axis.. (flattened); returns (flattened input, result)."""
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    shape = tuple(x.shape)
    flat = _flatten_from(ctx, x, axis, out.name + "_flat_in")
    width = flat.shape[-1]
    kwargs = {"weight": _affine_param(ctx, node.inputs[1], shape[axis:], width, "scale", shape)}
    if bias is not None:
        kwargs["bias"] = _affine_param(ctx, bias, shape[axis:], width, "bias", shape)
    inputs = [flat] + list(kwargs.values())
    y = ctx.op(ttnn_op, inputs, flat.shape, name=out.name + ("_flat" if flat is not x else ""),
               epsilon=float(node.attrs.get("epsilon", 1e-5)))
    ctx.bind(out, _reshape(ctx, y, shape, out.name))
    return flat


def _optional(node: gs.Node, index: int) -> Optional[gs.Tensor]:
    if len(node.inputs) > index and node.inputs[index].name:
        return node.inputs[index]
    return None


def _wanted(node: gs.Node, index: int) -> bool:
    return len(node.outputs) > index and bool(node.outputs[index].name)


@register("LayerNormalization", versions=(17,), ttnn=("layer_norm",),
          note="over the trailing axes from `axis` (flattened); Mean/InvStdDev outputs composed")
def layer_norm(ctx: LoweringContext, node: gs.Node) -> None:
    axis = _axis(ctx, node, -1)
    flat = _last_dim_norm(ctx, node, "layer_norm", axis, _optional(node, 2))
    if _wanted(node, 1) or _wanted(node, 2):
        _mean_inv_std(ctx, node, flat, axis)


def _mean_inv_std(ctx: LoweringContext, node: gs.Node, flat: gs.Variable, axis: int) -> None:
    """The Mean and InvStdDev outputs: mean and 1/sqrt(var + epsilon) over the normalised dims."""
    kept = tuple(flat.shape[:-1]) + (1,)
    name = node.outputs[0].name
    mean = ctx.op("mean", [flat], kept, name=name + "_mean", dim=len(kept) - 1, keepdim=True)
    centred = ctx.op("subtract", [flat, mean], flat.shape, name=name + "_centred")
    sq = ctx.op("multiply", [centred, centred], flat.shape, name=name + "_sq")
    var = ctx.op("mean", [sq], kept, name=name + "_var", dim=len(kept) - 1, keepdim=True)
    var_eps = ctx.op("add", [var], kept, name=name + "_var_eps",
                     input_tensor_b=float(node.attrs.get("epsilon", 1e-5)))
    inv = ctx.op("rsqrt", [var_eps], kept, name=name + "_inv_std")
    for index, value in ((1, mean), (2, inv)):
        if _wanted(node, index):
            out = node.outputs[index]
            ctx.bind(out, _reshape(ctx, value, out.shape, out.name))


@register("RMSNormalization", versions=(23,), ttnn=("rms_norm",), note="over the trailing axes from `axis` (flattened)")
def rms_norm(ctx: LoweringContext, node: gs.Node) -> None:
    _last_dim_norm(ctx, node, "rms_norm", _axis(ctx, node, -1), None)


@register("RMSNorm", versions=(1,), domain=FUSED_DOMAIN, ttnn=("rms_norm",),
          note="fused from x * 1/sqrt(mean(x^2) + eps) * w")
def fused_rms_norm(ctx: LoweringContext, node: gs.Node) -> None:
    _last_dim_norm(ctx, node, "rms_norm", len(node.inputs[0].shape) - 1, None)


# --- group / instance normalisation -----------------------------------------------------------------------

def _channel_param(ctx: LoweringContext, tensor: gs.Tensor, channels: int, rank: int, repeat: int,
                   what: str) -> gs.Variable:
    """A per-channel (or per-group, repeated) scale/bias shaped [1, C, 1, ...] for broadcasting."""
    shape = (1, channels) + (1,) * (rank - 2)
    value = ctx.constant(tensor)
    if value is not None:
        value = np.repeat(np.asarray(value, dtype=np.float32).reshape(-1), repeat)
        if value.size != channels:
            raise ConversionError(f"node {ctx.source!r}: {what} of shape {tuple(tensor.shape)} does not fit "
                                  f"{channels} channels")
        return ctx.float_param(value.reshape(shape), tensor.name, key=(tensor.name, "channel", rank))
    if repeat != 1:
        raise ConversionError(f"node {ctx.source!r}: a per-group {what} must be a constant")
    return _reshape(ctx, ctx.value(tensor), shape, tensor.name + "_channel")


def _group_norm(ctx: LoweringContext, node: gs.Node, groups: int, per_group_affine: bool) -> None:
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    shape = tuple(x.shape)
    if len(shape) < 3:
        raise ConversionError(f"node {ctx.source!r}: {node.op} needs an [N, C, ...] input, got {shape}")
    n, c = shape[0], shape[1]
    if groups < 1 or c % groups:
        raise ConversionError(f"node {ctx.source!r}: num_groups={groups} must divide the {c} channels")
    grouped = _reshape(ctx, x, (n, groups, math.prod(shape[1:]) // groups), out.name + "_grouped")
    normed = ctx.op("layer_norm", [grouped], grouped.shape, name=out.name + "_normed",
                    epsilon=float(node.attrs.get("epsilon", 1e-5)))
    y = _reshape(ctx, normed, shape, out.name + "_ungrouped")
    repeat = c // groups if per_group_affine else 1
    scale = _channel_param(ctx, node.inputs[1], c, len(shape), repeat, "scale")
    bias = _channel_param(ctx, node.inputs[2], c, len(shape), repeat, "bias")
    y = ctx.op("multiply", [y, scale], shape, name=out.name + "_scaled")
    ctx.bind(out, ctx.op("add", [y, bias], shape, name=out.name))


@register("GroupNormalization", versions=(21,), ttnn=("layer_norm", "multiply", "add"), note="per-channel scale/bias")
def group_norm(ctx: LoweringContext, node: gs.Node) -> None:
    """GroupNormalization-21: scale and bias per channel (18 had them per group) and `stash_type`, the
    precision of the statistics (computed in the program's dtype here, as every norm)."""
    _group_norm(ctx, node, int(node.attrs["num_groups"]), per_group_affine=False)


@register("GroupNormalization", versions=(18,), ttnn=("layer_norm", "multiply", "add"),
          note="opset 18: per-group scale/bias")
def group_norm_18(ctx: LoweringContext, node: gs.Node) -> None:
    """GroupNormalization-18: scale and bias hold one value per group."""
    _group_norm(ctx, node, int(node.attrs["num_groups"]), per_group_affine=True)


@register("InstanceNormalization", versions=(6, 22), ttnn=("layer_norm", "multiply", "add"))
def instance_norm(ctx: LoweringContext, node: gs.Node) -> None:
    """InstanceNormalization-6 (1 had the legacy `consumed_inputs` and no shape inference: not claimed);
    22: bfloat16."""
    _group_norm(ctx, node, int(node.inputs[0].shape[1]), per_group_affine=False)


# --- local response normalisation -------------------------------------------------------------------------

@register("LRN", versions=(1, 13), ttnn=("multiply", "concat", "slice", "add", "pow", "divide"),
          note="windowed channel sum of squares by zero-padded slices (exact); stays in NHWC after a conv")
def lrn(ctx: LoweringContext, node: gs.Node) -> None:
    """y = x / (bias + alpha / size * sum of x^2 over the `size` channels around c) ** beta.  LRN-1; 13:
    bfloat16."""
    size = int(node.attrs["size"])
    alpha, beta = float(node.attrs.get("alpha", 1e-4)), float(node.attrs.get("beta", 0.75))
    bias = float(node.attrs.get("bias", 1.0))
    if size < 1:
        raise ConversionError(f"node {ctx.source!r}: LRN size={size} must be positive")
    x, form = ctx.value_with_form(node.inputs[0])
    if form is None and len(x.shape) < 3:
        raise ConversionError(f"node {ctx.source!r}: LRN needs an [N, C, ...] input, got {tuple(x.shape)}")
    axis = len(x.shape) - 1 if form is not None else 1  # NHWC keeps channels last
    out = node.outputs[0]
    shape = list(x.shape)
    sq = ctx.op("multiply", [x, x], shape, name=out.name + "_sq")
    before, after = (size - 1) // 2, size // 2
    pieces = []
    for count, where in ((before, "before"), (after, "after")):
        if count:
            zshape = list(shape)
            zshape[axis] = count
            pieces.append(ctx.float_param(np.zeros(zshape, np.float32), f"{out.name}_pad_{where}",
                                          key=(out.name, where)))
    padded = sq
    if pieces:
        pshape = list(shape)
        pshape[axis] += before + after
        parts = ([pieces[0]] if before else []) + [sq] + ([pieces[-1]] if after else [])
        padded = ctx.op("concat", parts, pshape, name=out.name + "_padded", dim=axis)
    total = None
    for k in range(size):
        if size == 1:
            window = padded
        else:
            start, end = [0] * len(shape), list(padded.shape)
            start[axis], end[axis] = k, k + shape[axis]
            window = ctx.op("slice", [padded], shape, name=f"{out.name}_win{k}", slice_start=start, slice_end=end,
                            slice_step=[1] * len(shape))
        total = window if total is None else ctx.op("add", [total, window], shape, name=f"{out.name}_sum{k}")
    scaled = ctx.op("multiply", [total], shape, name=out.name + "_scaled", input_tensor_b=alpha / size)
    shifted = ctx.op("add", [scaled], shape, name=out.name + "_biased", input_tensor_b=bias)
    denom = ctx.op("pow", [shifted], shape, name=out.name + "_denom", exponent=beta)
    ctx.bind(out, ctx.op("divide", [x, denom], shape, name=out.name), form)
