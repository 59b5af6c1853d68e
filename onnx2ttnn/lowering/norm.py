"""Softmax and LayerNormalization -> ttnn.softmax / ttnn.layer_norm (TILE inputs)."""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register


@register("Softmax", 13, ttnn=("softmax",))
def softmax(ctx: LoweringContext, node: gs.Node) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    axis = int(node.attrs.get("axis", -1)) % rank
    dim = -1 if axis == rank - 1 else axis
    ctx.bind(node.outputs[0], ctx.op("softmax", [x], x.shape, name=node.outputs[0].name, dim=dim,
                                     numeric_stable=True))


@register("Softmax", 1, ttnn=("softmax",), note="opsets < 13: only the last axis")
def softmax_1(ctx: LoweringContext, node: gs.Node) -> None:
    rank = len(node.inputs[0].shape)
    if int(node.attrs.get("axis", 1)) % rank != rank - 1:
        raise ConversionError(f"node {ctx.source!r}: Softmax before opset 13 is supported on the last axis only")
    softmax(ctx, node)


@register("LayerNormalization", 17, ttnn=("layer_norm",), note="normalised over the last axis")
def layer_norm(ctx: LoweringContext, node: gs.Node) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    if int(node.attrs.get("axis", -1)) % rank != rank - 1:
        raise ConversionError(f"node {ctx.source!r}: LayerNormalization over more than the last axis "
                              "is not supported")
    if len(node.outputs) > 1 and any(o.outputs for o in node.outputs[1:]):
        raise ConversionError(f"node {ctx.source!r}: LayerNormalization mean/inv_std outputs are not supported")
    width = x.shape[-1]
    attrs = {"epsilon": float(node.attrs.get("epsilon", 1e-5))}
    inputs = [x]
    scale = ctx.require_constant(node.inputs[1], "LayerNormalization scale")
    inputs.append(ctx.float_param(np.broadcast_to(scale, (width,)).reshape(1, width), node.inputs[1].name,
                                  key=(node.inputs[1].name, "ln")))
    if len(node.inputs) > 2 and node.inputs[2].name:
        bias = ctx.require_constant(node.inputs[2], "LayerNormalization bias")
        inputs.append(ctx.float_param(np.broadcast_to(bias, (width,)).reshape(1, width), node.inputs[2].name,
                                      key=(node.inputs[2].name, "ln")))
    ctx.bind(node.outputs[0], ctx.op("layer_norm", inputs, x.shape, name=node.outputs[0].name, **attrs))
