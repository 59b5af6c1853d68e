"""MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.

Two lowerings of the windowed pools:
* native: ttnn.max_pool2d / avg_pool2d on flattened NHWC tensors.  Real ttnn takes BFLOAT16 input only
  ("Only BFLOAT16 supported for now") and returns bfloat16, 2-D windows only, no dilation for avg_pool2d;
  used when the compute dtype is bf16 and the input is a float (max_pool2d turns int32 into bfloat16:
  probe_integers.py).
* windows: the pool as max/add over one strided ttnn.slice per kernel offset of the padded NCHW tensor
  (padding by concat with -inf / 0 blocks), then a constant divisor for AveragePool.  Exact in float32
  and general: 1-D/3-D, dilations, ceil_mode, count_include_pad, asymmetric pads, the Indices output.
  Used for float32 programs (where a bf16 pool would lose precision), integer MaxPool (int32 maximum, padded
  with int32's lowest value) and whatever the native ops lack.
The compute dtype is `ctx.dtype` ("bf16" / "fp32"): bf16 programs use the native ops where they apply.
GlobalAveragePool / GlobalMaxPool are ttnn.mean / ttnn.max over the spatial dims (exact in both dtypes; real
global_avg_pool2d always returns bfloat16).
"""
from __future__ import annotations

