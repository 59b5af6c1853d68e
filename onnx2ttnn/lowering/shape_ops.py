"""Ops that only change the shape or the order of dims: Reshape, Flatten, (Un)Squeeze, Transpose, Expand."""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register


def reshape_to_output(ctx: LoweringContext, node: gs.Node) -> None:
    """The output shape is static after inference: a single ttnn.reshape to it (a view when possible)."""
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    shape = tuple(int(d) for d in out.shape) or (1,)
    y = x if tuple(x.shape) == shape else ctx.op("reshape", [x], shape, name=out.name, shape=shape)
    ctx.bind(out, y)


for _op_type, _since in (("Reshape", 5), ("Flatten", 1), ("Squeeze", 1), ("Unsqueeze", 1)):
    register(_op_type, _since, ttnn=("reshape",))(reshape_to_output)


@register("Transpose", 1, ttnn=("permute",))
def transpose(ctx: LoweringContext, node: gs.Node) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    perm = tuple(int(p) for p in node.attrs.get("perm", range(rank - 1, -1, -1)))
    out = node.outputs[0]
    y = x if perm == tuple(range(rank)) else ctx.op("permute", [x], out.shape, name=out.name, dims=perm)
    ctx.bind(out, y)


@register("Expand", 8, ttnn=("reshape", "repeat"))
def expand(ctx: LoweringContext, node: gs.Node) -> None:
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    shape = tuple(int(d) for d in out.shape)
    in_shape = (1,) * (len(shape) - len(x.shape)) + tuple(x.shape)
    if in_shape != tuple(x.shape):
        x = ctx.op("reshape", [x], in_shape, name=node.inputs[0].name + "_ranked", shape=in_shape)
    repeats = tuple(o // i for o, i in zip(shape, in_shape))
    y = x if all(r == 1 for r in repeats) else ctx.op("repeat", [x], shape, name=out.name, repeat_dims=repeats)
    ctx.bind(out, y)


@register("Identity", 1, ttnn=())
def identity(ctx: LoweringContext, node: gs.Node) -> None:
    ctx.bind(node.outputs[0], *ctx.value_with_form(node.inputs[0]))
