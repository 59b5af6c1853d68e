"""Traces, command queues and events: begin/end_trace_capture, execute_trace, copy_host_to_device_tensor.

A real trace records the device commands of the ops called between begin_trace_capture and end_trace_capture
(they do not run then) and replays them with every address fixed.  The simulator runs the ops while capturing
(for their shapes), records each call, and on execute_trace re-runs the recorded calls with the tensors they
produced substituted, writing the results into the tensors the capture returned.  It checks the rules a trace
must keep, each a TraceError naming the call:

- inside a capture, no host transfer (to_torch, from_torch, from_device, to_device, copy_host_to_device_tensor),
  no event or synchronisation, and no deallocation of a buffer the capture did not allocate;
- at end_trace_capture, every buffer the capture allocated is either freed inside it or still held by a tensor
  the program kept (a buffer no tensor holds any more is leaked: it stays reserved for every replay);
- the values the capture produced are undefined until the first replay (the simulator makes them NaN);
- at execute_trace, every tensor the trace reads that it did not produce (inputs, weights) is still allocated
  at the address captured, and no buffer allocated since overlaps an address the trace writes (the replay
  would overwrite it); each allocation the replay makes must be the one captured (same type and size), and
  it is placed at the captured address;
- with two command queues: a copy into a buffer a replay on another queue reads must wait (wait_for_event) for
  an event recorded after that replay, and a replay must wait for an event recorded after the copies it reads.
"""
from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass, field

import torch

from ._device import Buffer, Device
from ._tensor import Tensor
from .ops_queues import TraceError, _enqueue, _queue, _state, _waited

# calls a trace cannot hold: they move data between host and device or synchronise with the host
_NOT_IN_CAPTURE = {
    "to_torch": "reads a tensor back to the host", "from_device": "reads a tensor back to the host",
    "from_torch": "is host work (a host tensor or an upload)", "to_device": "writes from the host",
    "as_tensor": "is host work (a host tensor or an upload)",
    "copy_host_to_device_tensor": "writes from the host", "record_event": "synchronises with the host",
    "wait_for_event": "synchronises queues", "event_synchronize": "synchronises with the host",
    "synchronize_device": "synchronises with the host", "begin_trace_capture": "nests a capture",
    "execute_trace": "replays a trace", "open_device": "opens a device", "close_device": "closes the device",
    "get_memory_view": "reads allocator state on the host",
}
_trace_ids = itertools.count(1)


class MeshTraceId:
    """The id begin_trace_capture returns."""

    def __init__(self, arg: int, /):
        self.value = int(arg)

    def __repr__(self) -> str:
        return f"MeshTraceId({self.value})"


@dataclass
class _Call:
    fn: object
    name: str
    args: tuple
    kwargs: dict
    results: list  # [(path, weakref to the tensor produced)]


@dataclass
class _Trace:
    """One captured trace: its calls, the buffers it allocated (in order) and the tensors it reads."""

    device: Device
    cq_id: int
    calls: list = field(default_factory=list)
    allocations: list = field(default_factory=list)  # Buffers allocated during capture, in order
    produced: dict = field(default_factory=dict)  # id(tensor) -> (call index, path)
    external: dict = field(default_factory=dict)  # id(tensor) -> (tensor, its buffer's address at capture)
    captured: bool = False
    restore: tuple = ()  # (the module's unwrapped calls, the device's own allocate) while capturing


# -- capture and replay ------------------------------------------------------------------------------------
def begin_trace_capture(mesh_device, *, cq_id=None) -> MeshTraceId:
    """Start recording the ttnn calls made until end_trace_capture."""
    import onnx2ttnn.sim as sim

    state = _state(mesh_device)
    trace = _Trace(mesh_device, _queue(mesh_device, cq_id))
    trace_id = MeshTraceId(next(_trace_ids))
    state["capture"] = trace
    state["traces"][trace_id.value] = trace
    saved, depth = {}, [0]
    original_allocate = mesh_device.allocate

    def allocate(*args, **kwargs):
        buffer = original_allocate(*args, **kwargs)
        trace.allocations.append(buffer)
        return buffer

    def wrap(name, fn):
        def recorded(*args, **kwargs):
            if depth[0]:
                return fn(*args, **kwargs)
            if name in _NOT_IN_CAPTURE:
                _stop_capture(mesh_device, trace)  # the capture is abandoned: the module is restored
                raise TraceError(f"ttnn.{name} inside a trace capture: it {_NOT_IN_CAPTURE[name]}, which a trace "
                                 "cannot record (only device ops between begin_trace_capture and end_trace_capture)")
            depth[0] += 1
            try:
                if name == "deallocate":
                    _check_dealloc(trace, args[0] if args else kwargs.get("tensor"))
                result = fn(*args, **kwargs)
            except BaseException:
                _stop_capture(mesh_device, trace)
                raise
            finally:
                depth[0] -= 1
            _record(trace, fn, name, args, kwargs, result)
            return result
        return recorded

    for module, prefix in [(sim, "")] + [(m, name + ".") for name, m in sim._OP_SUBMODULES.items()]:
        for name in dir(module):
            obj = getattr(module, name)
            if name.startswith("_") or isinstance(obj, type) or not callable(obj) or type(obj).__name__ == "module":
                continue
            if name in ("end_trace_capture", "is_trace_capture_active"):
                continue
            saved[module, name] = obj
            setattr(module, name, wrap(prefix + name, obj))
    mesh_device.allocate = allocate
    trace.restore = (saved, original_allocate)
    return trace_id


