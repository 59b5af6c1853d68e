"""Ops that only change the shape or the order of dims: Reshape, Flatten, (Un)Squeeze, Transpose, Expand,
Tile, DepthToSpace, SpaceToDepth."""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register


def _axes(ctx: LoweringContext, node: gs.Node, what: str) -> list[int]:
    """Axes from the attribute (older opsets) or the constant second input (newer ones); [] when absent."""
    if "axes" in node.attrs:
        return [int(a) for a in node.attrs["axes"]]
    if len(node.inputs) > 1 and node.inputs[1].name:
        return [int(a) for a in ctx.require_constant(node.inputs[1], what).reshape(-1)]
    return []


def output_shape(ctx: LoweringContext, node: gs.Node, in_shape: tuple) -> tuple:
    """The output shape of a shape-only op, computed from its input shape and constant operands (ONNX
    inference leaves it symbolic when the shape operand only became constant by folding)."""
    op, rank = node.op, len(in_shape)
    if op == "Reshape":
        target = [int(d) for d in ctx.require_constant(node.inputs[1], "Reshape shape").reshape(-1)]
        if not int(node.attrs.get("allowzero", 0)):
            target = [in_shape[i] if d == 0 else d for i, d in enumerate(target)]
        if -1 in target:
            known = int(np.prod([d for d in target if d != -1], dtype=np.int64))
            target[target.index(-1)] = int(np.prod(in_shape, dtype=np.int64)) // known if known else 0
        return tuple(target)
    if op == "Flatten":
        axis = int(node.attrs.get("axis", 1)) % (rank + 1) if rank else 0
        return (int(np.prod(in_shape[:axis], dtype=np.int64)), int(np.prod(in_shape[axis:], dtype=np.int64)))
    if op == "Squeeze":
        axes = {a % rank for a in _axes(ctx, node, "Squeeze axes")} or {i for i, d in enumerate(in_shape) if d == 1}
        return tuple(d for i, d in enumerate(in_shape) if i not in axes)
    axes = sorted(a % (rank + len(_axes(ctx, node, "Unsqueeze axes"))) for a in _axes(ctx, node, "Unsqueeze axes"))
    shape = list(in_shape)
    for a in axes:
        shape.insert(a, 1)
    return tuple(shape)


def reshape_to_output(ctx: LoweringContext, node: gs.Node) -> None:
    """A single ttnn.reshape to the output shape (a view when possible)."""
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    static = out.shape is not None and all(isinstance(d, int) for d in out.shape)
    shape = tuple(int(d) for d in out.shape) if static else output_shape(ctx, node, tuple(x.shape))
    shape = shape or (1,)
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
    shape = [x.shape[p] for p in perm]
    y = x if perm == tuple(range(rank)) else ctx.op("permute", [x], shape, name=out.name, dims=perm)
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


@register("Tile", 6, ttnn=("repeat",), note="constant repeats")
def tile(ctx: LoweringContext, node: gs.Node) -> None:
    x = ctx.value(node.inputs[0])
    repeats = tuple(int(r) for r in ctx.require_constant(node.inputs[1], "Tile repeats").reshape(-1))
    out = node.outputs[0]
    y = x if all(r == 1 for r in repeats) else ctx.op("repeat", [x], out.shape, name=out.name, repeat_dims=repeats)
    ctx.bind(out, y)


def _blocks_to_output(ctx: LoweringContext, node: gs.Node, split: tuple, perm: tuple) -> None:
    """reshape to `split`, permute by `perm`, reshape to the output: how (depth|space)-to-(space|depth) move
    values between the channel and the spatial dims."""
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    blocks = ctx.op("reshape", [x], split, name=out.name + "_blocks", shape=split)
    moved = ctx.op("permute", [blocks], [split[p] for p in perm], name=out.name + "_moved", dims=perm)
    shape = tuple(int(d) for d in out.shape)
    ctx.bind(out, ctx.op("reshape", [moved], shape, name=out.name, shape=shape))


def _mode(node: gs.Node) -> str:
    mode = node.attrs.get("mode", "DCR")
    return mode.decode() if isinstance(mode, bytes) else mode


@register("DepthToSpace", 1, ttnn=("reshape", "permute"), note="4-D NCHW; DCR and CRD modes")
def depth_to_space(ctx: LoweringContext, node: gs.Node) -> None:
    n, c, h, w = (int(d) for d in node.inputs[0].shape)
    b = int(node.attrs["blocksize"])
    if _mode(node) == "CRD":
        _blocks_to_output(ctx, node, (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3))
    else:
        _blocks_to_output(ctx, node, (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2))


@register("SpaceToDepth", 1, ttnn=("reshape", "permute"), note="4-D NCHW; DCR and CRD modes")
def space_to_depth(ctx: LoweringContext, node: gs.Node) -> None:
    n, c, h, w = (int(d) for d in node.inputs[0].shape)
    b = int(node.attrs["blocksize"])
    crd = _mode(node) == "CRD"
    _blocks_to_output(ctx, node, (n, c, h // b, b, w // b, b), (0, 1, 3, 5, 2, 4) if crd else (0, 3, 5, 1, 2, 4))
