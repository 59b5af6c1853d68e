"""Data movement: reshape/view/unsqueeze/squeeze (views when the real library makes them), permute,
transpose, concat, slice, split, expand, repeat, pad and embedding.

`reshape` shares the input's buffer exactly when `onnx2ttnn.ir.views.reshape_is_view` says so, and
returns the input itself for a same-shape reshape; otherwise it allocates a new buffer.
"""
from __future__ import annotations

import builtins
import math

import torch

from onnx2ttnn.ir.views import reshape_is_view

from ._common import (device_result, output_config, require_dtype, result_like, same_device, tensor_arg,
                      values, view_of)
from ._tensor import Tensor
from ._types import DataType, Layout


def _norm_dim(op: str, dim: int, rank: int) -> int:
    if not -rank <= dim < builtins.max(rank, 1):
        raise RuntimeError(f"TT_FATAL: {op}: dimension {dim} out of range for a rank-{rank} tensor")
    return dim % builtins.max(rank, 1)


def _resolve_shape(op: str, t: Tensor, shape) -> tuple:
    dims = [int(d) for d in shape]
    if dims.count(-1) > 1:
        raise RuntimeError(f"TT_FATAL: {op}: only one dimension can be -1, got {dims}")
    numel = t._data.numel()
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        dims[dims.index(-1)] = numel // known if known else 0
    if math.prod(dims) != numel:
        raise RuntimeError(f"TT_FATAL: {op}: cannot reshape {list(t._data.shape)} ({numel} elements) to {dims}")
    return tuple(dims)


def _reshape_impl(op: str, input_tensor: Tensor, shape, memory_config=None, *, view_only=False) -> Tensor:
    tensor_arg(op, "input_tensor", input_tensor, on_device=False)
    new_shape = _resolve_shape(op, input_tensor, shape)
    old_shape = tuple(input_tensor._data.shape)
    if input_tensor._device is None:
        return Tensor._new(input_tensor._data.reshape(new_shape), input_tensor._dtype, input_tensor._layout,
                           origin=op)
    same_place = memory_config is None or memory_config == input_tensor._mem
    if new_shape == old_shape and same_place:
        return input_tensor
    tile = input_tensor._layout is Layout.TILE
    if same_place and not input_tensor.is_sharded() and reshape_is_view(tile, old_shape, new_shape):
        return view_of(op, input_tensor, input_tensor._data.reshape(new_shape))
    if view_only:
        raise RuntimeError(f"TT_FATAL: {op}: {list(old_shape)} -> {list(new_shape)} is not a zero-cost view "
                           "(the last dim must not change and, in TILE, the second-last must not change or "
                           "both must be multiples of 32)")
    data = input_tensor._data.reshape(new_shape)
    mc = output_config(op, memory_config, input_tensor, new_shape, input_tensor._layout)
    return device_result(op, data, input_tensor._dtype, input_tensor._layout, input_tensor._device, mc)


def reshape(input_tensor: Tensor, shape, *, memory_config=None) -> Tensor:
    """Reshape; a zero-copy view of the input buffer when the real library makes one."""
    return _reshape_impl("ttnn.reshape", input_tensor, shape, memory_config)


def view(input_tensor: Tensor, shape) -> Tensor:
    """A zero-cost reshape; refuses shapes that would need a copy."""
    return _reshape_impl("ttnn.view", input_tensor, shape, view_only=True)


