"""Resize (opsets 10-19) and Upsample (7, 9): separable, one axis at a time, weights computed at compile time.

Every Resize mode is a fixed linear map along each resized axis: output[j] = sum_i W[j, i] * input[i], with
W from the coordinate transformation (half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners,
asymmetric, tf_crop_and_resize) and the kernel (nearest, linear, cubic; antialias widens the kernel when
downscaling).  The rules build W here and apply it with the cheapest exact ttnn ops:
* nearest picks one input per output (W is one-hot), so it is pure data movement: ttnn.upsample on NHWC when
  H and W are both repeated by integer factors (the common 2x case), else per axis a reshape + repeat
  (integer repeat), one strided slice (integer downsample) or slices + concat of runs (any other map).
  Exact in every dtype.
* linear / cubic: a matmul with the constant [in, out] matrix W^T along the last axis (other axes are
  swapped to the last one around it).  Exact up to float32 accumulation in fp32 programs; W is rounded to
  the compute dtype in bf16 programs.
tf_crop_and_resize positions whose source lies outside the input get `extrapolation_value` through a
constant 0/1 mask.  Unsupported: non-constant scales/sizes/roi, non-float inputs of linear/cubic.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.context import NHWC, LoweringContext
from onnx2ttnn.lowering.registry import register

COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                    "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
KEEP_ASPECT = ("stretch", "not_larger", "not_smaller")


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class ResizeSpec:
    """Everything that fixes the per-axis maps of one Resize node."""

    mode: str  # nearest | linear | cubic
    coordinate_mode: str
    nearest_mode: str  # one of NEAREST_MODES, or "simple" (opset 10: floor upscaling, ceil downscaling)
    cubic_a: float = -0.75
    exclude_outside: bool = False
    antialias: bool = False
    extrapolation: float = 0.0


# --- the per-axis maps (pure numpy) ---------------------------------------------------------------------------

def source_coordinates(spec: ResizeSpec, in_size: int, out_size: int, scale: float,
                       roi: tuple[float, float] = (0.0, 1.0)) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """The input coordinate each output index maps to, and (tf_crop_and_resize) which ones lie outside."""
    # align_corners and tf_crop_and_resize divide by the integer output length less 1 (and pytorch_half_pixel tests
    # it for 1), as the spec's length_resized and onnxruntime do; onnx's reference implementation takes the
    # un-rounded scale * in_size, which differs when the scale gives no whole length (0.7 on 5 rows: 3.5, not 3).
    # half_pixel_symmetric compares the two.
    y = np.arange(out_size, dtype=np.float64)
    mode = spec.coordinate_mode
    outside = None
    if mode == "align_corners":
        x = np.zeros(out_size) if out_size == 1 else y * (in_size - 1) / (out_size - 1)
    elif mode == "asymmetric":
        x = y / scale
    elif mode == "pytorch_half_pixel":
        # 0 for an output of length 1 (a scale of 0.5 on 3 rows is one row, the first; onnx's reference samples
        # (0 + 0.5) / 0.5 - 0.5 = 0.5, between rows 0 and 1)
        x = np.zeros(out_size) if out_size == 1 else (y + 0.5) / scale - 0.5
    elif mode == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    elif mode == "half_pixel_symmetric":
        offset = in_size / 2 * (1 - out_size / (scale * in_size))  # the output length over the un-rounded one
        x = offset + (y + 0.5) / scale - 0.5
    elif mode == "tf_crop_and_resize":
        start, end = roi
        if out_size == 1:
            x = np.full(out_size, (end - start) * (in_size - 1) / 2)
        else:
            x = y * (end - start) * (in_size - 1) / (out_size - 1)
        x = x + start * (in_size - 1)
        outside = (x < 0) | (x > in_size - 1)
    else:
        raise ValueError(mode)
    return x, outside


def nearest_indices(spec: ResizeSpec, x: np.ndarray, in_size: int, scale: float) -> np.ndarray:
    """The input index each output copies (clamped to the input, as edge padding does)."""
    floor = np.floor(x)
    frac = x - floor
    mode = spec.nearest_mode
    if mode == "simple":
        mode = "floor" if scale >= 1 else "ceil"
    if mode == "floor":
        idx = floor
    elif mode == "ceil":
        idx = np.ceil(x)
    elif mode == "round_prefer_floor":
        idx = np.where(frac <= 0.5, floor, floor + 1)
    else:  # round_prefer_ceil
        idx = np.where(frac < 0.5, floor, floor + 1)
    return np.clip(idx, 0, in_size - 1).astype(np.int64)


def _kernel(spec: ResizeSpec, d: np.ndarray) -> np.ndarray:
    d = np.abs(d)
    if spec.mode == "linear":
        return np.clip(1 - d, 0, None)
    a = spec.cubic_a
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def interpolation_matrix(spec: ResizeSpec, x: np.ndarray, in_size: int, scale: float) -> np.ndarray:
    """W [out, in] of a linear/cubic resize: kernel weights of the taps around each source coordinate.

    Taps outside the input are clamped onto the border (edge padding) or, with exclude_outside, dropped and
    the rest renormalised.  Antialias stretches the kernel by 1/scale when downscaling and normalises it."""
    stretch = min(scale, 1.0) if spec.antialias else 1.0
    support = (1 if spec.mode == "linear" else 2) / stretch
    reach = int(math.ceil(support)) + 1
    taps = np.floor(x)[:, None] + np.arange(-reach, reach + 1)[None, :]  # [out, taps]
    weights = _kernel(spec, (taps - x[:, None]) * stretch)
    if spec.antialias:
        weights = weights / weights.sum(axis=1, keepdims=True)
    if spec.exclude_outside:
        weights = np.where((taps < 0) | (taps >= in_size), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    matrix = np.zeros((len(x), in_size))
    rows = np.broadcast_to(np.arange(len(x))[:, None], taps.shape)
    np.add.at(matrix, (rows, np.clip(taps, 0, in_size - 1).astype(np.int64)), weights)
    return matrix


# --- reading the node -----------------------------------------------------------------------------------------

def _optional_constant(ctx: LoweringContext, node: gs.Node, index: int, what: str) -> Optional[np.ndarray]:
    """A constant optional input (None when absent or empty); runtime tensors are refused."""
    if len(node.inputs) <= index or not node.inputs[index].name:
        return None
    value = ctx.require_constant(node.inputs[index], f"{node.op} {what}")
    return None if value.size == 0 else np.asarray(value)


def _spec(ctx: LoweringContext, node: gs.Node, opset10: bool) -> ResizeSpec:
    attrs = node.attrs
    mode = _text(attrs.get("mode", "nearest"))
    if mode not in ("nearest", "linear", "cubic") or (opset10 and mode == "cubic"):
        raise ConversionError(f"node {ctx.source!r}: {node.op} mode {mode!r} is not supported")
    coordinate = "asymmetric" if opset10 else _text(attrs.get("coordinate_transformation_mode", "half_pixel"))
    if coordinate not in COORDINATE_MODES:
        raise ConversionError(f"node {ctx.source!r}: coordinate_transformation_mode {coordinate!r} is not "
                              "supported")
    nearest = "simple" if opset10 else _text(attrs.get("nearest_mode", "round_prefer_floor"))
    if nearest not in NEAREST_MODES + ("simple",):
        raise ConversionError(f"node {ctx.source!r}: nearest_mode {nearest!r} is not supported")
    antialias = bool(attrs.get("antialias", 0))
    if antialias and mode == "nearest":
        raise ConversionError(f"node {ctx.source!r}: antialias=1 is not defined for mode 'nearest'")
    return ResizeSpec(mode, coordinate, nearest, float(attrs.get("cubic_coeff_a", -0.75)),
                      bool(attrs.get("exclude_outside", 0)), antialias, float(attrs.get("extrapolation_value", 0.0)))


def _geometry(ctx: LoweringContext, node: gs.Node, in_shape, scales, sizes, roi):
    """Per-axis (output size, scale, roi) for all dims, from scales or sizes, axes and keep_aspect_ratio_policy."""
    rank = len(in_shape)
    axes = [int(a) % rank for a in node.attrs.get("axes", range(rank))]
    if len(set(axes)) != len(axes):
        raise ConversionError(f"node {ctx.source!r}: axes {list(node.attrs['axes'])} repeat a dim")
    out = list(in_shape)
    scale = [1.0] * rank
    if sizes is not None:
        sizes = [int(s) for s in sizes.reshape(-1)]
        if len(sizes) != len(axes):
            raise ConversionError(f"node {ctx.source!r}: sizes {sizes} must have one entry per axis {axes}")
        for a, s in zip(axes, sizes):
            out[a], scale[a] = s, s / in_shape[a]
        policy = _text(node.attrs.get("keep_aspect_ratio_policy", "stretch"))
        if policy not in KEEP_ASPECT:
            raise ConversionError(f"node {ctx.source!r}: keep_aspect_ratio_policy {policy!r} is not supported")
        if policy != "stretch":
            common = (min if policy == "not_larger" else max)(scale[a] for a in axes)
            for a in axes:
                scale[a], out[a] = common, int(common * in_shape[a] + 0.5)
    elif scales is not None:
        values = [float(s) for s in np.asarray(scales, np.float32).reshape(-1)]
        if len(values) != len(axes):
            raise ConversionError(f"node {ctx.source!r}: scales {values} must have one entry per axis {axes}")
        for a, s in zip(axes, values):
            if s <= 0:
                raise ConversionError(f"node {ctx.source!r}: scales must be positive, got {values}")
            scale[a], out[a] = s, int(math.floor(s * in_shape[a]))
    else:
        raise ConversionError(f"node {ctx.source!r}: {node.op} needs scales or sizes")
    rois = [(0.0, 1.0)] * rank
    if roi is not None:
        roi = [float(v) for v in roi.reshape(-1)]
        if len(roi) != 2 * len(axes):
            raise ConversionError(f"node {ctx.source!r}: roi {roi} must have 2 entries per axis {axes}")
        for i, a in enumerate(axes):
            rois[a] = (roi[i], roi[len(axes) + i])
    return out, scale, rois


# --- applying the maps with ttnn ops --------------------------------------------------------------------------

def _swap_last(ctx: LoweringContext, x: gs.Variable, axis: int, name: str) -> gs.Variable:
    rank = len(x.shape)
    dims = list(range(rank))
    dims[axis], dims[-1] = dims[-1], dims[axis]
    shape = [x.shape[d] for d in dims]
    return ctx.op("permute", [x], shape, name=name, dims=tuple(dims))


def _matmul_axis(ctx: LoweringContext, x: gs.Variable, axis: int, matrix: np.ndarray, name: str) -> gs.Variable:
    """x with `matrix` [out, in] applied along `axis` (a matmul on the last dim)."""
    last = axis == len(x.shape) - 1
    t = x if last else _swap_last(ctx, x, axis, name + "_swapped")
    weight = ctx.float_param(np.ascontiguousarray(matrix.T), name + "_weights", key=(name, "weights"))
    shape = list(t.shape[:-1]) + [matrix.shape[0]]
    y = ctx.op("matmul", [t, weight], shape, name=name if last else name + "_mm")
    return y if last else _swap_last(ctx, y, axis, name)


def _reshape(ctx: LoweringContext, x: gs.Variable, shape, name: str) -> gs.Variable:
    shape = tuple(int(d) for d in shape)
    return x if tuple(x.shape) == shape else ctx.op("reshape", [x], shape, name=name, shape=shape)


def _slice_axis(ctx: LoweringContext, x: gs.Variable, axis: int, start: int, end: int, step: int,
                name: str) -> gs.Variable:
    begin, stop, steps = [0] * len(x.shape), list(x.shape), [1] * len(x.shape)
    begin[axis], stop[axis], steps[axis] = start, end, step
    shape = list(x.shape)
    shape[axis] = len(range(start, end, step))
    return ctx.op("slice", [x], shape, name=name, slice_start=begin, slice_end=stop, slice_step=steps)


def _repeat_factor(idx: np.ndarray, in_size: int) -> int:
    """s when idx == [0]*s + [1]*s + ... (each input repeated s times), else 0."""
    if len(idx) % in_size:
        return 0
    s = len(idx) // in_size
    return s if np.array_equal(idx, np.repeat(np.arange(in_size), s)) else 0


def _gather_axis(ctx: LoweringContext, x: gs.Variable, axis: int, idx: np.ndarray, name: str) -> gs.Variable:
    """x[..., idx, ...] along `axis` with data movement only."""
    in_size = x.shape[axis]
    shape = list(x.shape)
    shape[axis] = len(idx)
    s = _repeat_factor(idx, in_size)
    if s:  # [.., in, ..] -> [.., in, 1, ..] -> repeat s -> [.., in*s, ..]
        split = shape[:axis] + [in_size, 1] + shape[axis + 1:]
        t = _reshape(ctx, x, split, name + "_split")
        reps = [1] * len(split)
        reps[axis + 1] = s
        split[axis + 1] = s
        r = ctx.op("repeat", [t], split, name=name + "_repeated", repeat_dims=tuple(reps))
        return _reshape(ctx, r, shape, name)
    if len(idx) > 1:
        step = int(idx[1] - idx[0])
        if step > 0 and np.array_equal(idx, idx[0] + step * np.arange(len(idx))):
            return _slice_axis(ctx, x, axis, int(idx[0]), int(idx[-1]) + 1, step, name)
    runs, start = [], 0  # maximal runs of consecutive indices, one slice each
    for j in range(1, len(idx) + 1):
        if j == len(idx) or idx[j] != idx[j - 1] + 1:
            runs.append((int(idx[start]), j - start))
            start = j
    pieces = []
    cache: dict[tuple[int, int], gs.Variable] = {}
    for k, (first, count) in enumerate(runs):
        if (first, count) not in cache:
            cache[(first, count)] = _slice_axis(ctx, x, axis, first, first + count, 1, f"{name}_run{k}")
        pieces.append(cache[(first, count)])
    if len(pieces) == 1:
        return pieces[0]
    return ctx.op("concat", pieces, shape, name=name, dim=axis)


def _native_upsample(ctx: LoweringContext, tensor: gs.Tensor, factors: tuple[int, int], out: gs.Tensor) -> None:
    """Integer nearest upsampling of H and W: ttnn.upsample on [N, H, W, C] (ROW_MAJOR result)."""
    x, form = ctx.value_nhwc(tensor)
    nhwc = (form.n, form.h, form.w, form.c)
    t = ctx.op("reshape", [x], nhwc, name=out.name + "_nhwc4", shape=nhwc)
    out_form = NHWC(form.n, form.h * factors[0], form.w * factors[1], form.c)
    up = ctx.op("upsample", [t], (out_form.n, out_form.h, out_form.w, out_form.c), name=out.name + "_up",
                scale_factor=list(factors), mode="nearest")
    ctx.bind(out, ctx.op("reshape", [up], out_form.flat_shape, name=out.name, shape=out_form.flat_shape), out_form)


def _resize(ctx: LoweringContext, node: gs.Node, spec: ResizeSpec, scales, sizes, roi) -> None:
    out = node.outputs[0]
    in_shape = [int(d) for d in node.inputs[0].shape]
    out_shape, scale, rois = _geometry(ctx, node, in_shape, scales, sizes, roi)
    if out.shape is not None and all(isinstance(d, int) for d in out.shape) and list(out.shape) != out_shape:
        raise ConversionError(f"node {ctx.source!r}: computed output shape {out_shape} differs from the inferred "
                              f"{list(out.shape)}")
    if spec.mode != "nearest" and np.dtype(node.inputs[0].dtype).kind not in "f":
        raise ConversionError(f"node {ctx.source!r}: {spec.mode} Resize of a {np.dtype(node.inputs[0].dtype)} "
                              "input is not supported")
    maps, masks = {}, {}
    for a, (n_in, n_out) in enumerate(zip(in_shape, out_shape)):
        x, outside = source_coordinates(spec, n_in, n_out, scale[a], rois[a])
        if spec.mode == "nearest":
            m = nearest_indices(spec, x, n_in, scale[a])
            identity = n_in == n_out and np.array_equal(m, np.arange(n_in))
        else:
            m = interpolation_matrix(spec, x, n_in, scale[a])
            identity = n_in == n_out and np.allclose(m, np.eye(n_in), rtol=0, atol=1e-12)
        if outside is not None and outside.any():
            masks[a] = outside
        if not identity:
            maps[a] = m
    if spec.mode == "nearest" and _native_ok(in_shape, maps):
        _native_upsample(ctx, node.inputs[0], tuple(len(maps[a]) // in_shape[a] for a in (2, 3)), out)
        return
    y = ctx.value(node.inputs[0])
    if not maps and not masks:
        ctx.bind(out, y)
        return
    for k, a in enumerate(sorted(maps, reverse=True)):
        name = out.name if k == len(maps) - 1 and not masks else f"{out.name}_axis{a}"
        y = (_gather_axis if spec.mode == "nearest" else _matmul_axis)(ctx, y, a, maps[a], name)
    if masks:
        y = _extrapolate(ctx, y, masks, spec.extrapolation, out.name)
    ctx.bind(out, y)


def _native_ok(in_shape, maps) -> bool:
    """ttnn.upsample fits: a 4-D NCHW tensor whose H and W (only) are repeated by integer factors."""
    if len(in_shape) != 4 or set(maps) != {2, 3}:
        return False
    return all(_repeat_factor(maps[a], in_shape[a]) for a in (2, 3))


def _extrapolate(ctx: LoweringContext, y: gs.Variable, masks: dict, value: float, name: str) -> gs.Variable:
    """y where every resized source coordinate lies inside the input, `value` elsewhere (constant masks)."""
    rank = len(y.shape)
    keep = np.ones([1] * rank)
    for a, outside in masks.items():
        shape = [1] * rank
        shape[a] = len(outside)
        keep = keep * (~outside).astype(np.float64).reshape(shape)
    kept = ctx.op("multiply", [y, ctx.float_param(keep, name + "_keep", key=(name, "keep"))], y.shape,
                  name=name if value == 0.0 else name + "_kept")
    if value == 0.0:
        return kept
    fill = ctx.float_param((1.0 - keep) * value, name + "_fill", key=(name, "fill"))
    return ctx.op("add", [kept, fill], y.shape, name=name)


# --- rules ------------------------------------------------------------------------------------------------------

@register("Resize", versions=(11, 13, 18, 19), ttnn=("upsample", "repeat", "slice", "concat", "matmul", "permute"),
          note="nearest: data movement (upsample for integer H/W factors); linear/cubic: constant matmul per axis")
def resize(ctx: LoweringContext, node: gs.Node) -> None:
    """Resize-11: roi, scales, sizes inputs and the coordinate / nearest / cubic attributes (its
    `tf_half_pixel_for_nn` mode is refused); 13: roi and scales optional, bfloat16; 18: `antialias`, `axes`,
    `keep_aspect_ratio_policy`; 19: `half_pixel_symmetric`.  Each addition defaults to the old behaviour."""
    spec = _spec(ctx, node, opset10=False)
    roi = _optional_constant(ctx, node, 1, "roi") if spec.coordinate_mode == "tf_crop_and_resize" else None
    scales = _optional_constant(ctx, node, 2, "scales")
    sizes = _optional_constant(ctx, node, 3, "sizes")
    _resize(ctx, node, spec, None if sizes is not None else scales, sizes, roi)


@register("Resize", versions=(10,), ttnn=("upsample", "repeat", "slice", "concat", "matmul", "permute"),
          note="opset 10: asymmetric coordinates, nearest floors when upscaling")
def resize_10(ctx: LoweringContext, node: gs.Node) -> None:
    """Resize-10: `scales` input only, `mode` nearest or linear, asymmetric coordinates."""
    _resize(ctx, node, _spec(ctx, node, opset10=True), _optional_constant(ctx, node, 1, "scales"), None, None)


@register("Upsample", versions=(9,), ttnn=("upsample", "repeat", "slice", "concat", "matmul", "permute"),
          note="scales as input")
def upsample_9(ctx: LoweringContext, node: gs.Node) -> None:
    """Upsample-9: `scales` became an input (it was an attribute).  Upsample-10 is deprecated (a model holding it
    is invalid: onnx and onnxruntime refuse it): not claimed."""
    _resize(ctx, node, _spec(ctx, node, opset10=True), _optional_constant(ctx, node, 1, "scales"), None, None)


@register("Upsample", versions=(7,), ttnn=("upsample", "repeat", "slice", "concat", "matmul", "permute"),
          note="scales as attribute")
def upsample_7(ctx: LoweringContext, node: gs.Node) -> None:
    """Upsample-7: `scales` attribute."""
    scales = np.asarray(node.attrs["scales"], np.float32)
    _resize(ctx, node, _spec(ctx, node, opset10=True), scales, None, None)
