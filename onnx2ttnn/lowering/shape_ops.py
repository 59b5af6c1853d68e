"""Ops that only change the shape or the order of dims: Reshape, Flatten, (Un)Squeeze, Transpose, Expand,
Tile, DepthToSpace, SpaceToDepth."""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register


def _attr_axes(node: gs.Node) -> list[int]:
    """The `axes` attribute of the first (Un)Squeeze schemas; [] when absent."""
    return [int(a) for a in node.attrs.get("axes", [])]


def _input_axes(ctx: LoweringContext, node: gs.Node, what: str) -> list[int]:
    """The constant `axes` input of the newer (Un)Squeeze schemas; [] when absent."""
    if len(node.inputs) > 1 and node.inputs[1].name:
        return [int(a) for a in ctx.require_constant(node.inputs[1], what).reshape(-1)]
    return []


def _reshaped(ctx: LoweringContext, node: gs.Node, in_shape: tuple) -> tuple:
    """Reshape's output shape from its constant `shape` input (0 copies the input dim unless allowzero)."""
    target = [int(d) for d in ctx.require_constant(node.inputs[1], "Reshape shape").reshape(-1)]
    if not int(node.attrs.get("allowzero", 0)):
        target = [in_shape[i] if d == 0 else d for i, d in enumerate(target)]
    if -1 in target:
        known = int(np.prod([d for d in target if d != -1], dtype=np.int64))
        target[target.index(-1)] = int(np.prod(in_shape, dtype=np.int64)) // known if known else 0
    return tuple(target)


def _flattened(node: gs.Node, in_shape: tuple) -> tuple:
    rank = len(in_shape)
    axis = int(node.attrs.get("axis", 1)) % (rank + 1) if rank else 0
    return (int(np.prod(in_shape[:axis], dtype=np.int64)), int(np.prod(in_shape[axis:], dtype=np.int64)))


def _squeezed(in_shape: tuple, axes: list[int]) -> tuple:
    """in_shape without `axes` (without every 1 when `axes` is empty)."""
    rank = len(in_shape)
    dropped = {a % rank for a in axes} or {i for i, d in enumerate(in_shape) if d == 1}
    return tuple(d for i, d in enumerate(in_shape) if i not in dropped)


def _unsqueezed(in_shape: tuple, axes: list[int]) -> tuple:
    """in_shape with a 1 inserted at each of `axes` (positions in the output)."""
    shape = list(in_shape)
    for a in sorted(a % (len(in_shape) + len(axes)) for a in axes):
        shape.insert(a, 1)
    return tuple(shape)


def reshape_to_output(ctx: LoweringContext, node: gs.Node, shape_of) -> None:
    """A single ttnn.reshape to the output shape (a view when possible).  ONNX inference leaves the shape
    symbolic when the shape operand only became constant by folding: then `shape_of(input shape)` computes it."""
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    static = out.shape is not None and all(isinstance(d, int) for d in out.shape)
    shape = tuple(int(d) for d in out.shape) if static else shape_of(tuple(x.shape))
    shape = shape or (1,)
    y = x if tuple(x.shape) == shape else ctx.op("reshape", [x], shape, name=out.name, shape=shape)
    ctx.bind(out, y)


@register("Reshape", versions=(5, 13, 14, 19, 21, 23, 24, 25), ttnn=("reshape",))
def reshape(ctx: LoweringContext, node: gs.Node) -> None:
    """Reshape-5: the shape is an input (Reshape-1 had an attribute and no shape inference: not claimed);
    13: bfloat16; 14: `allowzero` (default 0: a 0 copies the input dim, as before); 19-25: float8 and
    4-/2-bit types, which ttnn has no counterpart for."""
    reshape_to_output(ctx, node, lambda shape: _reshaped(ctx, node, shape))


@register("Flatten", versions=(1, 9, 11, 13, 21, 23, 24, 25), ttnn=("reshape",))
def flatten(ctx: LoweringContext, node: gs.Node) -> None:
    """Flatten-1 (float types); 9: every type; 11: negative axes; 13: bfloat16; 21-25: float8 and 4-/2-bit
    types."""
    reshape_to_output(ctx, node, lambda shape: _flattened(node, shape))


@register("Squeeze", versions=(1, 11), ttnn=("reshape",))
def squeeze_1(ctx: LoweringContext, node: gs.Node) -> None:
    """Squeeze-1: the `axes` attribute (absent: every dim of size 1); 11: negative axes."""
    reshape_to_output(ctx, node, lambda shape: _squeezed(shape, _attr_axes(node)))