def unsqueeze(input_tensor: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dim (a view of the input buffer when reshape would be one)."""
    rank = input_tensor._data.dim()
    d = _norm_dim("ttnn.unsqueeze", dim, rank + 1)
    shape = list(input_tensor._data.shape)
    shape.insert(d, 1)
    return _reshape_impl("ttnn.unsqueeze", input_tensor, shape)


def squeeze(input_tensor: Tensor, dim=None) -> Tensor:
    """Drop size-1 dims (all, one, or a list)."""
    shape = list(input_tensor._data.shape)
    if dim is None:
        dims = [i for i, s in enumerate(shape) if s == 1]
    else:
        dims = [_norm_dim("ttnn.squeeze", d, len(shape)) for d in ([dim] if isinstance(dim, int) else dim)]
    new = [s for i, s in enumerate(shape) if not (i in dims and s == 1)]
    return _reshape_impl("ttnn.squeeze", input_tensor, new)


def permute(input_tensor: Tensor, dims, *, memory_config=None) -> Tensor:
    """Reorder dimensions (always a new buffer, identity permutation returns the input)."""
    op = "ttnn.permute"
    tensor_arg(op, "input_tensor", input_tensor, on_device=False)
    rank = input_tensor._data.dim()
    order = [_norm_dim(op, d, rank) for d in dims]
    if sorted(order) != list(range(rank)):
        raise RuntimeError(f"TT_FATAL: {op}: {list(dims)} is not a permutation of {rank} dims")
    if order == list(range(rank)) and memory_config is None:
        return input_tensor
    return result_like(op, input_tensor._data.permute(order), input_tensor, memory_config=memory_config)


def transpose(input_tensor: Tensor, dim1: int, dim2: int, *, memory_config=None) -> Tensor:
    """Swap two dimensions."""
    op = "ttnn.transpose"
    tensor_arg(op, "input_tensor", input_tensor, on_device=False)
    rank = input_tensor._data.dim()
    a, b = _norm_dim(op, dim1, rank), _norm_dim(op, dim2, rank)
    return result_like(op, input_tensor._data.transpose(a, b), input_tensor, memory_config=memory_config)


def concat(tensors, dim: int = 0, *, memory_config=None) -> Tensor:
    """Concatenate tensors of the same rank, dtype and layout along `dim`."""
    op = "ttnn.concat"
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("TT_FATAL: ttnn.concat: expected at least one tensor")
    for i, t in enumerate(tensors):
        tensor_arg(op, f"tensors[{i}]", t)
    same_device(op, *tensors)
    first = tensors[0]
    rank = first._data.dim()
    d = _norm_dim(op, dim, rank)
    for i, t in enumerate(tensors[1:], 1):
        if t._data.dim() != rank or t._dtype is not first._dtype or t._layout is not first._layout:
            raise RuntimeError(f"TT_FATAL: {op}: tensors[{i}] ({t._describe()}) must have the rank, dtype and "
                               f"layout of tensors[0] ({first._describe()})")
        for k in range(rank):
            if k != d and t._data.shape[k] != first._data.shape[k]:
                raise RuntimeError(f"TT_FATAL: {op}: shapes {list(first._data.shape)} and {list(t._data.shape)} "
                                   f"differ outside the concat dim {dim}")
    data = torch.cat([t._data for t in tensors], dim=d)
    return result_like(op, data, first, memory_config=memory_config)


def slice(input_tensor: Tensor, slice_start, slice_end, slice_step=None, *, memory_config=None) -> Tensor:
    """input[start:end:step] per dimension (ends clamp to the dim size)."""
    op = "ttnn.slice"
    tensor_arg(op, "input_tensor", input_tensor, on_device=False)
    shape = list(input_tensor._data.shape)
    starts, ends = [int(s) for s in slice_start], [int(e) for e in slice_end]
    steps = [int(s) for s in slice_step] if slice_step is not None else [1] * len(shape)
    if not len(starts) == len(ends) == len(steps) == len(shape):
        raise RuntimeError(f"TT_FATAL: {op}: starts/ends/steps must have one entry per dim of {shape}")
    index = []
    for s, e, st, n in zip(starts, ends, steps, shape):
        if st <= 0:
            raise RuntimeError(f"TT_FATAL: {op}: step must be positive, got {st}")
        index.append(builtins.slice(s + n if s < 0 else s, e + n if e < 0 else builtins.min(e, n), st))
    data = input_tensor._data[tuple(index)]
    if data.numel() == 0:
        raise RuntimeError(f"TT_FATAL: {op}: slice {starts}:{ends}:{steps} of {shape} is empty")
    return result_like(op, data.contiguous(), input_tensor, memory_config=memory_config)


def split(input_tensor: Tensor, split_size, dim: int = 0, *, memory_config=None) -> list:
    """Split into chunks of `split_size` (int) or of the listed sizes, as new tensors."""
    op = "ttnn.split"
    tensor_arg(op, "input_tensor", input_tensor, on_device=False)
    d = _norm_dim(op, dim, input_tensor._data.dim())
    sizes = split_size if isinstance(split_size, int) else [int(s) for s in split_size]
    if not isinstance(sizes, int) and builtins.sum(sizes) != input_tensor._data.shape[d]:
        raise RuntimeError(f"TT_FATAL: {op}: split sizes {sizes} do not add up to dim {dim} of "
                           f"{list(input_tensor._data.shape)}")
    chunks = torch.split(input_tensor._data, sizes, dim=d)
    return [result_like(op, c.contiguous(), input_tensor, memory_config=memory_config) for c in chunks]


def expand(input_tensor: Tensor, output_shape, *, memory_config=None) -> Tensor:
    """Broadcast size-1 dims to `output_shape` (-1 keeps a dim)."""
    op = "ttnn.expand"
    tensor_arg(op, "input_tensor", input_tensor, on_device=False)
    try:
        data = input_tensor._data.expand(*[int(s) for s in output_shape])
    except RuntimeError as e:
        raise RuntimeError(f"TT_FATAL: {op}: cannot expand {list(input_tensor._data.shape)} to "
                           f"{list(output_shape)}: {e}") from None
    return result_like(op, data.contiguous(), input_tensor, memory_config=memory_config)


def repeat(input_tensor: Tensor, repeat_dims, *, memory_config=None) -> Tensor:
    """Tile the tensor `repeat_dims[i]` times along each dim."""
    op = "ttnn.repeat"
    tensor_arg(op, "input_tensor", input_tensor, on_device=False)
    reps = [int(r) for r in repeat_dims]
    if len(reps) != input_tensor._data.dim():
        raise RuntimeError(f"TT_FATAL: {op}: repeat_dims {reps} must have one entry per dim of "
                           f"{list(input_tensor._data.shape)}")
    return result_like(op, input_tensor._data.repeat(*reps), input_tensor, memory_config=memory_config)


def pad(input_tensor: Tensor, padding, value: float, *, memory_config=None) -> Tensor:
    """Pad with `value`: padding[i] = (before, after) for dim i (listed from the first dim)."""
    op = "ttnn.pad"
    tensor_arg(op, "input_tensor", input_tensor, on_device=False)
    pads = [tuple(int(v) for v in p) for p in padding]
    rank = input_tensor._data.dim()
    if len(pads) > rank or any(len(p) != 2 or p[0] < 0 or p[1] < 0 for p in pads):
        raise RuntimeError(f"TT_FATAL: {op}: padding {padding} must be (before, after) pairs, one per dim")
    pads = [(0, 0)] * (rank - len(pads)) + pads
    if input_tensor._layout is Layout.TILE and any(p[0] for p in pads):
        raise RuntimeError(f"TT_FATAL: {op}: TILE layout does not support front padding on device")
    flat = [v for p in reversed(pads) for v in p]
    data = torch.nn.functional.pad(values(input_tensor), flat, value=value)
    return result_like(op, data, input_tensor, memory_config=memory_config)


def embedding(input_tensor: Tensor, weight: Tensor, *, padding_idx=None, layout=None, dtype=None,
              memory_config=None) -> Tensor:
    """weight[input_tensor]: indices UINT32 ROW_MAJOR, weight [vocab, hidden] ROW_MAJOR or TILE (bfloat8_b: TILE;
    the result is then TILE and bfloat16 unless told otherwise, docs/ttnn-facts.md §6 and §20)."""
    op = "ttnn.embedding"
    tensor_arg(op, "input_tensor", input_tensor)
    tensor_arg(op, "weight", weight)
    same_device(op, input_tensor, weight)
    require_dtype(op, "input_tensor", input_tensor, {DataType.UINT32})
    if input_tensor._layout is not Layout.ROW_MAJOR:
        raise RuntimeError(f"TT_FATAL: {op}: indices must be in ROW_MAJOR layout ({input_tensor._describe()})")
    if weight._dtype is DataType.BFLOAT4_B:
        raise RuntimeError("TT_FATAL: Only TILE layout is supported for BFLOAT8_B dtype!")  # sic, §20
    require_dtype(op, "weight", weight, {DataType.BFLOAT16, DataType.FLOAT32, DataType.BFLOAT8_B})
    table = weight._data.reshape(-1, weight._data.shape[-1])
    ids = input_tensor._data.long()
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= table.shape[0]):
        raise RuntimeError(f"TT_FATAL: {op}: index out of range for a table of {table.shape[0]} rows")
    data = table[ids]
    if padding_idx is not None:
        data = data.masked_fill((ids == padding_idx).unsqueeze(-1), 0)
    out_layout = layout or weight._layout
    out_dtype = dtype or (DataType.BFLOAT16 if weight._dtype is DataType.BFLOAT8_B else weight._dtype)
    mc = output_config(op, memory_config, input_tensor, data.shape, out_layout)
    return device_result(op, values_of(data), out_dtype, out_layout, input_tensor._device, mc)


def values_of(data: torch.Tensor) -> torch.Tensor:
    return data.float() if data.is_floating_point() else data.long()