def _stop_capture(device, trace: _Trace) -> None:
    """Unwrap the module's calls and the device's allocator (at the end of a capture, or when it fails)."""
    saved, original_allocate = trace.restore
    for (module, name), obj in saved.items():
        setattr(module, name, obj)
    device.allocate = original_allocate
    _state(device)["capture"] = None


def end_trace_capture(mesh_device, trace_id, *, cq_id=None) -> None:
    """Stop recording; check that nothing the capture allocated leaked; the captured values become undefined."""
    state = _state(mesh_device)
    trace = state["traces"].get(trace_id.value)
    if trace is None or state["capture"] is not trace:
        raise TraceError(f"end_trace_capture: trace {trace_id!r} is not being captured")
    _stop_capture(mesh_device, trace)
    trace.captured = True
    held = {id(t._buffer) for call in trace.calls for _, ref in call.results
            if (t := ref()) is not None and not t._released}
    for buffer in trace.allocations:
        if buffer.allocated and id(buffer) not in held:
            raise TraceError(f"buffer #{buffer.id} ({buffer.description}) allocated inside the trace capture by "
                             f"{buffer.created_by} is neither freed in the capture nor held by a tensor the program "
                             "kept: it leaks, reserved for every replay")
    for call in trace.calls:
        for _, ref in call.results:
            t = ref()
            if t is not None and t._data is not None and t._data.is_floating_point():
                t._data = torch.full_like(t._data, float("nan"))  # not computed until execute_trace


def execute_trace(mesh_device, trace_id, *, cq_id=None, blocking: bool = True) -> None:
    """Replay a captured trace: its calls re-run on the current values, results written into the captured
    tensors, every buffer at its captured address."""
    state = _state(mesh_device)
    trace = state["traces"].get(getattr(trace_id, "value", None))
    if trace is None or not trace.captured:
        raise TraceError(f"execute_trace: no captured trace {trace_id!r}")
    if state["capture"] is not None:
        raise TraceError("execute_trace inside a trace capture")
    q = _queue(mesh_device, cq_id)
    _check_inputs(trace, q)
    _check_addresses(trace)
    seq = _enqueue(mesh_device, q)
    _replay(trace)
    for tensor, _ in trace.external.values():
        if tensor._buffer is not None:
            state["reads"][(q, tensor._buffer.id)] = seq


def release_trace(mesh_device, trace_id) -> None:
    """Forget a captured trace."""
    _state(mesh_device)["traces"].pop(getattr(trace_id, "value", None), None)


def _check_dealloc(trace: _Trace, tensor) -> None:
    """A capture may free only buffers it allocated (an input freed at capture is gone for every replay)."""
    if isinstance(tensor, Tensor) and tensor._buffer is not None and tensor._buffer.allocated \
            and all(tensor._buffer is not b for b in trace.allocations):
        raise TraceError(f"ttnn.deallocate inside a trace capture frees {tensor._describe()}, which the capture "
                         "did not allocate: a persistent input or weight must outlive every replay")


def _walk(value, path=()):
    """(path, tensor) of every ttnn tensor in a nested result or argument."""
    if isinstance(value, Tensor):
        yield path, value
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _walk(item, path + (i,))