import itertools

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.context import NHWC, LoweringContext
from onnx2ttnn.lowering.registry import register


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def window_pads(ctx: LoweringContext, node: gs.Node, in_shape, kernel, strides, dilations) -> list[tuple[int, int]]:
    """(begin, end) padding per spatial dim from `pads` or `auto_pad`."""
    rank = len(kernel)
    auto_pad = _text(node.attrs.get("auto_pad", "NOTSET"))
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = []
        for size, k, s, d in zip(in_shape, kernel, strides, dilations):
            total = max(0, (-(-size // s) - 1) * s + (k - 1) * d + 1 - size)
            small, big = total // 2, total - total // 2
            pads.append((big, small) if auto_pad == "SAME_LOWER" else (small, big))
        return pads
    if auto_pad == "VALID":
        return [(0, 0)] * rank
    if auto_pad != "NOTSET":
        raise ConversionError(f"node {ctx.source!r}: auto_pad {auto_pad!r} is not supported")
    p = [int(v) for v in node.attrs.get("pads", [0] * (2 * rank))]
    return list(zip(p[:rank], p[rank:]))


def _geometry(ctx: LoweringContext, node: gs.Node):
    """kernel, strides, dilations, pads and output spatial shape of a pool node."""
    kernel = tuple(int(k) for k in node.attrs["kernel_shape"])
    rank = len(kernel)
    in_shape = tuple(node.inputs[0].shape)
    if len(in_shape) != rank + 2:
        raise ConversionError(f"node {ctx.source!r}: kernel_shape {kernel} does not fit input shape {in_shape}")
    strides = tuple(int(s) for s in node.attrs.get("strides", [1] * rank))
    dilations = tuple(int(d) for d in node.attrs.get("dilations", [1] * rank))
    pads = window_pads(ctx, node, in_shape[2:], kernel, strides, dilations)
    return kernel, strides, dilations, pads, tuple(int(d) for d in node.outputs[0].shape[2:])


def _wants_indices(node: gs.Node) -> bool:
    return len(node.outputs) > 1 and bool(node.outputs[1].name)


def _covers_the_whole_input(ctx: LoweringContext, node: gs.Node) -> bool:
    """One window, unpadded, over all of the input (EfficientNet's AvgPool2d(kernel 320) on 2x2, ceil_mode):
    a global pool. Window positions past the input (ceil_mode) hold no element, so they count for nothing.
    A dilated window taps every element only of a dim of size 1 (fuzz seed 47 case 189: kernel 2, dilation 2
    over 2 columns taps column 0 alone)."""
    if _wants_indices(node):
        return False
    kernel, _, dilations, pads, out_spatial = _geometry(ctx, node)
    spatial = tuple(int(d) for d in node.inputs[0].shape[2:])
    return (all(o == 1 for o in out_spatial) and all(p == (0, 0) for p in pads)
            and all(size <= 1 or (d == 1 and k >= size) for k, d, size in zip(kernel, dilations, spatial)))


def _native_ok(ctx: LoweringContext, node: gs.Node, kind: str) -> bool:
    """Whether ttnn.max_pool2d / avg_pool2d can compute this node (bf16 programs only; real ttnn crashes on
    a window larger than the padded input)."""
    if ctx.dtype != "bf16" or np.dtype(node.inputs[0].dtype).kind in "iu":  # int32 in: bfloat16 out (probe)
        return False
    kernel, _, dilations, pads, _ = _geometry(ctx, node)
    if len(kernel) != 2 or (kind == "max" and _wants_indices(node)):
        return False
    spatial = tuple(int(d) for d in node.inputs[0].shape[2:])
    if any((k - 1) * d + 1 > size + b + e for k, d, size, (b, e) in zip(kernel, dilations, spatial, pads)):
        return False
    return kind == "max" or dilations == (1, 1)


def _native_pool(ctx: LoweringContext, node: gs.Node, ttnn_op: str, **extra) -> None:
    x, form = ctx.value_nhwc(node.inputs[0])
    kernel, strides, dilations, pads, _ = _geometry(ctx, node)
    (top, bottom), (left, right) = pads
    padding = [top, left] if (top, left) == (bottom, right) else [top, bottom, left, right]
    out = node.outputs[0]
    n, c, oh, ow = out.shape
    out_form = NHWC(n, oh, ow, c)
    attrs = dict(batch_size=form.n, input_h=form.h, input_w=form.w, channels=form.c, kernel_size=list(kernel),
                 stride=list(strides), padding=padding, ceil_mode=bool(node.attrs.get("ceil_mode", 0)))
    if ttnn_op == "max_pool2d":
        attrs["dilation"] = list(dilations)
    ctx.bind(out, ctx.op(ttnn_op, [x], out_form.flat_shape, name=out.name, **attrs, **extra), out_form)


# --- the exact window lowering ------------------------------------------------------------------------------

def _pad_axis(ctx: LoweringContext, x: gs.Variable, axis: int, before: int, after: int, value: float,
              name: str) -> gs.Variable:
    """x padded along `axis` with constant blocks (concat; front padding of TILE tensors is refused by pad)."""
    if before == 0 and after == 0:
        return x
    parts = []
    integer = np.dtype(x.dtype).kind in "iu"  # int32 on the device: padded with int32's lowest value instead of -inf
    for size, where in ((before, "before"), (after, "after")):
        if size:
            shape = list(x.shape)
            shape[axis] = size
            fill = (np.full(shape, max(value, np.iinfo(np.int32).min), np.int32) if integer
                    else np.full(shape, value, np.float32))
            parts.append((where, ctx.param(fill, f"{name}_{where}", key=(name, where, tuple(shape), value))))
    pieces = [p for w, p in parts if w == "before"] + [x] + [p for w, p in parts if w == "after"]
    shape = list(x.shape)
    shape[axis] += before + after
    return ctx.op("concat", pieces, shape, name=name, dim=axis)


def _windows(ctx: LoweringContext, node: gs.Node, fill: float):
    """(padded input, list of (offset, window slice)); the extra end padding ceil_mode needs is included."""
    kernel, strides, dilations, pads, out_spatial = _geometry(ctx, node)
    x = ctx.value(node.inputs[0])
    name = node.outputs[0].name
    shape = tuple(x.shape)
    for i, (size, (b, e), k, s, d, o) in enumerate(zip(shape[2:], pads, kernel, strides, dilations, out_spatial)):
        need = (o - 1) * s + (k - 1) * d + 1
        e_total = max(e, need - size - b)
        x = _pad_axis(ctx, x, 2 + i, b, e_total, fill, f"{name}_pad{i}")
    out_shape = shape[:2] + out_spatial
    slices = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        start = [0, 0] + [o * d for o, d in zip(offset, dilations)]
        end = list(shape[:2]) + [st + (o - 1) * s + 1 for st, o, s in zip(start[2:], out_spatial, strides)]
        step = [1, 1] + list(strides)
        tag = "_".join(map(str, offset))
        slices.append((offset, ctx.op("slice", [x], out_shape, name=f"{name}_win{tag}", slice_start=start,
                                      slice_end=end, slice_step=step)))
    return out_shape, slices


def _window_max(ctx: LoweringContext, node: gs.Node) -> None:
    out = node.outputs[0]
    # the padding is float32's lowest value, not -inf: a window that lies wholly in the padding (dilated, or
    # ceil_mode) is that value in onnxruntime
    out_shape, slices = _windows(ctx, node, float(np.finfo(np.float32).min))
    acc = slices[0][1]
    index = _window_index(ctx, node, slices[0][0], out_shape) if _wants_indices(node) else None
    for i, (offset, window) in enumerate(slices[1:], 1):
        last = i == len(slices) - 1
        if index is not None:
            better = ctx.op("gt", [window, acc], out_shape, name=f"{out.name}_better{i}")
            index = ctx.op("where", [better, _window_index(ctx, node, offset, out_shape), index], out_shape,
                           name=f"{out.name}_argmax{i}")
        acc = ctx.op("maximum", [acc, window], out_shape, name=out.name if last else f"{out.name}_max{i}")
    ctx.bind(out, acc)
    if index is not None:
        _bind_indices(ctx, node, index, out_shape)


def _window_index(ctx: LoweringContext, node: gs.Node, offset, out_shape) -> gs.Variable:
    """For one kernel offset, the flat input index (ONNX MaxPool Indices, storage_order) of each window."""
    kernel, strides, dilations, pads, out_spatial = _geometry(ctx, node)
    in_spatial = tuple(node.inputs[0].shape[2:])
    coords = np.meshgrid(*(np.arange(o) * s + k * d - b for o, s, k, d, (b, _) in
                           zip(out_spatial, strides, offset, dilations, pads)), indexing="ij")
    dims = in_spatial if not node.attrs.get("storage_order", 0) else tuple(reversed(in_spatial))
    order = coords if not node.attrs.get("storage_order", 0) else list(reversed(coords))
    flat = np.zeros(out_spatial, np.int64)
    for coord, size in zip(order, dims):
        flat = flat * size + np.clip(coord, 0, size - 1)
    value = np.broadcast_to(flat.astype(np.float32), out_shape)
    tag = "_".join(map(str, offset))
    return ctx.float_param(value, f"{node.outputs[1].name}_pos{tag}", key=(node.outputs[1].name, offset))


def _bind_indices(ctx: LoweringContext, node: gs.Node, index: gs.Variable, out_shape) -> None:
    n, c = out_shape[:2]
    plane = int(np.prod(node.inputs[0].shape[2:], dtype=np.int64))
    base = (np.arange(n * c, dtype=np.float32) * plane).reshape((n, c) + (1,) * (len(out_shape) - 2))
    out = node.outputs[1]
    bias = ctx.float_param(base, out.name + "_base", key=(out.name, "base"))
    ctx.bind(out, ctx.op("add", [index, bias], out_shape, name=out.name))


def _window_average(ctx: LoweringContext, node: gs.Node, whole_kernel: bool = False) -> None:
    out = node.outputs[0]
    out_shape, slices = _windows(ctx, node, 0.0)
    acc = slices[0][1]
    for i, (_, window) in enumerate(slices[1:], 1):
        acc = ctx.op("add", [acc, window], out_shape, name=f"{out.name}_sum{i}")
    counts = _window_counts(ctx, node, whole_kernel)
    if np.all(counts == counts.flat[0]):
        y = ctx.op("multiply", [acc], out_shape, name=out.name, input_tensor_b=float(1.0 / counts.flat[0]))
    else:
        inv = (1.0 / counts).astype(np.float32).reshape((1, 1) + counts.shape)
        y = ctx.op("multiply", [acc, ctx.float_param(inv, out.name + "_inv_count", key=(out.name, "count"))],
                   out_shape, name=out.name)
    ctx.bind(out, y)


def _window_counts(ctx: LoweringContext, node: gs.Node, whole_kernel: bool = False) -> np.ndarray:
    """How many elements each output window averages: input elements, plus the explicit pads when
    count_include_pad (never the extra end padding of ceil_mode); `whole_kernel` (AveragePool before 19,
    count_include_pad without ceil_mode): every tap of the kernel, as onnxruntime counts them."""
    kernel, strides, dilations, pads, out_spatial = _geometry(ctx, node)
    include = bool(node.attrs.get("count_include_pad", 0))
    per_dim = []
    for size, (b, e), k, s, d, o in zip(node.inputs[0].shape[2:], pads, kernel, strides, dilations, out_spatial):
        taps = np.arange(o)[:, None] * s + np.arange(k)[None, :] * d  # padded coordinates
        lo, hi = (0, size + b + e) if include else (b, b + size)
        if whole_kernel:
            lo, hi = 0, int(taps.max()) + 1
        per_dim.append(((taps >= lo) & (taps < hi)).sum(axis=1))
    counts = per_dim[0].astype(np.float64)
    for c in per_dim[1:]:
        counts = np.multiply.outer(counts, c)
    return counts


# --- rules ---------------------------------------------------------------------------------------------------

@register("MaxPool", versions=(1, 8, 10, 11, 12, 22), ttnn=("max_pool2d", "slice", "maximum"),
          note="bf16: ttnn.max_pool2d; fp32/3-D/indices: slices + maximum")
def max_pool(ctx: LoweringContext, node: gs.Node) -> None:
    """MaxPool-1; 8: the Indices output and `storage_order`; 10: `ceil_mode` and `dilations`; 11: default
    strides/dilations written down; 12: int8/uint8; 22: bfloat16.  Every addition defaults to the old
    behaviour, and the window lowering computes each."""
    if _covers_the_whole_input(ctx, node):
        _global(ctx, node, "max")
    elif _native_ok(ctx, node, "max"):
        _native_pool(ctx, node, "max_pool2d")
    else:
        _window_max(ctx, node)


@register("AveragePool", versions=(19, 22), ttnn=("avg_pool2d", "slice", "add", "multiply"),
          note="bf16: ttnn.avg_pool2d; fp32/dilations/1-D/3-D: slices + add")
def average_pool(ctx: LoweringContext, node: gs.Node) -> None:
    """AveragePool-19: `dilations`; 22: bfloat16.  The output shapes come from ONNX shape inference of the
    node's own version."""
    _average_pool(ctx, node, legacy=False)


@register("AveragePool", versions=(1, 7, 10, 11), ttnn=("avg_pool2d", "slice", "add", "multiply"),
          note="bf16: ttnn.avg_pool2d; fp32/1-D/3-D: slices + add")
def average_pool_1(ctx: LoweringContext, node: gs.Node) -> None:
    """AveragePool-1; 7: `count_include_pad`; 10: `ceil_mode`; 11: the SAME auto_pad output size written as
    ceil(input / stride) (window_pads).  Each addition defaults to the old behaviour.  Before 19, onnxruntime
    divides a count_include_pad window without ceil_mode by the whole kernel even where it overhangs the
    padded input (a kernel larger than the padded input: onnx's inference truncates the negative quotient and
    says one output element), as _window_counts(legacy=True) does."""
    _average_pool(ctx, node, legacy=True)


def _average_pool(ctx: LoweringContext, node: gs.Node, legacy: bool) -> None:
    overhang = legacy and bool(node.attrs.get("count_include_pad", 0)) and not node.attrs.get("ceil_mode", 0)
    if _covers_the_whole_input(ctx, node) and not (overhang and _overhangs(ctx, node)):
        _global(ctx, node, "mean")
    elif _native_ok(ctx, node, "avg"):
        _native_pool(ctx, node, "avg_pool2d", count_include_pad=bool(node.attrs.get("count_include_pad", 0)))
    else:
        _window_average(ctx, node, whole_kernel=overhang)


def _overhangs(ctx: LoweringContext, node: gs.Node) -> bool:
    """Whether some window reaches past the end of the padded input (a kernel larger than it, or ceil_mode)."""
    kernel, strides, dilations, pads, out_spatial = _geometry(ctx, node)
    return any((o - 1) * s + (k - 1) * d + 1 > size + b + e for size, (b, e), k, s, d, o in
               zip(node.inputs[0].shape[2:], pads, kernel, strides, dilations, out_spatial))


def _global(ctx: LoweringContext, node: gs.Node, ttnn_op: str) -> None:
    out = node.outputs[0]
    x, form = ctx.value_with_form(node.inputs[0])
    if form is not None:  # [1, 1, N*H*W, C] -> [N, H*W, C], reduce the middle dim, back to [1, 1, N, C]
        grouped = (form.n, form.h * form.w, form.c)
        g = ctx.op("reshape", [x], grouped, name=out.name + "_grouped", shape=grouped)
        r = ctx.op(ttnn_op, [g], (form.n, 1, form.c), name=out.name + "_pooled", dim=1, keepdim=True)
        out_form = NHWC(form.n, 1, 1, form.c)
        ctx.bind(out, ctx.op("reshape", [r], out_form.flat_shape, name=out.name, shape=out_form.flat_shape),
                 out_form)
        return
    rank = len(x.shape)
    if rank < 3:
        raise ConversionError(f"node {ctx.source!r}: {node.op} needs an [N, C, ...] input")
    dims = list(range(2, rank))
    ctx.bind(out, ctx.op(ttnn_op, [x], out.shape, name=out.name, dim=dims[0] if len(dims) == 1 else dims,
                         keepdim=True))


@register("GlobalAveragePool", versions=(1, 22), ttnn=("mean",))
def global_average_pool(ctx: LoweringContext, node: gs.Node) -> None:
    """GlobalAveragePool-1; 22: bfloat16."""
    _global(ctx, node, "mean")


@register("GlobalMaxPool", versions=(1, 22), ttnn=("max",))
def global_max_pool(ctx: LoweringContext, node: gs.Node) -> None:
    """GlobalMaxPool-1; 22: bfloat16."""
    _global(ctx, node, "max")