@register("Squeeze", versions=(13, 21, 23, 24, 25), ttnn=("reshape",))
def squeeze(ctx: LoweringContext, node: gs.Node) -> None:
    """Squeeze-13: `axes` became an optional input (it was an attribute), bfloat16; 21-25: float8 and
    4-/2-bit types."""
    reshape_to_output(ctx, node, lambda shape: _squeezed(shape, _input_axes(ctx, node, "Squeeze axes")))


@register("Unsqueeze", versions=(1, 11), ttnn=("reshape",))
def unsqueeze_1(ctx: LoweringContext, node: gs.Node) -> None:
    """Unsqueeze-1: the `axes` attribute; 11: negative axes."""
    reshape_to_output(ctx, node, lambda shape: _unsqueezed(shape, _attr_axes(node)))


@register("Unsqueeze", versions=(13, 21, 23, 24, 25), ttnn=("reshape",))
def unsqueeze(ctx: LoweringContext, node: gs.Node) -> None:
    """Unsqueeze-13: `axes` became an input (it was an attribute), bfloat16; 21-25: float8 and 4-/2-bit
    types."""
    reshape_to_output(ctx, node, lambda shape: _unsqueezed(shape, _input_axes(ctx, node, "Unsqueeze axes")))


@register("Transpose", versions=(1, 13, 21, 23, 24, 25), ttnn=("permute",))
def transpose(ctx: LoweringContext, node: gs.Node) -> None:
    """Transpose-1; 13: bfloat16; 21-25: float8 and 4-/2-bit types."""
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    perm = tuple(int(p) for p in node.attrs.get("perm", range(rank - 1, -1, -1)))
    out = node.outputs[0]
    shape = [x.shape[p] for p in perm]
    y = x if perm == tuple(range(rank)) else ctx.op("permute", [x], shape, name=out.name, dims=perm)
    ctx.bind(out, y)


@register("Expand", versions=(8, 13), ttnn=("reshape", "repeat"))
def expand(ctx: LoweringContext, node: gs.Node) -> None:
    """Expand-8; 13: bfloat16."""
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    shape = tuple(int(d) for d in out.shape)
    in_shape = (1,) * (len(shape) - len(x.shape)) + tuple(x.shape)
    if in_shape != tuple(x.shape):
        x = ctx.op("reshape", [x], in_shape, name=node.inputs[0].name + "_ranked", shape=in_shape)
    repeats = tuple(o // i for o, i in zip(shape, in_shape))
    y = x if all(r == 1 for r in repeats) else ctx.op("repeat", [x], shape, name=out.name, repeat_dims=repeats)
    ctx.bind(out, y)


@register("Identity", versions=(1, 13, 14, 16, 19, 21, 23, 24, 25), ttnn=())
def identity(ctx: LoweringContext, node: gs.Node) -> None:
    """Identity-1; 13: bfloat16; 14: sequences; 16: optionals; 19-25: float8 and 4-/2-bit types.  Sequences
    and optionals never reach a rule (no ttnn value holds one)."""
    ctx.bind(node.outputs[0], *ctx.value_with_form(node.inputs[0]))


@register("Tile", versions=(6, 13), ttnn=("repeat",), note="constant repeats")
def tile(ctx: LoweringContext, node: gs.Node) -> None:
    """Tile-6: `repeats` per dim (Tile-1 repeated along one `axis`: not claimed); 13: bfloat16."""
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


@register("DepthToSpace", versions=(1, 11, 13, 28), ttnn=("reshape", "permute"), note="4-D NCHW; DCR and CRD modes")
def depth_to_space(ctx: LoweringContext, node: gs.Node) -> None:
    """DepthToSpace-1 (DCR order); 11: `mode` (default DCR); 13: bfloat16; 28: the same signature."""
    n, c, h, w = (int(d) for d in node.inputs[0].shape)
    b = int(node.attrs["blocksize"])
    if _mode(node) == "CRD":
        _blocks_to_output(ctx, node, (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3))
    else:
        _blocks_to_output(ctx, node, (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2))


@register("SpaceToDepth", versions=(1, 13, 28), ttnn=("reshape", "permute"), note="4-D NCHW; DCR and CRD modes")
def space_to_depth(ctx: LoweringContext, node: gs.Node) -> None:
    """SpaceToDepth-1 (DCR order); 13: bfloat16; 28: `mode` (default DCR)."""
    n, c, h, w = (int(d) for d in node.inputs[0].shape)
    b = int(node.attrs["blocksize"])
    crd = _mode(node) == "CRD"
    _blocks_to_output(ctx, node, (n, c, h // b, b, w // b, b), (0, 1, 3, 5, 2, 4) if crd else (0, 3, 5, 1, 2, 4))
