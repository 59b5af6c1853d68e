"""A 1-D convolution with a long kernel (an STFT's framing conv: Silero VAD's 256-tap kernel at stride 128 over one
channel, openWakeWord's melspectrogram's 512 taps at stride 160) -> slices of the input, one concat and one
ttnn.linear.

ttnn.conv2d refuses such a conv on the mock n150: its DRAM path cannot slice an output one row high ("DRAM Auto
slice could not find valid slice configuration. Tried up to 1 slices for height-slicing on output dimension 1"),
and its all-in-L1 path is not taken for kernels beyond 7x7 (ir/placements.py).  With kernel k = r * stride s,
output frame i reads input positions [i*s, i*s + k): the input cut into chunks of s positions ([N, W/s, s*C]),
frame i is chunks i .. i+r-1 side by side, and the conv is frames @ W with W [k*C, OC] in (position, channel)
order.  r slices, one concat, one linear: no im2col of the whole input, nothing on the host.  A kernel that is
no whole number of strides spans r = ceil(k / s) chunks, the last one in part: its slice keeps the first
k - (r - 1) s positions (openWakeWord's melspectrogram, 512 taps at stride 160: three whole chunks and 32
positions of a fourth).  Where the chunks the last frame spans run past the input, the input is extended by a
constant of zeros (a concat) so that it cuts into whole chunks; no frame reads them.  A frame of many chunks (a
short stride: basic-pitch's 256 taps at stride 2 span 128) is built in two levels: groups of r1 = ceil(sqrt(r))
consecutive chunks first (r1 slices, one concat), then frame i is groups i, i + r1, i + 2 r1, ... (r2 =
ceil(k / (r1 s)) slices, the last in part, one concat): r1 + r2 slices (23 there) instead of r (128).
Applies to: rank-1 (H = 1) convs, group 1, dilation 1, no padding, k >= MIN_KERNEL.
"""
from __future__ import annotations

import math

import numpy as np

from onnx2ttnn.lowering.context import NHWC, LoweringContext
from onnx2ttnn.lowering.weight_dtype import weight_dtype

MIN_KERNEL = 50  # more positions than the 7x7 the conv's all-in-L1 rule admits
ONE_LEVEL_MAX = 8  # chunks a frame may span for one level of slices; past it, groups of r1 chunks first


def applies(form: NHWC, weight: np.ndarray, strides, dilations, pads, groups: int) -> bool:
    kh, kw = (int(d) for d in weight.shape[2:])
    return (form.h == 1 and kh == 1 and groups == 1 and tuple(dilations) == (1, 1)
            and not any(p for pair in pads for p in pair) and kw >= MIN_KERNEL and form.w >= kw)


def lower(ctx: LoweringContext, node, x, form: NHWC, weight: np.ndarray, bias, activation: str) -> tuple:
    """The frames' linear, flattened NHWC [1, 1, N*OW, OC], and its form."""
    n, w, c = form.n, form.w, form.c
    oc, k, s = int(weight.shape[0]), int(weight.shape[3]), int(node.attrs.get("strides", [1])[-1])
    r, out_w = -(-k // s), (w - k) // s + 1
    # frames of r1 chunks first when a frame spans many (r1 + r2 slices, not r)
    r1 = 1 if r <= ONE_LEVEL_MAX else math.isqrt(r - 1) + 1
    r2 = -(-k // (r1 * s))
    span = r1 * s  # positions of one group of r1 chunks
    groups_rows = out_w + (r2 - 1) * r1  # the groups the frames read
    chunk_rows = groups_rows + r1 - 1
    used = chunk_rows * s  # input positions of the chunks they span
    name = node.outputs[0].name
    rows = ctx.op("reshape", [x], (n, w, c), name=f"{name}_rows", shape=(n, w, c))
    if used > w:  # whole chunks: zeros after the input, which no frame reads
        zeros = ctx.float_param(np.zeros((n, used - w, c), np.float32), f"{name}_tail_zeros")
        rows = ctx.op("concat", [rows, zeros], (n, used, c), name=f"{name}_extended", dim=1)
    elif used < w:
        rows = ctx.op("slice", [rows], (n, used, c), name=f"{name}_used", slice_start=(0, 0, 0),
                      slice_end=(n, used, c), slice_step=(1, 1, 1))
    chunks = ctx.op("reshape", [rows], (n, chunk_rows, s * c), name=f"{name}_chunks", shape=(n, chunk_rows, s * c))
    groups = chunks
    if r1 > 1:
        firsts = [ctx.op("slice", [chunks], (n, groups_rows, s * c), name=f"{name}_group{j}", slice_start=(0, j, 0),
                         slice_end=(n, j + groups_rows, s * c), slice_step=(1, 1, 1)) for j in range(r1)]
        groups = ctx.op("concat", firsts, (n, groups_rows, span * c), name=f"{name}_groups", dim=2)
    widths = [span * c] * (r2 - 1) + [(k - (r2 - 1) * span) * c]  # the last group in part
    pieces = [ctx.op("slice", [groups], (n, out_w, width), name=f"{name}_chunk{q}", slice_start=(0, q * r1, 0),
                     slice_end=(n, q * r1 + out_w, width), slice_step=(1, 1, 1)) for q, width in enumerate(widths)]
    frames = pieces[0] if r2 == 1 else ctx.op("concat", pieces, (n, out_w, k * c), name=f"{name}_frames", dim=2)
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
