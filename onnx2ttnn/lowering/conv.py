"""Conv (2-D, with a fused activation) and BatchNormalization -> ttnn.conv2d on flattened NHWC tensors.

ttnn.conv2d reads and writes [1, 1, N*H*W, C]; weights [OC, IC/groups, KH, KW] and bias [1, 1, 1, OC] stay
on the host in float32 (ttnn prepares them for the device).
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.graph import DEVICE, TTNNCall, TTNNRef
from onnx2ttnn.lowering.context import NHWC, LoweringContext
from onnx2ttnn.lowering.registry import register

ACTIVATIONS = {"relu": "RELU", "relu6": "RELU6"}


def spatial_pads(node: gs.Node, in_hw, kernel, strides, dilations) -> tuple[int, int, int, int]:
    """ONNX pads / auto_pad of a 2-D window op as (top, bottom, left, right)."""
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if isinstance(auto_pad, bytes):
        auto_pad = auto_pad.decode()
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = []
        for size, k, s, d in zip(in_hw, kernel, strides, dilations):
            out = -(-size // s)
            total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
            small, big = total // 2, total - total // 2
            pads.append((big, small) if auto_pad == "SAME_LOWER" else (small, big))
        return pads[0][0], pads[0][1], pads[1][0], pads[1][1]
    if auto_pad == "VALID":
        return 0, 0, 0, 0
    p = list(node.attrs.get("pads", [0, 0, 0, 0]))
    return p[0], p[2], p[1], p[3]


def window_attrs(node: gs.Node, in_hw, kernel):
    strides = tuple(node.attrs.get("strides", [1, 1]))
    dilations = tuple(node.attrs.get("dilations", [1, 1]))
    pads = spatial_pads(node, in_hw, kernel, strides, dilations)
    padding = (pads[0], pads[2]) if pads[0] == pads[1] and pads[2] == pads[3] else pads
    return strides, dilations, padding


def lower_conv(ctx: LoweringContext, node: gs.Node, activation: str = "") -> None:
    x, form = ctx.value_nhwc(node.inputs[0])
    weight = ctx.require_constant(node.inputs[1], "Conv weight")
    if weight.ndim != 4:
        raise ConversionError(f"node {ctx.source!r}: only 2-D convolutions are supported (weight {weight.shape})")
    bias = None
    if len(node.inputs) > 2 and node.inputs[2].name:
        bias = ctx.require_constant(node.inputs[2], "Conv bias")
    oc, _, kh, kw = weight.shape
    groups = int(node.attrs.get("group", 1))
    strides, dilations, padding = window_attrs(node, (form.h, form.w), (kh, kw))
    out = node.outputs[0]
    n, _, oh, ow = out.shape
    out_form = NHWC(n, oh, ow, oc)
    inputs = [x, ctx.param(weight, node.inputs[1].name, key=node.inputs[1].name, host=True)]
    if bias is not None:
        inputs.append(ctx.param(bias.reshape(1, 1, 1, oc), node.inputs[2].name, key=node.inputs[2].name,
                                host=True))
    config = None
    if activation:
        config = TTNNCall("Conv2dConfig", activation=TTNNCall("UnaryWithParam",
                                                              TTNNRef(f"UnaryOpType.{ACTIVATIONS[activation]}")))
    y = ctx.op("conv2d", inputs, out_form.flat_shape, name=out.name, device=DEVICE,
               in_channels=form.c, out_channels=int(oc), batch_size=form.n, input_height=form.h,
               input_width=form.w, kernel_size=(int(kh), int(kw)), stride=strides, padding=padding,
               dilation=dilations, groups=groups, conv_config=config)
    ctx.bind(out, y, out_form)


@register("Conv", 1, ttnn=("conv2d",), note="2-D; NCHW handled as flattened NHWC")
def conv(ctx: LoweringContext, node: gs.Node) -> None:
    lower_conv(ctx, node)


@register("ConvAct", 1, domain="onnx2ttnn", ttnn=("conv2d",), note="Conv + Relu/Clip(0,6) fused")
def conv_act(ctx: LoweringContext, node: gs.Node) -> None:
    lower_conv(ctx, node, node.attrs["activation"])


@register("BatchNormalization", 9, ttnn=("multiply", "add"), note="inference; folded into a preceding Conv")
def batch_norm(ctx: LoweringContext, node: gs.Node) -> None:
    scale, shift = batch_norm_affine(ctx, node)
    x, form = ctx.value_with_form(node.inputs[0])
    out = node.outputs[0]
    c = scale.size
    if form is not None:
        shape, key = (1, 1, 1, c), "nhwc"
    else:
        shape, key = (1, c) + (1,) * (len(out.shape) - 2), "nchw"
    s = ctx.float_param(scale.reshape(shape), node.inputs[1].name + "_scale", key=(node.name, "scale", key))
    b = ctx.float_param(shift.reshape(shape), node.inputs[2].name + "_shift", key=(node.name, "shift", key))
    y = ctx.op("multiply", [x, s], x.shape, name=out.name + "_scaled")
    ctx.bind(out, ctx.op("add", [y, b], x.shape, name=out.name), form)


def batch_norm_affine(ctx: LoweringContext, node: gs.Node) -> tuple[np.ndarray, np.ndarray]:
    """Inference BatchNormalization as y = x * scale + shift (per channel)."""
    gamma, beta, mean, var = (ctx.require_constant(t, "BatchNormalization " + what).astype(np.float64)
                              for t, what in zip(node.inputs[1:5], ("scale", "bias", "mean", "var")))
    if node.attrs.get("training_mode", 0):
        raise ConversionError(f"node {ctx.source!r}: BatchNormalization in training mode is not supported")
    scale = gamma / np.sqrt(var + float(node.attrs.get("epsilon", 1e-5)))
    return scale.astype(np.float32), (beta - mean * scale).astype(np.float32)
