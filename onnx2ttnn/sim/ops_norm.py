"""Normalizations and reductions: softmax, layer_norm, rms_norm, mean/sum/max/min/prod, argmax, topk, cumsum.

softmax / layer_norm / rms_norm need TILE device tensors (API docs) and compute in float32.  layer_norm
weights and biases may be TILE [C] / [1, C] or ROW_MAJOR [C/32, 32], as on the real library.  Reductions
keep TILE output for TILE input.  (This module defines sum/max/min: do not use those builtins here.)
"""
from __future__ import annotations

import torch

from ._fidelity import kernel_config
from ._common import device_result, output_config, require_dtype, require_tile, same_device, tensor_arg, values
from ._tensor import Tensor
from ._types import DataType, Layout, TensorMemoryLayout, TILE

_NORM_DTYPES = frozenset({DataType.BFLOAT16, DataType.FLOAT32, DataType.BFLOAT8_B})


def softmax(input_tensor: Tensor, dim: int = -1, *, memory_config=None, compute_kernel_config=None,
            numeric_stable: bool = True) -> Tensor:
    """Softmax along `dim` (float32 math, one rounding)."""
    op = "ttnn.softmax"
    kernel_config(op, "compute_kernel_config", compute_kernel_config)  # validated; float32 math regardless
    tensor_arg(op, "input_tensor", input_tensor)
    require_tile(op, "input_tensor", input_tensor)
    require_dtype(op, "input_tensor", input_tensor, _NORM_DTYPES)
    rank = input_tensor._data.dim()
    if not -rank <= dim < rank:
        raise RuntimeError(f"TT_FATAL: {op}: dim {dim} out of range for a rank-{rank} tensor")
    out = torch.softmax(values(input_tensor), dim=dim)
    mc = output_config(op, memory_config, input_tensor, out.shape, Layout.TILE)
    return device_result(op, out, input_tensor._dtype, Layout.TILE, input_tensor._device, mc)


def _gamma_beta(op: str, name: str, t: Tensor | None, width: int):
    """A layer-norm weight/bias as a [width] float32 vector, after the real library's shape rules."""
    if t is None:
        return None
    tensor_arg(op, name, t)
    require_dtype(op, name, t, {DataType.BFLOAT16, DataType.FLOAT32})
    shape = list(t._data.shape)
    if t._layout is Layout.ROW_MAJOR:
        ok = len(shape) >= 1 and shape[-1] == TILE and t._data.numel() == width
        rule = f"[{width // TILE}, {TILE}] in ROW_MAJOR"
    else:
        ok = shape[-1:] == [width] and t._data.numel() == width
        rule = f"[{width}] or [1, {width}] in TILE"
    if not ok:
        raise RuntimeError(f"TT_FATAL: {op}: {name} of shape {shape} ({t._layout.name}) does not fit an input of "
                           f"width {width}: expected {rule}")
    return values(t).reshape(width)


def _norm_impl(op: str, input_tensor, epsilon, weight, bias, residual_input_tensor, memory_config, rms: bool):
    tensor_arg(op, "input_tensor", input_tensor)
    require_tile(op, "input_tensor", input_tensor)
    require_dtype(op, "input_tensor", input_tensor, _NORM_DTYPES)
    if input_tensor.is_sharded() and input_tensor._mem.memory_layout is TensorMemoryLayout.HEIGHT_SHARDED:
        raise RuntimeError(f"TT_FATAL: {op}: height-sharded inputs are not supported (use width or block "
                           "sharding, or interleaved)")
    same_device(op, *(t for t in (input_tensor, weight, bias, residual_input_tensor) if t is not None))
    x = values(input_tensor)
    if residual_input_tensor is not None:
        tensor_arg(op, "residual_input_tensor", residual_input_tensor)
        if residual_input_tensor._data.shape != input_tensor._data.shape:
            raise RuntimeError(f"TT_FATAL: {op}: residual_input_tensor shape {list(residual_input_tensor.shape)} "
                               f"must match the input's {list(input_tensor.shape)}")
        x = x + values(residual_input_tensor)
    width = x.shape[-1]
    gamma = _gamma_beta(op, "weight", weight, width)
    beta = _gamma_beta(op, "bias", bias, width)
    if rms:
        out = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + epsilon)
        out = out * gamma if gamma is not None else out
        out = out + beta if beta is not None else out
    else:
        out = torch.nn.functional.layer_norm(x, (width,), gamma, beta, epsilon)
    mc = output_config(op, memory_config, input_tensor, out.shape, Layout.TILE)
    return device_result(op, out, input_tensor._dtype, Layout.TILE, input_tensor._device, mc)


def layer_norm(input_tensor: Tensor, *, epsilon: float = 1e-12, weight=None, bias=None, residual_input_tensor=None,
               memory_config=None, program_config=None, compute_kernel_config=None) -> Tensor:
    """(x - mean) / sqrt(var + epsilon) * weight + bias over the last dim."""
    kernel_config("ttnn.layer_norm", "compute_kernel_config", compute_kernel_config)  # validated; float32 math
    return _norm_impl("ttnn.layer_norm", input_tensor, epsilon, weight, bias, residual_input_tensor,
                      memory_config, rms=False)


