"""Conv and ConvTranspose (1-D as 2-D with H=1, 2-D; with a fused activation) and BatchNormalization ->
ttnn.conv2d / ttnn.conv_transpose2d on flattened NHWC tensors.

ttnn.conv2d reads and writes [1, 1, N*H*W, C]; weights [OC, IC/groups, KH, KW] and bias [1, 1, 1, OC] stay
on the host in float32 (ttnn prepares them for the device).  ttnn.conv_transpose2d takes ONNX's weight layout
[IC, OC/groups, KH, KW] as is and pads as (top, bottom, left, right); ONNX output_shape / SAME padding become
explicit pads and output_padding.  3-D convolutions are declined: their host fallbacks (fallback/conv.py)
compute them.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.graph import DEVICE, TTNNCall, TTNNRef
from onnx2ttnn.ir.layout import LAYOUT_DTYPES
from onnx2ttnn.lowering import conv_frames
from onnx2ttnn.lowering.context import NHWC, LoweringContext
from onnx2ttnn.lowering.pool import window_pads
from onnx2ttnn.lowering.weight_codes import conv_codes
from onnx2ttnn.lowering.weight_dtype import PREPARED, weight_dtype
from onnx2ttnn.lowering.registry import register

ACTIVATIONS = {"relu": "RELU", "relu6": "RELU6"}


def _ints(node: gs.Node, name: str, rank: int, default: int) -> tuple[int, ...]:
    return tuple(int(v) for v in node.attrs.get(name, [default] * rank))


def _padding(pads) -> tuple[int, ...]:
    """ttnn padding: (h, w) when symmetric, else (top, bottom, left, right)."""
    (top, bottom), (left, right) = pads
    return (top, left) if (top, left) == (bottom, right) else (top, bottom, left, right)


def _input_2d(ctx: LoweringContext, tensor: gs.Tensor) -> tuple[gs.Variable, NHWC]:
    """The input as flattened NHWC; a 1-D [N, C, L] input as a 2-D one with H=1."""
    if len(tensor.shape) == 4:
        return ctx.value_nhwc(tensor)
    if len(tensor.shape) != 3:
        ctx.decline(f"only 1-D and 2-D convolutions run on ttnn (input {tuple(tensor.shape)})")
    x, form = ctx.value_with_form(tensor)
    if form is not None:
        return x, form
    n, c, length = (int(d) for d in tensor.shape)
    form = NHWC(n, 1, length, c)
    nlc = ctx.op("permute", [x], (n, length, c), name=tensor.name + "_nlc", dims=(0, 2, 1))
    return ctx.op("reshape", [nlc], form.flat_shape, name=tensor.name + "_flat", shape=form.flat_shape), form


def _bind_output(ctx: LoweringContext, out: gs.Tensor, y: gs.Variable, form: NHWC) -> None:
    """Bind a flattened NHWC result; a 1-D output goes back to [N, C, L] at once."""
    if len(out.shape) == 4:
        ctx.bind(out, y, form)
        return
    nlc = (form.n, form.w, form.c)
    r = ctx.op("reshape", [y], nlc, name=out.name + "_nlc", shape=nlc)
    ctx.bind(out, ctx.op("permute", [r], (form.n, form.c, form.w), name=out.name, dims=(0, 2, 1)))


def _weight_2d(ctx: LoweringContext, node: gs.Node, what: str) -> np.ndarray:
    weight = ctx.require_constant(node.inputs[1], f"{what} weight")
    if weight.ndim == 3:
        weight = weight[:, :, None, :]
    if weight.ndim != 4:
        ctx.decline(f"only 1-D and 2-D {what}s run on ttnn (weight {weight.shape})")
    return weight


def _attrs_2d(node: gs.Node, rank: int):
    """strides and dilations of a 1-D or 2-D op as 2-D pairs."""
    strides, dilations = _ints(node, "strides", rank, 1), _ints(node, "dilations", rank, 1)
    if rank == 1:
        strides, dilations = (1,) + strides, (1,) + dilations
    return strides, dilations


def _bias(ctx: LoweringContext, node: gs.Node, what: str, channels: int, scale=None):
    """The bias as conv2d takes it; divided by the per-channel `scale` of a conv on codes (multiplied after)."""
    if len(node.inputs) > 2 and node.inputs[2].name:
        bias = ctx.require_constant(node.inputs[2], f"{what} bias")
        if scale is not None:
            bias = (np.asarray(bias, np.float32).reshape(-1) / scale).astype(np.float32)
            return ctx.param(bias.reshape(1, 1, 1, channels), node.inputs[2].name + "_coded",
                             key=(node.inputs[2].name, "coded"), host=True)
        return ctx.param(bias.reshape(1, 1, 1, channels), node.inputs[2].name, key=node.inputs[2].name, host=True)
    return None


def _conv_config(activation: str, weights_dtype: str | None = None):
    """conv2d's Conv2dConfig: a fused activation, and the block-float format of the prepared weights
    (lowering/weight_dtype.py; without one ttnn prepares them in the host weight's float32)."""
    args = {}
    if weights_dtype is not None:
        args["weights_dtype"] = TTNNRef(LAYOUT_DTYPES[weights_dtype][0])
    if activation:
        args["activation"] = TTNNCall("UnaryWithParam", TTNNRef(f"UnaryOpType.{ACTIVATIONS[activation]}"))
    return TTNNCall("Conv2dConfig", **args) if args else None


def lower_conv(ctx: LoweringContext, node: gs.Node, activation: str = "") -> None:
    rank = len(node.inputs[0].shape) - 2
    x, form = _input_2d(ctx, node.inputs[0])
    weight = _weight_2d(ctx, node, "Conv")
    oc, _, kh, kw = weight.shape
    groups = int(node.attrs.get("group", 1))
    strides, dilations = _attrs_2d(node, rank)
    kernel = tuple(weight.shape[2:]) if rank == 2 else (int(kw),)
    pads = window_pads(ctx, node, tuple(node.inputs[0].shape[2:]), kernel, strides[-rank:], dilations[-rank:])
    if rank == 1:
        pads = [(0, 0)] + pads
    out = node.outputs[0]
    if conv_frames.applies(form, weight, strides, dilations, pads, groups):  # a long 1-D kernel: frames @ W
        bias = ctx.require_constant(node.inputs[2], "Conv bias") if len(node.inputs) > 2 and node.inputs[2].name else None
        y, frames_form = conv_frames.lower(ctx, node, x, form, weight, bias, activation)
        _bind_output(ctx, out, y, frames_form)
        return
    out_form = NHWC(int(out.shape[0]), 1 if rank == 1 else int(out.shape[2]), int(out.shape[-1]), int(oc))
    # prepared weights are [KH*KW*IC/groups, OC] on the device: bfloat8_b groups run along the out channels
    prepared = PREPARED.to(np.asarray(weight))
    name = node.inputs[1].name
    coded = conv_codes(ctx, name, np.asarray(weight)) if activation in ("", "relu") else None
    if coded is not None:  # relu commutes with the positive scales multiplied after it
        weight, scale = coded
        ctx.note_weight_dtype(name, "f32", "integer codes (exact), the scale applied after the conv")
        ctx.dequantized.setdefault(name + "_codes", np.float32(1.0))  # the weights file keeps them as int8 codes
        weights_dtype, name = None, name + "_codes"
    else:
        steps = np.asarray(ctx.dequantized.get(name, 1.0))
        steps = PREPARED.to(steps) if steps.ndim == weight.ndim else steps  # per out channel: a row
        weights_dtype = weight_dtype(ctx, name, prepared, steps)  # before the upload: it notes why
    inputs = [x, ctx.param(weight, name, key=(name, "conv2d"), host=True)]
    bias = _bias(ctx, node, "Conv", int(oc), coded[1] if coded is not None else None)
    if bias is not None:
        inputs.append(bias)
    y = ctx.op("conv2d", inputs, out_form.flat_shape, name=out.name + ("_codes" if coded else ""), device=DEVICE,
               in_channels=form.c, out_channels=int(oc), batch_size=form.n, input_height=form.h,
               input_width=form.w, kernel_size=(int(kh), int(kw)), stride=strides, padding=_padding(pads),
               dilation=dilations, groups=groups, conv_config=_conv_config(activation, weights_dtype))
    if coded is not None:
        source = node.inputs[1].name
        row = ctx.float_param(coded[1].reshape(1, -1), source + "_scale", key=(source, "scale"))
        y = ctx.op("multiply", [y, row], out_form.flat_shape, name=out.name)
    _bind_output(ctx, out, y, out_form)


@register("Conv", versions=(1, 11, 22), ttnn=("conv2d",), note="1-D (as H=1) and 2-D; NCHW handled as flattened NHWC; "
          "a long 1-D kernel of whole strides as frames and a linear")
def conv(ctx: LoweringContext, node: gs.Node) -> None:
    """Conv-1; 11: SAME auto_pad spelled out as output = ceil(input / stride), what window_pads computes (1
    said the output matches the input, the same at stride 1), default strides/dilations written down; 22:
    bfloat16."""
    lower_conv(ctx, node)


@register("ConvAct", versions=(1,), domain="onnx2ttnn", ttnn=("conv2d",), note="Conv + Relu/Clip(0,6) fused")
def conv_act(ctx: LoweringContext, node: gs.Node) -> None:
    lower_conv(ctx, node, node.attrs["activation"])


def _transpose_pads(ctx: LoweringContext, node: gs.Node, in_spatial, kernel, strides, dilations, out_spatial):
    """(pads per dim, output_padding per dim) of a ConvTranspose, from pads or output_shape / auto_pad."""
    rank = len(kernel)
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    out_pad = list(_ints(node, "output_padding", rank, 0))
    if "output_shape" not in node.attrs and auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        if auto_pad not in ("NOTSET", "VALID"):
            raise ConversionError(f"node {ctx.source!r}: auto_pad {auto_pad!r} is not supported")
        p = [int(v) for v in node.attrs.get("pads", [0] * (2 * rank))] if auto_pad == "NOTSET" else [0] * (2 * rank)
        return list(zip(p[:rank], p[rank:])), out_pad
    pads = []
    for i, (size, k, s, d, o) in enumerate(zip(in_spatial, kernel, strides, dilations, out_spatial)):
        total = s * (size - 1) + out_pad[i] + (k - 1) * d + 1 - o
        if total < 0:  # a larger output_shape: the extra rows come from output padding
            out_pad[i] -= total
            total = 0
        small, big = total // 2, total - total // 2
        pads.append((small, big) if auto_pad == "SAME_UPPER" else (big, small))
    return pads, out_pad


@register("ConvTranspose", versions=(1, 11, 22), ttnn=("conv_transpose2d",), note="1-D (as H=1) and 2-D")
def conv_transpose(ctx: LoweringContext, node: gs.Node) -> None:
    """ConvTranspose-1; 11: the SAME_UPPER pad split fixed in the text (1 wrote `!=` for `==`: onnxruntime
    and the onnx reference compute 11's split for both), output_padding bounded by stride/dilation; 22:
    bfloat16."""
    rank = len(node.inputs[0].shape) - 2
    x, form = _input_2d(ctx, node.inputs[0])
    weight = _weight_2d(ctx, node, "ConvTranspose")
    ic, oc_per_group, kh, kw = weight.shape
    groups = int(node.attrs.get("group", 1))
    oc = int(oc_per_group) * groups
    strides, dilations = _attrs_2d(node, rank)
    kernel = (int(kh), int(kw))
    out = node.outputs[0]
    in_spatial, out_spatial = tuple(node.inputs[0].shape[2:]), tuple(int(d) for d in out.shape[2:])
    pads, out_pad = _transpose_pads(ctx, node, in_spatial, kernel[-rank:], strides[-rank:], dilations[-rank:],
                                    out_spatial)
    if rank == 1:
        pads, out_pad = [(0, 0)] + pads, [0] + out_pad
    for (b, e), op_, s, d in zip(pads, out_pad, strides, dilations):
        if op_ >= max(s, d):
            raise ConversionError(f"node {ctx.source!r}: output_padding {op_} must be smaller than the stride "
                                  f"or the dilation ({s}, {d})")
    out_form = NHWC(int(out.shape[0]), 1 if rank == 1 else out_spatial[0], out_spatial[-1], oc)
    inputs = [x, ctx.param(weight, node.inputs[1].name, key=(node.inputs[1].name, "conv_transpose2d"), host=True)]
    bias = _bias(ctx, node, "ConvTranspose", oc)
    if bias is not None:
        inputs.append(bias)
    y = ctx.op("conv_transpose2d", inputs, out_form.flat_shape, name=out.name, device=DEVICE,
               in_channels=int(ic), out_channels=oc, batch_size=form.n, input_height=form.h, input_width=form.w,
               kernel_size=kernel, stride=strides, padding=_padding(pads), output_padding=tuple(out_pad),
               dilation=dilations, groups=groups)
    _bind_output(ctx, out, y, out_form)


@register("BatchNormalization", versions=(9, 14, 15), ttnn=("multiply", "add"),
          note="inference; folded into a preceding Conv")
def batch_norm(ctx: LoweringContext, node: gs.Node) -> None:
    """BatchNormalization-9 (no `spatial`); 14: `training_mode` (refused) and the running statistics outputs
    of training; 15: scale/bias and mean/var may have their own float types."""
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
