"""MaxPool, AveragePool and GlobalAveragePool -> ttnn pooling ops on flattened NHWC tensors."""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.context import NHWC, LoweringContext
from onnx2ttnn.lowering.conv import window_attrs
from onnx2ttnn.lowering.registry import register


def _pool(ctx: LoweringContext, node: gs.Node, ttnn_op: str, **extra) -> None:
    x, form = ctx.value_nhwc(node.inputs[0])
    kernel = tuple(node.attrs["kernel_shape"])
    if len(kernel) != 2:
        raise ConversionError(f"node {ctx.source!r}: only 2-D pooling is supported")
    strides, dilations, padding = window_attrs(node, (form.h, form.w), kernel)
    if len(padding) == 4:
        raise ConversionError(f"node {ctx.source!r}: asymmetric pooling pads {padding} are not supported")
    out = node.outputs[0]
    n, c, oh, ow = out.shape
    out_form = NHWC(n, oh, ow, c)
    attrs = dict(batch_size=form.n, input_h=form.h, input_w=form.w, channels=form.c, kernel_size=list(kernel),
                 stride=list(strides), padding=list(padding), ceil_mode=bool(node.attrs.get("ceil_mode", 0)))
    if ttnn_op == "max_pool2d":
        attrs["dilation"] = list(dilations)
    elif dilations != (1, 1):
        raise ConversionError(f"node {ctx.source!r}: dilated AveragePool is not supported")
    y = ctx.op(ttnn_op, [x], out_form.flat_shape, name=out.name, **attrs, **extra)
    ctx.bind(out, y, out_form)


@register("MaxPool", 1, ttnn=("max_pool2d",))
def max_pool(ctx: LoweringContext, node: gs.Node) -> None:
    if len(node.outputs) > 1 and node.outputs[1].name and node.outputs[1].outputs:
        raise ConversionError(f"node {ctx.source!r}: MaxPool indices output is not supported")
    _pool(ctx, node, "max_pool2d")


@register("AveragePool", 1, ttnn=("avg_pool2d",))
def average_pool(ctx: LoweringContext, node: gs.Node) -> None:
    _pool(ctx, node, "avg_pool2d", count_include_pad=bool(node.attrs.get("count_include_pad", 0)))


@register("GlobalAveragePool", 1, ttnn=("global_avg_pool2d",))
def global_average_pool(ctx: LoweringContext, node: gs.Node) -> None:
    x, form = ctx.value_nhwc(node.inputs[0])
    nhwc = (form.n, form.h, form.w, form.c)
    x4 = ctx.op("reshape", [x], nhwc, name=node.inputs[0].name + "_nhwc4", shape=nhwc)
    pooled = ctx.op("global_avg_pool2d", [x4], (form.n, 1, 1, form.c), name=node.outputs[0].name + "_pooled")
    out_form = NHWC(form.n, 1, 1, form.c)
    y = ctx.op("reshape", [pooled], out_form.flat_shape, name=node.outputs[0].name, shape=out_form.flat_shape)
    ctx.bind(node.outputs[0], y, out_form)
