"""Command queues and events: record_event, wait_for_event, copy_host_to_device_tensor (sim/ops_trace.py's
ordering rules for two queues live here).

Each queue counts the commands enqueued on it; an event recorded on queue q completes once q's first `seq`
commands have; wait_for_event(c, event) makes queue c wait for it.  A copy on one queue into a buffer that a
replay on another queue reads, or a replay reading a buffer another queue copied into, is a race unless the
queue waited for an event recorded after the other side's command: a TraceError names both.
"""
from __future__ import annotations

from dataclasses import dataclass

from ._device import Device
from ._tensor import Tensor


class TraceError(RuntimeError):
    """A traced program broke a rule a ttnn trace needs (see the module docstring)."""


class QueueId:
    """A command queue's id (ttnn.QueueId(1))."""

    def __init__(self, arg: int, /):
        self.value = int(arg)

    def __int__(self) -> int:
        return self.value


@dataclass
class MeshEvent:
    """An event recorded on a command queue: done once the queue's first `seq` commands are."""

    device: Device
    cq_id: int
    seq: int


def _state(device) -> dict:
    """The simulator's queue and trace state of a device (made on first use)."""
    if not hasattr(device, "_queues"):
        device._queues = {"count": [0] * getattr(device, "num_command_queues", 1), "waited": {},
                          "writes": {}, "reads": {}, "capture": None, "traces": {}}
    return device._queues


def _queue(device, cq_id) -> int:
    q = 0 if cq_id is None else int(cq_id)
    queues = len(_state(device)["count"])
    if not 0 <= q < queues:
        raise TraceError(f"command queue {q}: the device was opened with {queues} command queue(s) "
                         "(CreateDevice(num_command_queues=2) for two)")
    return q


def _enqueue(device, q: int) -> int:
    counts = _state(device)["count"]
    counts[q] += 1
    return counts[q]


def _waited(device, q: int, other: int) -> int:
    return _state(device)["waited"].get((q, other), 0)


# -- events ------------------------------------------------------------------------------------------------
def record_event(mesh_device, cq_id=None, sub_device_ids=(), device_range=None) -> MeshEvent:
    """An event that completes when the commands enqueued so far on queue `cq_id` have."""
    q = _queue(mesh_device, cq_id)
    return MeshEvent(mesh_device, q, _state(mesh_device)["count"][q])


def wait_for_event(cq_id=None, mesh_event=None) -> None:
    """Queue `cq_id` runs nothing further until `mesh_event` completes."""
    q = _queue(mesh_event.device, cq_id)
    waited = _state(mesh_event.device)["waited"]
    key = (q, mesh_event.cq_id)
    waited[key] = max(waited.get(key, 0), mesh_event.seq)


def event_synchronize(mesh_event) -> None:
    """Block the host until the event completes (the simulator runs eagerly: nothing to wait for)."""


def is_trace_capture_active(device) -> bool:
    return _state(device)["capture"] is not None


# -- persistent inputs -------------------------------------------------------------------------------------
def copy_host_to_device_tensor(host_tensor, device_tensor, cq_id=None) -> None:
    """Write a host tensor's values into an allocated device tensor (same shape, dtype and layout), in place."""
    op = "ttnn.copy_host_to_device_tensor"
    if not isinstance(host_tensor, Tensor) or host_tensor._device is not None:
        raise TypeError(f"{op}: host_tensor must be a host ttnn.Tensor")
    if not isinstance(device_tensor, Tensor) or device_tensor._device is None:
        raise TypeError(f"{op}: device_tensor must be a device ttnn.Tensor")
    device_tensor._check_usable(op, "device_tensor")
    if host_tensor._dtype is not device_tensor._dtype:
        raise RuntimeError(f"TT_FATAL: {op}: Host tensor has different dtype")
    if host_tensor._layout is not device_tensor._layout:
        raise RuntimeError(f"TT_FATAL: {op}: Host tensor has different page config")
    if tuple(host_tensor._data.shape) != tuple(device_tensor._data.shape):
        raise RuntimeError(f"TT_FATAL: {op}: Host tensor has different shape {list(host_tensor._data.shape)}, "
                           f"device tensor is {list(device_tensor._data.shape)}")
    device = device_tensor._device
    q = _queue(device, cq_id)
    buffer = device_tensor._buffer
    for (reader_q, buffer_id), seq in _state(device)["reads"].items():
        if buffer_id == buffer.id and reader_q != q and _waited(device, q, reader_q) < seq:
            raise TraceError(f"{op} on queue {q} overwrites {device_tensor._describe()} while a replay on queue "
                             f"{reader_q} may still read it: wait_for_event({q}, an event recorded on queue "
                             f"{reader_q} after that replay) first")
    device_tensor._data = host_tensor._data.clone()
    _state(device)["writes"][buffer.id] = (q, _enqueue(device, q))