def _substitute(value, kind, lookup):
    """`value` with each item of type `kind` (in nested lists and tuples) replaced by lookup(item)."""
    if isinstance(value, kind):
        return lookup(value)
    if isinstance(value, (list, tuple)):
        items = [_substitute(v, kind, lookup) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def _record(trace: _Trace, fn, name: str, args, kwargs, result) -> None:
    """Remember one call: captured tensors become (call, path) references, others are external inputs."""
    def reference(t):
        if id(t) in trace.produced:
            return _Ref(*trace.produced[id(t)])
        if t._device is not None and id(t) not in trace.external:
            trace.external[id(t)] = (t, t._buffer.address if t._buffer.allocated else None)
        return t
    call = _Call(fn, name, _substitute(args, Tensor, reference),
                 {k: _substitute(v, Tensor, reference) for k, v in kwargs.items()}, [])
    index = len(trace.calls)
    for path, t in _walk(result):
        if id(t) in trace.external or id(t) in trace.produced:
            continue  # an op that handed back its input
        trace.produced[id(t)] = (index, path)
        call.results.append((path, weakref.ref(t)))
    trace.calls.append(call)


@dataclass(frozen=True)
class _Ref:
    call: int
    path: tuple


def _check_inputs(trace: _Trace, q: int) -> None:
    """The tensors the trace reads and did not produce are still there, where they were, and written."""
    device = trace.device
    for tensor, address in trace.external.values():
        buffer = tensor._buffer
        if not buffer.allocated or tensor._released:
            raise TraceError(f"execute_trace: the trace reads {tensor._describe()}, whose buffer was freed "
                             f"({buffer.freed_by or 'ttnn.deallocate'}): a trace's inputs must stay allocated")
        if buffer.address != address:
            raise TraceError(f"execute_trace: {tensor._describe()} moved from address {address} to "
                             f"{buffer.address} since the capture")
        write = _state(device)["writes"].get(buffer.id)
        if write is not None and write[0] != q and _waited(device, q, write[0]) < write[1]:
            raise TraceError(f"execute_trace on queue {q} reads {tensor._describe()}, copied on queue {write[0]}: "
                             f"wait_for_event({q}, an event recorded on queue {write[0]} after the copy) first")


def _check_addresses(trace: _Trace) -> None:
    """No buffer allocated outside the trace overlaps an address range the trace writes."""
    mine = {id(b) for b in trace.allocations}
    device = trace.device
    for buffer in trace.allocations:
        alloc = device._allocator(buffer.buffer_type)
        start, end = buffer.offset, buffer.offset + alloc._rounded(buffer.size_per_bank)
        for other in alloc.live.values():
            if id(other) in mine:
                continue
            o_end = other.offset + alloc._rounded(other.size_per_bank)
            if other.offset < end and start < o_end:
                raise TraceError(
                    f"execute_trace: the trace writes {buffer.buffer_type.name} [{buffer.address}, "
                    f"{buffer.address + end - start}) ({buffer.description}, allocated at capture by "
                    f"{buffer.created_by}), where buffer #{other.id} ({other.description}, from {other.created_by}) "
                    "now lives: the replay would overwrite it")


class _ReplayBuffer(Buffer):
    """A buffer of a replay: at its captured address, outside the allocator (the trace owns those addresses)."""

    def free(self, reason: str) -> None:
        if self.allocated:
            self.allocated = False
            self.freed_by = reason


def _replay(trace: _Trace) -> None:
    """Re-run the recorded calls; copy each result into the captured tensor that is still alive."""
    device = trace.device
    original_allocate = device.allocate
    made = iter(trace.allocations)

    def allocate(buffer_type, *, size, size_per_bank, page_size, num_pages, num_banks, bank_data, description,
                 created_by):
        captured = next(made, None)
        if captured is None or captured.buffer_type is not buffer_type or captured.size_per_bank != size_per_bank:
            raise TraceError(f"execute_trace: the replay's {created_by} allocates {size_per_bank} B per bank "
                             f"{buffer_type.name}, not what the capture allocated there: the replay diverged")
        return _ReplayBuffer(device, buffer_type, captured.address, captured.offset, size, size_per_bank, page_size,
                             num_pages, bank_data, description, created_by)

    values: dict = {}  # (call index, path) -> the replay's tensor
    resolve = lambda ref: values[(ref.call, ref.path)]  # noqa: E731
    device.allocate = allocate
    try:
        for index, call in enumerate(trace.calls):
            args = _substitute(call.args, _Ref, resolve)
            kwargs = {k: _substitute(v, _Ref, resolve) for k, v in call.kwargs.items()}
            result = call.fn(*args, **kwargs)
            for path, t in _walk(result):
                values[(index, path)] = t
    finally:
        device.allocate = original_allocate
    for index, call in enumerate(trace.calls):
        for path, ref in call.results:
            target = ref()
            if target is not None and (index, path) in values:
                target._data = values[(index, path)]._data
