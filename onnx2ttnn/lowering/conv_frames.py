"""A 1-D convolution with a long kernel (an STFT's framing conv: Silero VAD's 256-tap kernel at stride 128 over one
channel, openWakeWord's melspectrogram's 512 taps at stride 160) -> slices of the input, one concat and one
ttnn.linear.

ttnn.conv2d refuses such a conv on the mock n150: its DRAM path cannot slice an output one row high ("DRAM Auto
slice could not find valid slice configuration. Tried up to 1 slices for height-slicing on output dimension 1"),
and its all-in-L1 path is not taken for kernels beyond 7x7 (ir/placements.py).  With kernel k = r * stride s,
output frame i reads input positions [i*s, i*s + k): the input cut into chunks of s positions ([N, W/s, s*C]),
frame i is chunks i .. i+r-1 side by side, and the conv is frames @ W with W [k*C, OC] in (position, channel)
order.  r slices, one concat, one linear: no im2col of the whole input, nothing on the host.  A kernel that is
no whole number of strides is padded with zero taps to r = ceil(k / s) strides (the weight's rows for them are
zeros; openWakeWord's 512 taps read as 640, 25 % more multiplies), and where the last frame's padded taps reach
past the input, the input is extended by a constant of zeros (a concat), which those taps multiply by zero.
Applies to: rank-1 (H = 1) convs, group 1, dilation 1, no padding, k >= MIN_KERNEL.
"""
from __future__ import annotations

import numpy as np

from onnx2ttnn.lowering.context import NHWC, LoweringContext
from onnx2ttnn.lowering.weight_dtype import weight_dtype

MIN_KERNEL = 50  # more positions than the 7x7 the conv's all-in-L1 rule admits


def applies(form: NHWC, weight: np.ndarray, strides, dilations, pads, groups: int) -> bool:
    kh, kw = (int(d) for d in weight.shape[2:])
    return (form.h == 1 and kh == 1 and groups == 1 and tuple(dilations) == (1, 1)
            and not any(p for pair in pads for p in pair) and kw >= MIN_KERNEL and form.w >= kw)


def lower(ctx: LoweringContext, node, x, form: NHWC, weight: np.ndarray, bias, activation: str) -> tuple:
    """The frames' linear, flattened NHWC [1, 1, N*OW, OC], and its form."""
    n, w, c = form.n, form.w, form.c
    oc, k, s = int(weight.shape[0]), int(weight.shape[3]), int(node.attrs.get("strides", [1])[-1])
    r, out_w = -(-k // s), (w - k) // s + 1
    if r * s != k:  # zero taps up to whole strides
        weight = np.concatenate([weight, np.zeros(weight.shape[:3] + (r * s - k,), weight.dtype)], axis=3)
        k = r * s
    used = (out_w + r - 1) * s  # input positions some frame reads (its zero taps included)
    name = node.outputs[0].name
    rows = ctx.op("reshape", [x], (n, w, c), name=f"{name}_rows", shape=(n, w, c))
    if used > w:  # the last frames' zero taps read past the input: zeros there
        zeros = ctx.float_param(np.zeros((n, used - w, c), np.float32), f"{name}_tail_zeros")
        rows = ctx.op("concat", [rows, zeros], (n, used, c), name=f"{name}_extended", dim=1)
    elif used < w:
        rows = ctx.op("slice", [rows], (n, used, c), name=f"{name}_used", slice_start=(0, 0, 0),
                      slice_end=(n, used, c), slice_step=(1, 1, 1))
    chunks = ctx.op("reshape", [rows], (n, out_w + r - 1, s * c), name=f"{name}_chunks", shape=(n, out_w + r - 1, s * c))
    pieces = [ctx.op("slice", [chunks], (n, out_w, s * c), name=f"{name}_chunk{j}", slice_start=(0, j, 0),
                     slice_end=(n, j + out_w, s * c), slice_step=(1, 1, 1)) for j in range(r)]
    frames = pieces[0] if r == 1 else ctx.op("concat", pieces, (n, out_w, k * c), name=f"{name}_frames", dim=2)
    matrix = np.ascontiguousarray(weight[:, :, 0, :].transpose(2, 1, 0).reshape(k * c, oc), dtype=np.float32)
    wname = node.inputs[1].name
    inputs = [frames, ctx.float_param(matrix, wname, key=(wname, "frames"), dtype=weight_dtype(ctx, wname, matrix))]
    if bias is not None:
        inputs.append(ctx.float_param(np.asarray(bias).reshape(1, oc), node.inputs[2].name,
                                      key=(node.inputs[2].name, "frames")))
    y = ctx.op("linear", inputs, (n, out_w, oc), name=f"{name}_linear")
    if activation:
        y = ctx.op(activation, [y], (n, out_w, oc), name=f"{name}_{activation}")
    out_form = NHWC(n, 1, out_w, oc)
    return ctx.op("reshape", [y], out_form.flat_shape, name=name, shape=out_form.flat_shape), out_form
