"""Helpers every simulated op uses: argument checks, output placement, allocating results.

An op reads its inputs' values (`values`), computes in float32 / int64, and `device_result` rounds the
result to its dtype, validates the output memory config and allocates the output buffer.
"""
from __future__ import annotations

import torch

from ._memconfig import DRAM_MEMORY_CONFIG, MemoryConfig, TensorMemoryLayout
from ._placement import adapt_shard_spec, check_dtype_layout, plan
from ._rounding import compute_view, to_storage
from ._tensor import Tensor
from ._types import DataType, FLOAT_TYPES, Layout, SHORT_NAME


def tensor_arg(op: str, name: str, t, *, on_device: bool = True) -> Tensor:
    """Check that `t` is a usable tensor (on the device unless on_device=False)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {name} must be a ttnn.Tensor, got {type(t).__name__}")
    t._check_usable(op, name)
    if on_device and t._device is None:
        raise RuntimeError(f"TT_FATAL: {op}: {name} must be on device ({t._describe()} is a host tensor)")
    return t


def require_tile(op: str, name: str, t: Tensor) -> None:
    if t._layout is not Layout.TILE:
        raise RuntimeError(f"TT_FATAL: {op}: {name} must be in TILE layout, got Layout::{t._layout.name} "
                           f"({t._describe()})")


def require_dtype(op: str, name: str, t: Tensor, allowed) -> None:
    if t._dtype not in allowed:
        names = ", ".join(sorted(d.name for d in allowed))
        raise RuntimeError(f"TT_FATAL: {op}: unsupported dtype DataType::{t._dtype.name} for {name}; "
                           f"supported: {names}")


def same_device(op: str, *tensors: Tensor):
    devices = {id(t._device): t._device for t in tensors if isinstance(t, Tensor)}
    if len(devices) > 1:
        raise RuntimeError(f"TT_FATAL: {op}: all input tensors must be on the same device")
    return next(iter(devices.values()))


def values(t: Tensor) -> torch.Tensor:
    """A tensor's values for computation (float32 for float dtypes, int64 for integer dtypes)."""
    return compute_view(t._data)


def output_config(op: str, memory_config: MemoryConfig | None, like: Tensor | None, out_shape, layout: Layout,
                  default: MemoryConfig | None = None) -> MemoryConfig:
    """The memory config of an op's output: the given one, else `default`, else the input's."""
    if memory_config is not None:
        if not isinstance(memory_config, MemoryConfig):
            raise TypeError(f"{op}: memory_config must be a ttnn.MemoryConfig, got {type(memory_config).__name__}")
        mc = memory_config
        if mc.is_sharded() and mc.shard_spec is None:
            if like is None or not like.is_sharded() or like._mem.memory_layout is not mc.memory_layout:
                raise RuntimeError(f"TT_FATAL: {op}: sharded memory_config {mc.memory_layout.name} without a "
                                   "shard spec needs a sharded input of the same memory layout")
            mc = adapt_shard_spec(like._mem, out_shape, layout)
        return mc
    if default is not None:
        return default
    mc = like._mem if like is not None and like._mem is not None else DRAM_MEMORY_CONFIG
    if mc.is_sharded() and (tuple(out_shape) != tuple(like._data.shape) or layout is not like._layout):
        mc = adapt_shard_spec(mc, out_shape, layout)
    return mc


def device_result(op: str, data: torch.Tensor, dtype: DataType, layout: Layout, device,
                  mc: MemoryConfig) -> Tensor:
    """Round `data` to `dtype`, allocate a buffer for it under `mc` and wrap it as a device tensor."""
    storage = to_storage(data, dtype)
    shape = tuple(storage.shape)
    geometry = plan(device, shape, dtype, layout, mc)
    description = f"{list(shape)} {SHORT_NAME[dtype]} {layout.name} {mc.buffer_type.name} " \
                  f"{mc.memory_layout.name.lower()}"
    buffer = device.allocate(mc.buffer_type, description=description, created_by=op, **geometry)
    return Tensor._new(storage, dtype, layout, device, buffer, mc, origin=op)


def host_result(op: str, data: torch.Tensor, dtype: DataType, layout: Layout) -> Tensor:
    """Round `data` to `dtype` as a host tensor."""
    check_dtype_layout(dtype, layout)
    return Tensor._new(to_storage(data, dtype), dtype, layout, origin=op)


def result_like(op: str, data: torch.Tensor, like: Tensor, *, dtype: DataType | None = None,
                layout: Layout | None = None, memory_config: MemoryConfig | None = None) -> Tensor:
    """An op result placed like `like` (host stays host) unless told otherwise."""
    dtype = dtype or like._dtype
    layout = layout or like._layout
    if like._device is None:
        return host_result(op, data, dtype, layout)
    mc = output_config(op, memory_config, like, data.shape, layout)
    return device_result(op, data, dtype, layout, like._device, mc)


def view_of(op: str, t: Tensor, data: torch.Tensor) -> Tensor:
    """A tensor sharing `t`'s buffer with new logical values (a zero-copy view)."""
    return Tensor._new(data, t._dtype, t._layout, t._device, t._buffer, t._mem, origin=op)


def float_result_dtype(op: str, t: Tensor, dtype: DataType | None) -> DataType:
    """Output dtype of a float op: the requested one or the input's."""
    out = dtype or t._dtype
    if not isinstance(out, DataType):
        raise TypeError(f"{op}: dtype must be a ttnn.DataType, got {type(out).__name__}")
    return out


def is_float(dtype: DataType) -> bool:
    return dtype in FLOAT_TYPES


def tilized_copy(op: str, t, other=None):
    """The tile-padded copy real ttnn makes of a ROW_MAJOR device operand an op reads as TILE (a binary op's
    operand beside a TILE one, linear's bias): TilizeWithValPaddingDeviceOperation, allocated interleaved in the
    operand's own buffer type before the op's output and freed when the call returns (docs/ttnn-facts.md §47;
    the caller frees it with `t.deallocate(True)`).  Values unchanged.  None when `t` needs no copy."""
    if not isinstance(t, Tensor) or t._device is None or t._layout is not Layout.ROW_MAJOR:
        return None
    if other is not None and (not isinstance(other, Tensor) or other._layout is not Layout.TILE):
        return None
    mc = MemoryConfig(TensorMemoryLayout.INTERLEAVED, t._mem.buffer_type)
    return device_result(op, values(t), t._dtype, Layout.TILE, t._device, mc)
