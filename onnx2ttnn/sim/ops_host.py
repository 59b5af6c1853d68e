"""Moving tensors between torch, host and device, and changing layout, dtype or placement.

from_torch rounds to the requested dtype (bfloat8_b packing included); with a device it allocates a
DRAM-interleaved buffer unless a memory config is given.  to_layout / to_memory_config / typecast return
a new buffer except when nothing would change, where the real library hands back the input tensor itself.
"""
from __future__ import annotations

import torch

from ._mesh import MeshDevice, MeshTensor, compose, map_to_mesh
from ._common import device_result, host_result, output_config, tensor_arg
from ._memconfig import DRAM_MEMORY_CONFIG, MemoryConfig
from ._placement import check_dtype_layout
from ._rounding import compute_view
from ._tensor import Tensor, default_dtype_for, torch_for
from ._types import DataType, Layout


def _check_types(op: str, dtype, layout) -> None:
    if dtype is not None and not isinstance(dtype, DataType):
        raise TypeError(f"{op}: dtype must be a ttnn.DataType, got {dtype!r}")
    if layout is not None and not isinstance(layout, Layout):
        raise TypeError(f"{op}: layout must be a ttnn.Layout, got {layout!r}")


def from_torch(tensor, dtype: DataType | None = None, *, pad_value=None, layout: Layout | None = None,
               device=None, memory_config: MemoryConfig | None = None, mesh_mapper=None) -> Tensor:
    """A ttnn tensor from a torch tensor: on the host, or on `device` (DRAM interleaved by default); on a
    mesh device, split or replicated over its chips by `mesh_mapper` (replicated when None)."""
    if tensor is None:
        return None
    if isinstance(device, MeshDevice):
        upload = _converted_on_device if mesh_mapper is not None else from_torch
        return map_to_mesh(upload, tensor, device, mesh_mapper,
                           dict(dtype=dtype, layout=layout, memory_config=memory_config))
    if device is None and mesh_mapper is not None:  # a host tensor of the chips' pieces (to_device places them)
        return map_to_mesh(from_torch, tensor, mesh_mapper.mesh, mesh_mapper, dict(dtype=dtype, layout=layout),
                           on_host=True)
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"from_torch: expected a torch.Tensor, got {type(tensor).__name__}")
    _check_types("ttnn.from_torch", dtype, layout)
    dtype = dtype or default_dtype_for(tensor)
    layout = layout or Layout.ROW_MAJOR
    check_dtype_layout(dtype, layout)
    src = tensor.detach()
    data = src.to(torch.float32) if src.is_floating_point() else src.to(torch.int64)
    if device is None:
        return host_result("ttnn.from_torch", data, dtype, layout)
    mc = memory_config or DRAM_MEMORY_CONFIG
    return device_result("ttnn.from_torch", data, dtype, layout, device, mc)


def _converted_on_device(piece, *, device, dtype=None, layout=None, memory_config=None) -> Tensor:
    """One chip's piece of from_torch(device=mesh, mesh_mapper=...): ttnn 0.81.1 converts a float torch tensor
    to a bf16 / float32 tensor on the device (docs/ttnn-facts.md §36, ttnn.graph capture on the mock): the
    piece in the torch dtype ROW_MAJOR, tilized into a new buffer, typecast into a third (then untilized for a
    ROW_MAJOR result), each freed once the next is written, all under the target memory config.  Block floats,
    integers and a piece already in its target form are converted on the host (one buffer, the result)."""
    _check_types("ttnn.from_torch", dtype, layout)
    dtype = dtype or default_dtype_for(piece)
    layout = layout or Layout.ROW_MAJOR
    check_dtype_layout(dtype, layout)
    source = {torch.float32: DataType.FLOAT32, torch.bfloat16: DataType.BFLOAT16}.get(piece.dtype)
    mc = memory_config or DRAM_MEMORY_CONFIG
    if source is None or dtype not in (DataType.FLOAT32, DataType.BFLOAT16) or mc.is_sharded() or (
            source is dtype and layout is Layout.ROW_MAJOR):
        return from_torch(piece, dtype, layout=layout, device=device, memory_config=memory_config)
    op, data = "ttnn.from_torch", piece.detach().to(torch.float32)
    steps = [(source, Layout.ROW_MAJOR), (source, Layout.TILE)]
    steps += [(dtype, Layout.TILE)] if dtype is not source else []
    steps += [(dtype, Layout.ROW_MAJOR)] if layout is Layout.ROW_MAJOR else []
    current = None
    try:
        for step_dtype, step_layout in steps:
            written = device_result(op, data, step_dtype, step_layout, device, mc)
            if current is not None:
                current.deallocate()
            current = written
    except RuntimeError:  # out of memory: the buffers written so far are freed (ttnn's tensors go out of scope)
        if current is not None:
            current.deallocate()
        raise
    return current


def as_tensor(tensor, dtype: DataType | None = None, *, layout: Layout | None = Layout.ROW_MAJOR, device=None,
              memory_config: MemoryConfig | None = None, cache_file_name=None, preprocess=None) -> Tensor:
    """from_torch with an optional preprocessing step (the simulator keeps no cache files)."""
    out = from_torch(tensor, dtype, layout=layout, device=device, memory_config=memory_config)
    return preprocess(out) if preprocess is not None else out