def rms_norm(input_tensor: Tensor, *, epsilon: float = 1e-12, weight=None, bias=None, residual_input_tensor=None,
             memory_config=None, program_config=None, compute_kernel_config=None) -> Tensor:
    """x / sqrt(mean(x^2) + epsilon) * weight + bias over the last dim."""
    kernel_config("ttnn.rms_norm", "compute_kernel_config", compute_kernel_config)  # validated; float32 math
    return _norm_impl("ttnn.rms_norm", input_tensor, epsilon, weight, bias, residual_input_tensor,
                      memory_config, rms=True)


# ---- reductions -----------------------------------------------------------------------------------------

def _dims(op: str, dim, rank: int) -> list:
    if dim is None:
        return list(range(rank))
    dims = [dim] if isinstance(dim, int) else list(dim)
    for d in dims:
        if not -rank <= d < rank:
            raise RuntimeError(f"TT_FATAL: {op}: dim {d} out of range for a rank-{rank} tensor")
    return sorted({d % rank for d in dims})


def _reduce_impl(op: str, kind: str, input_tensor: Tensor, dim, keepdim: bool, memory_config) -> Tensor:
    tensor_arg(op, "input_tensor", input_tensor)
    require_dtype(op, "input_tensor", input_tensor, _NORM_DTYPES)
    x = values(input_tensor)
    dims = _dims(op, dim, x.dim())
    if kind == "sum":
        out = x.sum(dim=dims, keepdim=keepdim)
    elif kind == "mean":
        out = x.mean(dim=dims, keepdim=keepdim)
    elif kind == "max":
        out = x.amax(dim=dims, keepdim=keepdim)
    else:
        out = x.amin(dim=dims, keepdim=keepdim)
    layout = input_tensor._layout
    mc = output_config(op, memory_config, input_tensor, out.shape, layout)
    return device_result(op, out, input_tensor._dtype, layout, input_tensor._device, mc)


def sum(input_tensor: Tensor, dim=None, keepdim: bool = False, *, memory_config=None) -> Tensor:
    """Sum over `dim` (an int, a list, or all dims)."""
    return _reduce_impl("ttnn.sum", "sum", input_tensor, dim, keepdim, memory_config)


def mean(input_tensor: Tensor, dim=None, keepdim: bool = False, *, memory_config=None) -> Tensor:
    """Mean over `dim` (an int, a list, or all dims)."""
    return _reduce_impl("ttnn.mean", "mean", input_tensor, dim, keepdim, memory_config)


def max(input_tensor: Tensor, dim=None, keepdim: bool = False, *, memory_config=None) -> Tensor:
    """Maximum over `dim` (an int, a list, or all dims)."""
    return _reduce_impl("ttnn.max", "max", input_tensor, dim, keepdim, memory_config)


def min(input_tensor: Tensor, dim=None, keepdim: bool = False, *, memory_config=None) -> Tensor:
    """Minimum over `dim` (an int, a list, or all dims)."""
    return _reduce_impl("ttnn.min", "min", input_tensor, dim, keepdim, memory_config)


def prod(input_tensor: Tensor, dim=None, keepdim: bool = False, *, memory_config=None) -> Tensor:
    """Product over one `dim` (or all elements when None; keepdim then refused, as on the real op); TILE out."""
    op = "ttnn.prod"
    tensor_arg(op, "input_tensor", input_tensor)
    require_dtype(op, "input_tensor", input_tensor, _NORM_DTYPES)
    if input_tensor.is_sharded():
        raise RuntimeError(f"TT_FATAL: {op}: sharded inputs are not supported")
    if input_tensor._dtype is DataType.BFLOAT8_B and input_tensor._layout is not Layout.TILE:
        raise RuntimeError(f"TT_FATAL: {op}: BFLOAT8_B inputs must be in TILE layout")
    x = values(input_tensor)
    if dim is None:
        if keepdim:
            raise RuntimeError(f"TT_FATAL: {op}: keepdim=True is not supported for a full product")
        out = x.prod().reshape(1)
    else:
        if not isinstance(dim, int):
            raise TypeError(f"{op}: dim must be an int or None, got {type(dim).__name__}")
        d = _dims(op, dim, x.dim())[0]
        out = x.prod(dim=d, keepdim=keepdim)
    mc = output_config(op, memory_config, input_tensor, out.shape, Layout.TILE)
    return device_result(op, out, input_tensor._dtype, Layout.TILE, input_tensor._device, mc)


_INT_ARG = frozenset({DataType.INT32, DataType.UINT32, DataType.UINT16})


