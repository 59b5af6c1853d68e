"""Device lifetime and queries: open_device, close_device, synchronize_device, get_memory_view, sizes."""
from __future__ import annotations

from . import runtime
from ._device import Device, get_memory_view  # noqa: F401  (re-exported by the package)
from ._types import DataType, ELEMENT_SIZE, TILE_BYTES


def open_device(*, device_id: int = 0, l1_small_size: int = 16384, trace_region_size: int = 0,
                num_command_queues: int = 1, dispatch_core_config=None, worker_l1_size: int = 0) -> Device:
    """Open a simulated device modelled on runtime.device_spec() (n150 unless configured); `num_command_queues`
    queues (1 or 2) for ops_trace.py's ordering checks; the trace region is taken off the top of every DRAM bank
    (the trace's recorded commands themselves are not modelled)."""
    return _open("open_device", device_id, l1_small_size, trace_region_size, num_command_queues)


def CreateDevice(device_id: int, num_command_queues: int = 1, l1_small_size: int = 0, trace_region_size: int = 0,
                 dispatch_core_config=None, *, worker_l1_size: int = 0) -> Device:  # noqa: N802 (ttnn's name)
    """open_device with the signature that names num_command_queues (what --trace programs call)."""
    return _open("CreateDevice", device_id, l1_small_size, trace_region_size, num_command_queues)


def _open(call: str, device_id: int, l1_small_size: int, trace_region_size: int, num_command_queues: int) -> Device:
    if num_command_queues not in (1, 2):
        raise RuntimeError(f"TT_FATAL: {call}: num_command_queues must be 1 or 2, got {num_command_queues}")
    device = Device(runtime.device_spec(), device_id, l1_small_size, trace_region_size)
    device.num_command_queues = num_command_queues
    return device


def close_device(device) -> None:
    """Close a device: frees every buffer and records the ones still allocated as leaks."""
    if not isinstance(device, Device):
        raise TypeError(f"close_device: expected a device, got {type(device).__name__}")
    if device.is_open:
        device.close()
        runtime._record_closed(device)


def synchronize_device(device, cq_id=None, sub_device_ids=()) -> None:
    """Wait for the device: the simulator runs every op eagerly, so there is nothing to wait for."""


def element_size(dtype: DataType) -> int:
    """Bytes per element of a dtype (bfloat8_b counts 1 mantissa byte)."""
    return ELEMENT_SIZE[dtype]


def tile_size(dtype: DataType) -> int:
    """Bytes of one 32x32 tile of a dtype (1088 for bfloat8_b)."""
    return TILE_BYTES[dtype]
