"""Selections and scans along one axis: TopK -> ttnn.topk, CumSum -> ttnn.cumsum.

ttnn.topk returns [values, indices] (TILE; indices UINT16, or UINT32 for float32 inputs and reduced dims
above 65536 once tile-padded) and is asked for a stable sort so equal values come out lowest index first, as
ONNX requires.  The indices are typecast to the integer dtype the rest of the program uses.  CumSum's
`exclusive` shifts the inclusive sum by one element (slice + concat with zeros), which stays exact.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.context import INDEX, LoweringContext
from onnx2ttnn.lowering.registry import register

RAW_INDEX = np.dtype(np.uint16)  # marks ttnn.topk's own index output (UINT16 or UINT32, see assign-layouts)


def _axis(ctx: LoweringContext, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ConversionError(f"node {ctx.source!r}: axis {axis} out of range for a rank-{rank} input")
    return axis % rank


def _topk(ctx: LoweringContext, node: gs.Node, k: int, largest: bool, sorted_: bool) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    axis = _axis(ctx, int(node.attrs.get("axis", -1)), rank)
    if not 1 <= k <= x.shape[axis]:
        raise ConversionError(f"node {ctx.source!r}: K={k} must be in [1, {x.shape[axis]}]")
    shape = [k if i == axis else d for i, d in enumerate(x.shape)]
    values, indices = node.outputs[0], node.outputs[1]
    vals, raw = ctx.multi_op("topk", [x], [shape, shape], names=[values.name, indices.name + "_raw"],
                             k=k, dim=axis if axis != rank - 1 else -1, largest=largest, sorted=sorted_, stable=True)
    raw.dtype = RAW_INDEX  # assign-layouts gives it the dtype real ttnn returns (UINT16 or UINT32)
    ctx.bind(values, vals)
    ctx.bind(indices, ctx.op("typecast", [raw], shape, name=indices.name, dtype=INDEX))


@register("TopK", versions=(11, 24), ttnn=("topk",), note="stable: ties lowest index first")
def topk(ctx: LoweringContext, node: gs.Node) -> None:
    """TopK-11: `largest` and `sorted` attributes, integer types; 24: bfloat16."""
    k = int(ctx.require_constant(node.inputs[1], "TopK K").reshape(-1)[0])
    _topk(ctx, node, k, bool(node.attrs.get("largest", 1)), bool(node.attrs.get("sorted", 1)))


@register("TopK", versions=(10,), ttnn=("topk",), note="K as input, always largest and sorted")
def topk_10(ctx: LoweringContext, node: gs.Node) -> None:
    """TopK-10: K became an input (it was the `k` attribute)."""
    k = int(ctx.require_constant(node.inputs[1], "TopK K").reshape(-1)[0])
    _topk(ctx, node, k, True, True)


@register("TopK", versions=(1,), ttnn=("topk",), note="k as attribute")
def topk_1(ctx: LoweringContext, node: gs.Node) -> None:
    """TopK-1: `k` attribute, always the largest, sorted."""
    _topk(ctx, node, int(node.attrs["k"]), True, True)


@register("CumSum", versions=(11, 14), ttnn=("cumsum",), note="exclusive via slice + concat")
def cumsum(ctx: LoweringContext, node: gs.Node) -> None:
    """CumSum-11; 14: bfloat16 and float16."""
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    rank = len(x.shape)
    axis = _axis(ctx, int(ctx.require_constant(node.inputs[1], "CumSum axis").reshape(-1)[0]), rank)
    reverse = bool(node.attrs.get("reverse", 0))
    exclusive = bool(node.attrs.get("exclusive", 0))
    # integers (RoBERTa's position ids from the mask) are summed in int32, exactly: real ttnn.cumsum takes and
    # returns int32 (probe_integers.py; a bfloat16 sum would round past 256)
    x = ctx.as_int32(x, out.name + "_int32")
    y = ctx.op("cumsum", [x], x.shape, name=out.name + ("_inclusive" if exclusive else ""), dim=axis,
               reverse_order=reverse)
    if exclusive:
        y = _shift(ctx, y, axis, reverse, out.name)
    ctx.bind(out, y)


def _shift(ctx: LoweringContext, y: gs.Variable, axis: int, reverse: bool, name: str) -> gs.Variable:
    """y moved one step along `axis` (towards the end, or the start when reverse), zero-filled."""
    shape = list(y.shape)
    size = shape[axis]
    zero_shape = [1 if i == axis else d for i, d in enumerate(shape)]
    integer = np.dtype(y.dtype).kind in "iu"
    zeros = ctx.param(np.zeros(zero_shape, np.int32 if integer else np.float32), name + "_zero", key=(name, "zero"))
    if size == 1:
        return ctx.op("multiply", [y], shape, name=name, input_tensor_b=0 if integer else 0.0)
    start, end = [0] * len(shape), list(shape)
    if reverse:
        start[axis] = 1
    else:
        end[axis] = size - 1
    kept = [size - 1 if i == axis else d for i, d in enumerate(shape)]
    part = ctx.op("slice", [y], kept, name=name + "_part", slice_start=start, slice_end=end,
                  slice_step=[1] * len(shape))
    pieces = [part, zeros] if reverse else [zeros, part]
    return ctx.op("concat", pieces, shape, name=name, dim=axis)
