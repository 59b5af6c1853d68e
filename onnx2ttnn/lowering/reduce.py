"""Reductions -> ttnn.sum/mean/max/min/prod (keepdim, then a reshape when dropping), composed ones
(ReduceL1/L2/SumSquare/LogSum/LogSumExp) and ArgMax/ArgMin -> ttnn.argmax.

Axes are an attribute in the first schemas (negative ones from version 11) and a (constant) input from the
version AXES_AS_INPUT names on (ReduceSum 13, the others 18), which also adds noop_with_empty_axes; two rules
per op, one per form.  No axes reduce everything unless noop_with_empty_axes.  A reduction over a zero-sized
axis is the reduction's identity (0, 1, -inf, inf), emitted as a constant.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register

# ONNX op -> (composition kind, schema versions with axes as an attribute, versions with axes as an input).
# Within each form the versions add types only: bfloat16 (13), int8/uint8 (Max/Min 12), bool (Max/Min 20);
# 28 drops the integer types of LogSum/LogSumExp.
_ATTR, _ATTR_8BIT = (1, 11, 13), (1, 11, 12, 13)
REDUCE = {
    "ReduceMean": ("mean", _ATTR, (18,)), "ReduceSum": ("sum", (1, 11), (13,)),
    "ReduceMax": ("max", _ATTR_8BIT, (18, 20)), "ReduceMin": ("min", _ATTR_8BIT, (18, 20)),
    "ReduceProd": ("prod", _ATTR, (18,)), "ReduceL1": ("l1", _ATTR, (18,)), "ReduceL2": ("l2", _ATTR, (18,)),
    "ReduceSumSquare": ("sum_square", _ATTR, (18,)), "ReduceLogSum": ("log_sum", _ATTR, (18, 28)),
    "ReduceLogSumExp": ("log_sum_exp", _ATTR, (18, 28)),
}
TTNN_OPS = {"mean": ("mean",), "sum": ("sum",), "max": ("max",), "min": ("min",), "prod": ("prod",),
            "l1": ("abs", "sum"), "l2": ("multiply", "sum", "sqrt"), "sum_square": ("multiply", "sum"),
            "log_sum": ("sum", "log"), "log_sum_exp": ("max", "subtract", "exp", "sum", "log", "add")}
# value of a reduction over nothing
IDENTITY = {"sum": 0.0, "mean": np.nan, "max": -np.inf, "min": np.inf, "prod": 1.0, "l1": 0.0, "l2": 0.0,
            "sum_square": 0.0, "log_sum": -np.inf, "log_sum_exp": -np.inf}


def reduce_axes(ctx: LoweringContext, node: gs.Node, axes) -> Optional[list[int]]:
    """The sorted non-negative axes to reduce, or None for a no-op (empty axes, noop_with_empty_axes)."""
    rank = len(node.inputs[0].shape)
    if axes is None or len(axes) == 0:
        if node.attrs.get("noop_with_empty_axes", 0):
            return None
        return list(range(rank))
    for a in axes:
        if not -rank <= int(a) < rank:
            raise ConversionError(f"node {ctx.source!r}: axis {a} out of range for a rank-{rank} input")
    return sorted({int(a) % rank for a in axes})


def reduce_to(ctx: LoweringContext, x: gs.Variable, ttnn_op: str, dims: list[int], name: str) -> gs.Variable:
    """One keepdim reduction over `dims` (ttnn.prod reduces one dim per call)."""
    if ttnn_op == "prod":
        for d in sorted(dims, reverse=True):
            shape = [1 if i == d else s for i, s in enumerate(x.shape)]
            x = ctx.op("prod", [x], shape, name=f"{name}_prod{d}", dim=d, keepdim=True)
        return x
    kept = [1 if i in dims else d for i, d in enumerate(x.shape)]
    return ctx.op(ttnn_op, [x], kept, name=name, dim=dims[0] if len(dims) == 1 else list(dims), keepdim=True)


def _compose(ctx: LoweringContext, x: gs.Variable, kind: str, dims: list[int], name: str) -> gs.Variable:
    """The keepdim result of reduction `kind` built from ttnn ops."""
    if kind in ("mean", "sum", "max", "min", "prod"):
        return reduce_to(ctx, x, kind, dims, name)
    if kind == "l1":
        return reduce_to(ctx, ctx.op("abs", [x], x.shape, name=name + "_abs"), "sum", dims, name)
    if kind in ("l2", "sum_square"):
        sq = ctx.op("multiply", [x, x], x.shape, name=name + "_sq")
        total = reduce_to(ctx, sq, "sum", dims, name + ("_sum" if kind == "l2" else ""))
        return ctx.op("sqrt", [total], total.shape, name=name) if kind == "l2" else total
    if kind == "log_sum":
        total = reduce_to(ctx, x, "sum", dims, name + "_sum")
        return ctx.op("log", [total], total.shape, name=name)
    # log_sum_exp, stabilised by the maximum: m + log(sum(exp(x - m)))
    m = reduce_to(ctx, x, "max", dims, name + "_max")
    shifted = ctx.op("subtract", [x, m], x.shape, name=name + "_shifted")
    total = reduce_to(ctx, ctx.op("exp", [shifted], x.shape, name=name + "_exp"), "sum", dims, name + "_sum")
    logs = ctx.op("log", [total], total.shape, name=name + "_log")
    return ctx.op("add", [logs, m], total.shape, name=name)


def reduce(ctx: LoweringContext, node: gs.Node, kind: str, axes) -> None:
    out = node.outputs[0]
    dims = reduce_axes(ctx, node, axes)
    in_shape = tuple(node.inputs[0].shape)
    if dims is None:
        x = ctx.value(node.inputs[0])
        if kind in ("l1", "l2", "sum_square"):  # reduction over no axes still applies the elementwise part
            x = _compose(ctx, x, kind, [], out.name) if kind != "l1" else ctx.op("abs", [x], x.shape, name=out.name)
        ctx.bind(out, x)
        return
    shape = tuple(int(d) for d in out.shape) or (1,)
    if any(in_shape[d] == 0 for d in dims):
        identity = IDENTITY[kind]
        if np.dtype(out.dtype) == np.bool_:  # bool max/min over nothing: False / True
            identity = {"max": 0.0, "min": 1.0}.get(kind, identity)
        value = np.full(shape, identity, dtype=np.float32)
        ctx.bind(out, ctx.float_param(value, out.name + "_identity", key=(out.name, "identity")))
        return
    y = _compose(ctx, ctx.value(node.inputs[0]), kind, dims,
                 out.name + ("" if node.attrs.get("keepdims", 1) else "_kept"))
    if tuple(y.shape) != shape:
        y = ctx.op("reshape", [y], shape, name=out.name, shape=shape)
    ctx.bind(out, y)


def _register(op_type: str, kind: str, attr_versions: tuple[int, ...], input_versions: tuple[int, ...]) -> None:
    def with_attr(ctx, node):
        """The `axes` attribute (negative axes from version 11)."""
        reduce(ctx, node, kind, node.attrs.get("axes"))

    def with_input(ctx, node):
        """The optional `axes` input (it was an attribute) and `noop_with_empty_axes`."""
        axes = None
        if len(node.inputs) > 1 and node.inputs[1].name:
            axes = ctx.require_constant(node.inputs[1], f"{op_type} axes").reshape(-1).tolist()
        reduce(ctx, node, kind, axes)

    register(op_type, versions=attr_versions, ttnn=TTNN_OPS[kind])(with_attr)
    register(op_type, versions=input_versions, ttnn=TTNN_OPS[kind], note="axes as input")(with_input)


for _op_type, (_kind, _attr_versions, _input_versions) in REDUCE.items():
    _register(_op_type, _kind, _attr_versions, _input_versions)


def _arg_reduce(ctx: LoweringContext, node: gs.Node, largest: bool) -> None:
    """ArgMax/ArgMin along one axis -> ttnn.argmax (of -x for ArgMin); select_last_index via a flip."""
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    axis = int(node.attrs.get("axis", 0))
    if not -rank <= axis < rank:
        raise ConversionError(f"node {ctx.source!r}: axis {axis} out of range for a rank-{rank} input")
    axis %= rank
    out = node.outputs[0]
    last = bool(node.attrs.get("select_last_index", 0))
    size = x.shape[axis]
    if last:  # the last index of the extreme is the first one of the reversed axis
        flip = np.arange(size - 1, -1, -1)
        x = _take(ctx, x, axis, flip, out.name + "_reversed")
    if not largest:
        x = ctx.op("neg", [x], x.shape, name=out.name + "_neg")
    kept = [1 if i == axis else d for i, d in enumerate(x.shape)]
    idx = ctx.op("argmax", [x], kept, name=out.name + "_argmax", dtype=np.int32, dim=axis, keepdim=True)
    if last:
        idx = ctx.op("subtract", [idx], kept, name=out.name + "_unreversed", dtype=np.int32,
                     input_tensor_a=size - 1)
    shape = tuple(int(d) for d in out.shape) or (1,)
    if tuple(kept) != shape:
        idx = ctx.op("reshape", [idx], shape, name=out.name, dtype=np.int32, shape=shape)
    ctx.bind(out, idx)


def _take(ctx: LoweringContext, x: gs.Variable, axis: int, order: np.ndarray, name: str) -> gs.Variable:
    """x with `axis` reordered by `order`: one slice per index, concatenated."""
    pieces = []
    for i in order:
        start = [0] * len(x.shape)
        end = list(x.shape)
        start[axis], end[axis] = int(i), int(i) + 1
        shape = [1 if d == axis else s for d, s in enumerate(x.shape)]
        pieces.append(ctx.op("slice", [x], shape, name=f"{name}_{i}", slice_start=start, slice_end=end,
                             slice_step=[1] * len(x.shape)))
    return pieces[0] if len(pieces) == 1 else ctx.op("concat", pieces, x.shape, name=name, dim=axis)


@register("ArgMax", versions=(1, 11, 12, 13), ttnn=("argmax",),
          note="keepdims; select_last_index by reversing the axis")
def arg_max(ctx: LoweringContext, node: gs.Node) -> None:
    """ArgMax-1; 11: negative axes; 12: `select_last_index` (default 0: the old first index); 13: bfloat16."""
    _arg_reduce(ctx, node, largest=True)


@register("ArgMin", versions=(1, 11, 12, 13), ttnn=("neg", "argmax"), note="argmax of -x")
def arg_min(ctx: LoweringContext, node: gs.Node) -> None:
    """ArgMin-1; 11: negative axes; 12: `select_last_index` (default 0: the old first index); 13: bfloat16."""
    _arg_reduce(ctx, node, largest=False)
