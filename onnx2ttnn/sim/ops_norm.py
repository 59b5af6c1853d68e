"""Normalizations and reductions: softmax, layer_norm, rms_norm, mean/sum/max/min, argmax.

softmax / layer_norm / rms_norm need TILE device tensors (API docs) and compute in float32.  layer_norm
weights and biases may be TILE [C] / [1, C] or ROW_MAJOR [C/32, 32], as on the real library.  Reductions
keep TILE output for TILE input.  (This module defines sum/max/min: do not use those builtins here.)
"""
from __future__ import annotations

import torch

from ._common import device_result, output_config, require_dtype, require_tile, same_device, tensor_arg, values
from ._tensor import Tensor
from ._types import DataType, Layout, TensorMemoryLayout, TILE

_NORM_DTYPES = frozenset({DataType.BFLOAT16, DataType.FLOAT32, DataType.BFLOAT8_B})


def softmax(input_tensor: Tensor, dim: int = -1, *, memory_config=None, compute_kernel_config=None,
            numeric_stable: bool = True) -> Tensor:
    """Softmax along `dim` (float32 math, one rounding)."""
    op = "ttnn.softmax"
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
    return _norm_impl("ttnn.layer_norm", input_tensor, epsilon, weight, bias, residual_input_tensor,
                      memory_config, rms=False)


def rms_norm(input_tensor: Tensor, *, epsilon: float = 1e-12, weight=None, bias=None, residual_input_tensor=None,
             memory_config=None, program_config=None, compute_kernel_config=None) -> Tensor:
    """x / sqrt(mean(x^2) + epsilon) * weight + bias over the last dim."""
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


def argmax(input_tensor: Tensor, dim=None, keepdim: bool = False, *, memory_config=None) -> Tensor:
    """Index of the maximum along `dim` (flattened when None) as UINT32 ROW_MAJOR."""
    op = "ttnn.argmax"
    tensor_arg(op, "input_tensor", input_tensor)
    x = values(input_tensor)
    out = x.argmax(dim=dim, keepdim=keepdim) if dim is not None else x.reshape(-1).argmax()
    mc = output_config(op, memory_config, input_tensor, out.shape, Layout.ROW_MAJOR)
    return device_result(op, out, DataType.UINT32, Layout.ROW_MAJOR, input_tensor._device, mc)