def to_torch(tensor: Tensor, dtype=None, *, mesh_composer=None) -> torch.Tensor:
    """The logical values as a torch tensor (bf16 -> bfloat16, bfp8/f32 -> float32, uint32 -> int32); a mesh
    tensor's pieces joined by `mesh_composer`."""
    if isinstance(tensor, MeshTensor):
        return compose(to_torch, tensor, mesh_composer, dtype)
    tensor_arg("ttnn.to_torch", "tensor", tensor, on_device=False)
    return torch_for(tensor, dtype)


def to_device(tensor: Tensor, device, memory_config: MemoryConfig | None = None) -> Tensor:
    """Copy a host tensor to the device (DRAM interleaved by default)."""
    tensor_arg("ttnn.to_device", "tensor", tensor, on_device=False)
    if tensor._device is not None:
        if tensor._device is device and (memory_config is None or memory_config == tensor._mem):
            return tensor
        return to_memory_config(tensor, memory_config or tensor._mem)
    mc = memory_config or DRAM_MEMORY_CONFIG
    return device_result("ttnn.to_device", tensor._data, tensor._dtype, tensor._layout, device, mc)


def from_device(tensor: Tensor, blocking: bool = True) -> Tensor:
    """Copy a device tensor to the host (the device buffer stays allocated)."""
    tensor_arg("ttnn.from_device", "tensor", tensor, on_device=False)
    if tensor._device is None:
        return tensor
    return Tensor._new(tensor._data, tensor._dtype, tensor._layout, origin="ttnn.from_device")


def to_layout(tensor: Tensor, layout: Layout, dtype: DataType | None = None,
              memory_config: MemoryConfig | None = None) -> Tensor:
    """Re-lay the tensor out as TILE or ROW_MAJOR (optionally changing dtype and placement)."""
    op = "ttnn.to_layout"
    tensor_arg(op, "tensor", tensor, on_device=False)
    _check_types(op, dtype, layout)
    out_dtype = dtype or tensor._dtype
    if layout is tensor._layout and out_dtype is tensor._dtype and (
            memory_config is None or tensor._device is None or memory_config == tensor._mem):
        return tensor
    check_dtype_layout(out_dtype, layout)
    data = compute_view(tensor._data)
    if tensor._device is None:
        return host_result(op, data, out_dtype, layout)
    mc = output_config(op, memory_config, tensor, data.shape, layout)
    return device_result(op, data, out_dtype, layout, tensor._device, mc)


def typecast(input_tensor: Tensor, dtype: DataType, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """Convert element type (float -> int truncates toward zero; ints wrap)."""
    op = "ttnn.typecast"
    tensor_arg(op, "input_tensor", input_tensor, on_device=False)
    _check_types(op, dtype, None)
    check_dtype_layout(dtype, input_tensor._layout)
    data = compute_view(input_tensor._data)
    if input_tensor._device is None:
        return host_result(op, data, dtype, input_tensor._layout)
    mc = output_config(op, memory_config, input_tensor, data.shape, input_tensor._layout)
    if mc.memory_layout != input_tensor.memory_config().memory_layout:
        raise RuntimeError(f"TT_FATAL: {op}: Typecast operation requires Input and Output memory layout to match. "
                           f"Input layout: TensorMemoryLayout::{input_tensor.memory_config().memory_layout.name}, "
                           f"Output layout: TensorMemoryLayout::{mc.memory_layout.name}")
    return device_result(op, data, dtype, input_tensor._layout, input_tensor._device, mc)


def to_memory_config(tensor: Tensor, memory_config: MemoryConfig, dtype: DataType | None = None) -> Tensor:
    """Move a device tensor to another placement (returns the input when the placement is unchanged)."""
    op = "ttnn.to_memory_config"
    tensor_arg(op, "tensor", tensor)
    _check_types(op, dtype, None)
    out_dtype = dtype or tensor._dtype
    if memory_config == tensor._mem and out_dtype is tensor._dtype:
        return tensor
    mc = output_config(op, memory_config, tensor, tensor._data.shape, tensor._layout)
    return device_result(op, compute_view(tensor._data), out_dtype, tensor._layout, tensor._device, mc)


def clone(input: Tensor, *, dtype: DataType | None = None, memory_config: MemoryConfig | None = None,  # noqa: A002
          compute_kernel_config=None) -> Tensor:
    """A copy of a device tensor in a new buffer, where memory_config says (default: the input's placement).  Real
    ttnn keeps a TILE tensor's padded shape (docs/ttnn-facts.md §29: a conv's prepared weight keeps the padding
    conv2d gave it, which to_memory_config drops); the simulator holds no padding beyond the tiles."""
    op = "ttnn.clone"
    tensor_arg(op, "input", input)
    _check_types(op, dtype, None)
    mc = output_config(op, memory_config or input._mem, input, input._data.shape, input._layout)
    return device_result(op, compute_view(input._data), dtype or input._dtype, input._layout, input._device, mc)


def deallocate(tensor: Tensor, force: bool = True) -> None:
    """Free a device tensor's buffer.

    force=True frees the buffer even when views share it (they all become unusable); force=False frees
    it only when this is the last tensor using it.  Either way this handle is released.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"deallocate: expected a ttnn.Tensor, got {type(tensor).__name__}")
    if tensor._device is None:
        return
    if tensor._released:
        return
    buffer = tensor._buffer
    if buffer.allocated and (force or buffer.refs <= 1):
        buffer.free(f"ttnn.deallocate({tensor._describe()})")
    tensor._released = True
    buffer.refs -= 1
