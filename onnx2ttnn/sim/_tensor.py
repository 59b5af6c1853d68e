"""ttnn.Tensor: logical values + dtype + layout + (for device tensors) a buffer and a memory config.

The simulator stores the *logical* tensor only, already rounded to its dtype (see `_rounding.py`); the
padded shape is arithmetic.  Device tensors hold a `Buffer`; views (reshape and friends) share it, so
freeing the buffer through any alias makes every alias unusable, as on the real library.
"""
from __future__ import annotations

import itertools

import torch

from ._memconfig import DRAM_MEMORY_CONFIG, MemoryConfig
from ._types import (DataType, ELEMENT_SIZE, FROM_TORCH_DTYPE, Layout, SHORT_NAME, Shape, StorageType,
                     TO_TORCH_DTYPE, padded_shape)

_tensor_ids = itertools.count(1)


class Tensor:
    """A simulated ttnn tensor, on the host or on a simulated device."""

    __slots__ = ("_data", "_dtype", "_layout", "_device", "_buffer", "_mem", "_id", "_origin", "_released",
                 "__weakref__")

    def __init__(self, tensor, data_type: DataType | None = None, device=None, layout: Layout | None = None,
                 mem_config: MemoryConfig | None = None):
        from .ops_host import from_torch  # the constructor is from_torch on an array

        src = tensor if isinstance(tensor, torch.Tensor) else torch.as_tensor(tensor)
        made = from_torch(src, data_type, layout=layout, device=device, memory_config=mem_config)
        for slot in Tensor.__slots__[:-1]:
            setattr(self, slot, getattr(made, slot))
        if self._buffer is not None:
            self._buffer.refs += 1
            made._released = True
            self._buffer.refs -= 1

    @classmethod
    def _new(cls, data: torch.Tensor, dtype: DataType, layout: Layout, device=None, buffer=None,
             mem: MemoryConfig | None = None, origin: str = "") -> "Tensor":
        """Wrap already-rounded storage (internal constructor)."""
        t = object.__new__(cls)
        t._data, t._dtype, t._layout, t._device, t._buffer = data, dtype, layout, device, buffer
        t._mem, t._id, t._origin, t._released = mem, next(_tensor_ids), origin, False
        if buffer is not None:
            buffer.refs += 1
        return t

    # -- metadata --
    @property
    def shape(self) -> Shape:
        return Shape(self._data.shape)

    @property
    def padded_shape(self) -> Shape:
        return padded_shape(tuple(self._data.shape), self._layout)

    @property
    def dtype(self) -> DataType:
        return self._dtype

    @property
    def layout(self) -> Layout:
        return self._layout

    def get_dtype(self) -> DataType:
        return self._dtype

    def get_layout(self) -> Layout:
        return self._layout

    def storage_type(self) -> StorageType:
        return StorageType.HOST if self._device is None else StorageType.DEVICE

    def device(self):
        return self._device

    def memory_config(self) -> MemoryConfig:
        return self._mem if self._mem is not None else DRAM_MEMORY_CONFIG

    def is_sharded(self) -> bool:
        return self._mem is not None and self._mem.is_sharded()

    def is_allocated(self) -> bool:
        if self._device is None:
            return self._data is not None
        return not self._released and self._buffer.allocated

    def buffer_address(self) -> int:
        self._check_usable("Tensor.buffer_address")
        if self._buffer is None:
            raise RuntimeError("TT_FATAL: Tensor.buffer_address: tensor is on the host and has no device buffer")
        return self._buffer.address

    def element_size(self) -> int:
        return ELEMENT_SIZE[self._dtype]

    def volume(self) -> int:
        return _prod(self.padded_shape)

    def logical_volume(self) -> int:
        return self._data.numel()

    def tensor_id(self) -> int:
        return self._id

    # -- conversions --
    def cpu(self, blocking: bool = True) -> "Tensor":
        from .ops_host import from_device
        return from_device(self)

    def to_torch(self) -> torch.Tensor:
        from .ops_host import to_torch
        return to_torch(self)

    def deallocate(self, force: bool = False) -> None:
        from .ops_host import deallocate
        deallocate(self, force)

    # -- simulator internals --
    def _describe(self) -> str:
        where = "host" if self._device is None else f"{self.memory_config().buffer_type.name} " \
                f"{self.memory_config().memory_layout.name.lower()}"
        shape = list(self._data.shape) if self._data is not None else "?"
        origin = f", from {self._origin}" if self._origin else ""
        return f"tensor #{self._id} {shape} {SHORT_NAME[self._dtype]} {self._layout.name} {where}{origin}"

    def _check_usable(self, op: str, name: str = "tensor") -> None:
        """Raise a clear error when this tensor's device buffer is gone."""
        if self._device is None:
            return
        if self._released or not self._buffer.allocated:
            how = ("this handle was released by ttnn.deallocate" if self._released and self._buffer.allocated
                   else f"its buffer was freed by {self._buffer.freed_by}")
            raise RuntimeError(f"TT_FATAL: {op}: {name} ({self._describe()}) is not allocated: {how}. "
                               "Deallocate a buffer only after the last use of every tensor that shares it.")
        if not self._device.is_open:
            raise RuntimeError(f"TT_FATAL: {op}: {name} ({self._describe()}) is on a closed device")

    def __repr__(self) -> str:
        if self._device is not None and not self.is_allocated():
            return f"ttnn.Tensor(<deallocated> {self._describe()})"
        return f"ttnn.Tensor({self._describe()})\n{self._data}"

    def __len__(self) -> int:
        return self._data.shape[0]


def _prod(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def torch_for(t: Tensor, dtype=None) -> torch.Tensor:
    """The values of a tensor as ttnn.to_torch returns them."""
    target = dtype or TO_TORCH_DTYPE[t._dtype]
    data = t._data
    if t._dtype is DataType.UINT32 and dtype is None:
        return ((data + 2**31) % 2**32 - 2**31).to(torch.int32)
    if t._dtype is DataType.UINT16 and dtype is None:
        return ((data + 2**15) % 2**16 - 2**15).to(torch.int16)
    return data.to(target).clone()


def default_dtype_for(src: torch.Tensor) -> DataType:
    try:
        return FROM_TORCH_DTYPE[src.dtype]
    except KeyError:
        raise RuntimeError(f"TT_FATAL: from_torch: unsupported torch dtype {src.dtype}") from None
