"""Simulator controls that are not part of the ttnn API: device choice, memory statistics, install().

    from onnx2ttnn.sim import runtime
    runtime.configure(device="n150")          # or env ONNX2TTNN_SIM_DEVICE=p150
    with runtime.install():                   # `import ttnn` now gives the simulator
        run_generated_program()
    runtime.memory_stats(device)["L1"].peak_per_bank
    with runtime.memory_trace(device) as trace:   # [(ttnn call, L1 bytes/bank, DRAM bytes/bank), ...]
        program.forward(device, params, **inputs)
"""
from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass

from onnx2ttnn.ir.device import DEFAULT_DEVICE, DeviceSpec, get_device

ENV_DEVICE = "ONNX2TTNN_SIM_DEVICE"
_state = {"device": None, "closed": []}


def configure(device: str | DeviceSpec | None = "n150") -> DeviceSpec:
    """Pick the DeviceSpec the next ttnn.open_device simulates (a name from onnx2ttnn.ir.device or a spec)."""
    spec = get_device(device) if isinstance(device, str) else device
    _state["device"] = spec
    return spec


def device_spec() -> DeviceSpec:
    """The DeviceSpec open_device will use: configure() > $ONNX2TTNN_SIM_DEVICE > the default (n150)."""
    if _state["device"] is not None:
        return _state["device"]
    return get_device(os.environ.get(ENV_DEVICE) or DEFAULT_DEVICE)


@dataclass(frozen=True)
class BankStats:
    """Usage of one buffer type of a device.

    `current_per_bank` / `peak_per_bank` are the lockstep reservation (what decides out-of-memory: every
    buffer reserves its size_per_bank at the same address in every bank).  `data_per_bank` /
    `data_peak_per_bank` list, per bank, the bytes of pages really placed in that bank.
    """

    num_banks: int
    bank_size: int
    current_per_bank: int
    peak_per_bank: int
    data_per_bank: tuple
    data_peak_per_bank: tuple


def chips(device) -> list:
    """The simulated chips of a device: [device] for one chip, one per chip for a mesh (sim/_mesh.py)."""
    return list(getattr(device, "chips", [device]))


def memory_stats(device) -> dict[str, BankStats]:
    """{'L1': BankStats, 'DRAM': BankStats} for a (simulated) device; for a mesh, its first chip (in a
    data-parallel program every chip allocates the same: memory_stats(chip) for each of chips(mesh))."""
    device = chips(device)[0]
    out = {}
    for name, alloc in (("L1", device.l1), ("DRAM", device.dram)):
        out[name] = BankStats(alloc.num_banks, alloc.bank_size, alloc.allocated, alloc.peak, tuple(alloc.data),
                              tuple(alloc.data_peak))
    return out


def reset_peaks(device) -> None:
    """Restart peak tracking from the current usage (of every chip of a mesh)."""
    for alloc in [a for chip in chips(device) for a in (chip.l1, chip.dram)]:
        alloc.peak = alloc.allocated
        alloc.data_peak = list(alloc.data)


def live_buffers(device) -> list:
    """BufferInfo of every buffer still allocated (shape/dtype/layout in `description`), on every chip."""
    return [b for chip in chips(device) for b in chip.live_buffers()]


def leaks(device) -> list:
    """Buffers that were still allocated when the device was closed (empty while it is open)."""
    return list(device.leaks)


def leak_report(device) -> str:
    """One line per leaked buffer, or 'no leaks'."""
    found = leaks(device)
    if not found:
        return "no leaks"
    return "\n".join(f"leaked {b.buffer_type} buffer #{b.id} {b.description} ({b.size} B, "
                     f"{b.size_per_bank} B per bank) from {b.created_by}" for b in found)


def _record_closed(device) -> None:
    _state["closed"].append(device)
    del _state["closed"][:-16]


def last_closed_device():
    """The most recently closed device (to read leaks after a program closed its own device)."""
    return _state["closed"][-1] if _state["closed"] else None


@contextlib.contextmanager
def install():
    """Bind sys.modules['ttnn'] to the simulator for the duration of the block, then restore it."""
    import onnx2ttnn.sim as sim

    missing = object()
    previous = sys.modules.get("ttnn", missing)
    sys.modules["ttnn"] = sim
    try:
        yield sim
    finally:
        if previous is missing:
            sys.modules.pop("ttnn", None)
        else:
            sys.modules["ttnn"] = previous


@contextlib.contextmanager
def memory_trace(device):
    """Record the memory in use after every top-level ttnn call made in the block.

    Yields a list that fills with (call name, L1 bytes per bank, DRAM bytes per bank); calls the simulator
    makes inside another call are not recorded.
    """
    import onnx2ttnn.sim as sim

    trace: list = []
    first = chips(device)[0]  # a mesh's chips allocate alike in a data-parallel program
    depth = [0]
    saved = {}

    def wrap(name, fn):
        def traced(*args, **kwargs):
            depth[0] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0 and device.is_open:
                    trace.append((name, first.l1.allocated, first.dram.allocated))
        return traced

    for name in dir(sim):
        obj = getattr(sim, name)
        if name.startswith("_") or isinstance(obj, type) or not callable(obj) or type(obj).__name__ == "module":
            continue
        saved[name] = obj
        setattr(sim, name, wrap(name, obj))
    try:
        yield trace
    finally:
        for name, obj in saved.items():
            setattr(sim, name, obj)