def argmax(input_tensor: Tensor, dim=None, keepdim: bool = False, *, sub_core_grids=None, memory_config=None,
           output_tensor=None, enable_secondary_dm=None) -> Tensor:
    """Index of the (first) maximum along `dim` as UINT32 ROW_MAJOR interleaved (API docs' support table)."""
    op = "ttnn.argmax"
    tensor_arg(op, "input_tensor", input_tensor)
    require_dtype(op, "input_tensor", input_tensor, _NORM_DTYPES - {DataType.BFLOAT8_B} | _INT_ARG)
    if input_tensor.is_sharded():
        raise RuntimeError(f"TT_FATAL: {op}: sharded tensors are not supported (inputs must be INTERLEAVED)")
    x = values(input_tensor)
    rank = x.dim()
    if dim is None:
        if input_tensor._layout is not Layout.ROW_MAJOR:
            raise RuntimeError(f"TT_FATAL: {op}: dim=None (reduce all elements) needs a ROW_MAJOR input")
        out = x.reshape(-1).argmax().reshape(1) if not keepdim else x.reshape(-1).argmax().reshape([1] * rank)
    else:
        d = _dims(op, dim, rank)[0]
        last_rm = d == rank - 1 and input_tensor._layout is Layout.ROW_MAJOR
        if input_tensor._dtype in _INT_ARG and not last_rm:
            raise RuntimeError(f"TT_FATAL: {op}: integer inputs are only supported for a last-dim reduction of a "
                               "ROW_MAJOR tensor")
        out = x.argmax(dim=d, keepdim=keepdim)
    if memory_config is not None and memory_config.is_sharded():
        raise RuntimeError(f"TT_FATAL: {op}: the output must be INTERLEAVED")
    mc = output_config(op, memory_config, input_tensor, out.shape, Layout.ROW_MAJOR)
    return device_result(op, out, DataType.UINT32, Layout.ROW_MAJOR, input_tensor._device, mc)


def topk(input_tensor: Tensor, k: int = 32, dim: int = -1, largest: bool = True, sorted: bool = True, *,
         memory_config=None, sub_core_grids=None, indices_tensor=None, output_tensor=None, stable: bool = False):
    """[values, indices] of the k largest/smallest along `dim`; TILE input; indices UINT16 when the tile-padded
    dim fits 16 bits and the input is not FLOAT32, else UINT32 (API docs).  Ties: lowest index first."""
    op = "ttnn.topk"
    tensor_arg(op, "input_tensor", input_tensor)
    require_tile(op, "input_tensor", input_tensor)
    require_dtype(op, "input_tensor", input_tensor, _NORM_DTYPES)
    if input_tensor.is_sharded():
        raise RuntimeError(f"TT_FATAL: {op}: sharded inputs are not supported (interleaved DRAM or L1 only)")
    x = values(input_tensor)
    d = _dims(op, dim, x.dim())[0]
    size = x.shape[d]
    if not 1 <= k <= size:
        raise RuntimeError(f"TT_FATAL: {op}: k={k} must be in [1, {size}]")
    order = torch.sort(x, dim=d, descending=largest, stable=True).indices.narrow(d, 0, k)
    vals = torch.gather(x, d, order)
    wide = input_tensor._dtype is DataType.FLOAT32 or -(-size // TILE) * TILE > 65536
    index_dtype = DataType.UINT32 if wide else DataType.UINT16
    mc = output_config(op, memory_config, input_tensor, vals.shape, Layout.TILE)
    v = device_result(op, vals, input_tensor._dtype, Layout.TILE, input_tensor._device, mc)
    i = device_result(op, order, index_dtype, Layout.TILE, input_tensor._device, mc)
    return [v, i]


def cumsum(input: Tensor, dim: int, *, dtype=None, reverse_order: bool = False, out=None, memory_config=None,
           disable_compensated_sum: bool = False) -> Tensor:
    """Inclusive cumulative sum along `dim` (BFLOAT16/FLOAT32 per the API docs, and INT32, which real ttnn
    takes and returns: probe_integers.py; TILE, rank 1-5)."""
    op = "ttnn.cumsum"
    tensor_arg(op, "input", input)
    require_tile(op, "input", input)
    require_dtype(op, "input", input, {DataType.BFLOAT16, DataType.FLOAT32, DataType.INT32})
    x = values(input)
    if not 1 <= x.dim() <= 5:
        raise RuntimeError(f"TT_FATAL: {op}: rank {x.dim()} is not supported (1 to 5)")
    d = _dims(op, dim, x.dim())[0]
    if dtype is not None and dtype not in (DataType.BFLOAT16, DataType.FLOAT32):
        raise RuntimeError(f"TT_FATAL: {op}: unsupported dtype {dtype.name}")
    x = x.double() if x.is_floating_point() else x  # integers summed exactly in int64
    res = x.flip(d).cumsum(d).flip(d) if reverse_order else x.cumsum(d)
    mc = output_config(op, memory_config, input, res.shape, Layout.TILE)
    return device_result(op, res.float() if res.is_floating_point() else res, dtype or input._dtype, Layout.TILE,
                         input._device, mc)
