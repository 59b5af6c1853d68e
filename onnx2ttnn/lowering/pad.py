"""Pad: constant mode as ttnn.pad, edge / reflect / wrap as slices and one concat per padded axis; negative
pads crop first with one ttnn.slice.

Real ttnn.pad cannot pad a TILE tensor at the front on the device ("on device padding does not support front
padding"), so a pad with any leading padding asks for a ROW_MAJOR input; trailing-only pads take the tensor as
it is.  A runtime constant_value pads with 0 and adds `mask * value`, the mask (1 in the padded border) being a
weight of the output shape.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.ttnn_ops import Page
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.eltwise import ranked_operand
from onnx2ttnn.lowering.registry import register
from onnx2ttnn.lowering.tensor_ops import slice_

MODES = ("constant", "edge", "reflect", "wrap")


@register("Pad", versions=(2,), ttnn=("pad", "slice", "concat", "repeat"),
          note="pads and value attributes (opsets 2-10)")
def pad_attrs(ctx: LoweringContext, node: gs.Node) -> None:
    """Pad-2: `pads` and `value` attributes (Pad-1 named them `paddings`, no shape inference: not claimed)."""
    _lower(ctx, node, [int(p) for p in node.attrs["pads"]], None, float(node.attrs.get("value", 0.0)), None)


@register("Pad", versions=(11, 13, 18, 19, 21, 23, 24, 25),
          ttnn=("pad", "slice", "concat", "repeat", "multiply", "add"),
          note="constant pads and axes (18+); a runtime constant_value adds a constant mask times the value")
def pad_inputs(ctx: LoweringContext, node: gs.Node) -> None:
    """Pad-11: `pads` and `constant_value` became inputs (they were attributes, pad_attrs), integer types;
    13: bfloat16, bool, strings, complex; 18: the optional `axes` input (absent: every axis, as before);
    19: `wrap` mode; 21-25: float8 and 4-/2-bit types, which ttnn has no counterpart for."""
    pads = [int(p) for p in ctx.require_constant(node.inputs[1], "Pad pads").reshape(-1)]
    value, value_tensor = 0.0, None
    if len(node.inputs) > 2 and node.inputs[2].name:
        constant = ctx.constant(node.inputs[2])
        if constant is None:
            value_tensor = node.inputs[2]
        elif constant.size:
            value = float(constant.reshape(-1)[0])
    axes = None
    if len(node.inputs) > 3 and node.inputs[3].name:
        axes = [int(a) for a in ctx.require_constant(node.inputs[3], "Pad axes").reshape(-1)]
    _lower(ctx, node, pads, axes, value, value_tensor)


def _lower(ctx: LoweringContext, node: gs.Node, pads: list[int], axes, value: float, value_tensor) -> None:
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    rank = len(x.shape)
    mode = node.attrs.get("mode", "constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in MODES:
        raise ConversionError(f"node {ctx.source!r}: Pad mode {mode!r} is not one of {', '.join(MODES)}")
    axes = list(range(rank)) if axes is None else [a % rank for a in axes]
    if len(pads) != 2 * len(axes):
        raise ConversionError(f"node {ctx.source!r}: Pad has {len(pads)} pads for {len(axes)} axes")
    before, after = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        before[a], after[a] = pads[i], pads[i + len(axes)]
    x = _crop(ctx, x, before, after, out.name)
    before, after = [max(b, 0) for b in before], [max(a, 0) for a in after]
    if not any(before) and not any(after):
        ctx.bind(out, x)
        return
    if mode == "constant":
        ctx.bind(out, _constant(ctx, x, before, after, value, value_tensor, out.name))
        return
    y = x
    for axis in range(rank):
        if before[axis] or after[axis]:
            y = _border(ctx, y, axis, before[axis], after[axis], mode, f"{out.name}_axis{axis}")
    ctx.bind(out, y)


def _crop(ctx, x: gs.Variable, before: list[int], after: list[int], name: str) -> gs.Variable:
    """Negative pads remove elements: one slice over all dims."""
    shape = list(x.shape)
    starts = [max(-b, 0) for b in before]
    ends = [n - max(-a, 0) for n, a in zip(shape, after)]
    if any(e <= s for s, e in zip(starts, ends)):
        raise ConversionError(f"node {ctx.source!r}: negative Pad pads remove every element of an axis (ttnn "
                              "has no empty tensors)")
    return slice_(ctx, x, starts, ends, [1] * len(shape), [e - s for s, e in zip(starts, ends)], name + "_cropped")


def _constant(ctx, x: gs.Variable, before, after, value: float, value_tensor, name: str) -> gs.Variable:
    shape = [b + n + a for b, n, a in zip(before, x.shape, after)]
    layout = {"_input_layouts": (Page.ROW_MAJOR,)} if any(before) else {}  # no front padding of TILE on device
    padding = [[b, a] for b, a in zip(before, after)]
    if value_tensor is None:
        return ctx.op("pad", [x], shape, name=name, dtype=x.dtype, padding=padding, value=value, **layout)
    padded = ctx.op("pad", [x], shape, name=name + "_zero_padded", dtype=x.dtype, padding=padding, value=0.0,
                    **layout)
    mask = np.ones(shape, np.float32)
    mask[tuple(slice(b, b + n) for b, n in zip(before, x.shape))] = 0.0
    border = ctx.op("multiply", [ctx.float_param(mask, name + "_border"), ranked_operand(ctx, value_tensor, len(shape))],
                    shape, name=name + "_border_value")
    return ctx.op("add", [padded, border], shape, name=name, dtype=x.dtype)


def _border(ctx, x: gs.Variable, axis: int, before: int, after: int, mode: str, name: str) -> gs.Variable:
    """x with `before` / `after` elements added along `axis` by edge, reflect or wrap padding."""
    n = x.shape[axis]
    if mode == "reflect" and (before >= n or after >= n):
        raise ConversionError(f"node {ctx.source!r}: reflect Pad of {max(before, after)} on an axis of {n} "
                              "(pads must be smaller than the axis)")
    if mode == "wrap" and (before > n or after > n):
        raise ConversionError(f"node {ctx.source!r}: wrap Pad of {max(before, after)} on an axis of {n} "
                              "(pads may not exceed the axis)")
    if mode == "edge":
        head = [_repeat(ctx, _take(ctx, x, axis, 0, 1, name + "_first"), axis, before, name + "_head")] if before else []
        tail = [_repeat(ctx, _take(ctx, x, axis, n - 1, n, name + "_last"), axis, after, name + "_tail")] if after else []
    elif mode == "reflect":
        head = [_take(ctx, x, axis, i, i + 1, f"{name}_head{i}") for i in range(before, 0, -1)]
        tail = [_take(ctx, x, axis, i, i + 1, f"{name}_tail{i}") for i in range(n - 2, n - 2 - after, -1)]
    else:
        head = [_take(ctx, x, axis, n - before, n, name + "_head")] if before else []
        tail = [_take(ctx, x, axis, 0, after, name + "_tail")] if after else []
    shape = list(x.shape)
    shape[axis] = n + before + after
    return ctx.op("concat", head + [x] + tail, shape, name=name, dtype=x.dtype, dim=axis)


def _take(ctx, x: gs.Variable, axis: int, start: int, end: int, name: str) -> gs.Variable:
    """x[start:end] along `axis`."""
    starts, ends = [0] * len(x.shape), list(x.shape)
    starts[axis], ends[axis] = start, end
    shape = list(x.shape)
    shape[axis] = end - start
    return slice_(ctx, x, starts, ends, [1] * len(shape), shape, name)


def _repeat(ctx, x: gs.Variable, axis: int, times: int, name: str) -> gs.Variable:
    if times == 1:
        return x
    reps = [1] * len(x.shape)
    reps[axis] = times
    shape = list(x.shape)
    shape[axis] *= times
    return ctx.op("repeat", [x], shape, name=name, dtype=x.dtype, repeat_dims=tuple(reps))
