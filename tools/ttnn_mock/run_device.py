"""What a mock run reads off the device: per-bank memory views, tensor descriptions, the outputs of a
forward call, and a tracer that samples memory after every ttnn call the program makes."""
from __future__ import annotations

import sys

from run_report import PROGRESS, error_text


def memory_view(ttnn, device, buffer_type):
    v = ttnn.get_memory_view(device, buffer_type)
    blocks = []
    for b in v.block_table:
        if str(b.get("allocated")) == "yes":
            blocks.append({"address": int(b["address"]), "size": int(b["size"])})
    blocks.sort(key=lambda b: b["address"])
    return {
        "num_banks": int(v.num_banks),
        "total_bytes_per_bank": int(v.total_bytes_per_bank),
        "total_bytes_allocated_per_bank": int(v.total_bytes_allocated_per_bank),
        "total_bytes_free_per_bank": int(v.total_bytes_free_per_bank),
        "largest_contiguous_bytes_free_per_bank": int(v.largest_contiguous_bytes_free_per_bank),
        "allocated_blocks": blocks,  # per bank; addresses relative to the bank's allocator base
    }


def memory(ttnn, device):
    return {"L1": memory_view(ttnn, device, ttnn.BufferType.L1),
            "DRAM": memory_view(ttnn, device, ttnn.BufferType.DRAM),
            "L1_SMALL": memory_view(ttnn, device, ttnn.BufferType.L1_SMALL)}


def describe(ttnn, t):
    """Shape/dtype/layout/placement of a ttnn tensor (or a short repr of anything else)."""
    if not isinstance(t, ttnn.Tensor):
        return {"python_type": type(t).__name__, "repr": repr(t)[:200]}
    d = {"shape": list(t.shape), "padded_shape": list(t.padded_shape), "dtype": str(t.dtype),
         "layout": str(t.layout), "storage": str(t.storage_type())}
    try:
        if t.storage_type() == ttnn.StorageType.DEVICE:
            mc = t.memory_config()
            d["buffer_type"] = str(mc.buffer_type)
            d["memory_layout"] = str(mc.memory_layout)
            d["shard_shape"] = list(mc.shard_spec.shape) if mc.shard_spec is not None else None
            d["allocated"] = bool(t.is_allocated())
            if t.is_allocated():
                d["buffer_address"] = int(t.buffer_address())
    except Exception as e:  # noqa: BLE001 - description must never fail the run
        d["describe_error"] = error_text(e, 2, 300)
    return d


def release_outputs(ttnn, out) -> None:
    """Free the device outputs of a forward call before calling forward again."""
    for _, value in flatten_outputs(out):
        if isinstance(value, ttnn.Tensor) and value.storage_type() == ttnn.StorageType.DEVICE and value.is_allocated():
            ttnn.deallocate(value)


def flatten_outputs(out):
    if isinstance(out, dict):
        return [(str(k), v) for k, v in out.items()]
    if isinstance(out, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(out)]
    return [("0", out)]



class OpTracer:
    """Wraps the callables of the ttnn namespace to sample memory after every call the program makes."""

    SKIP = {"get_memory_view", "open_device", "close_device", "get_memory_config", "dump_device_memory_state"}

    def __init__(self, ttnn, device, keep_list):
        self.ttnn, self.device, self.keep = ttnn, device, keep_list
        self.calls = []
        self.count = 0
        self.peak = {"L1": 0, "DRAM": 0}
        self.peak_at = {"L1": None, "DRAM": None}
        self.current_op = None
        self.failed_op = None
        self.saved = {}

    def _sample(self, name):
        t = self.ttnn
        l1 = int(t.get_memory_view(self.device, t.BufferType.L1).total_bytes_allocated_per_bank)
        dr = int(t.get_memory_view(self.device, t.BufferType.DRAM).total_bytes_allocated_per_bank)
        self.count += 1
        for k, v in (("L1", l1), ("DRAM", dr)):
            if v > self.peak[k]:
                self.peak[k], self.peak_at[k] = v, f"#{self.count} {name}"
        if self.keep:
            self.calls.append({"op": name, "l1_allocated_per_bank": l1, "dram_allocated_per_bank": dr})

    def install(self):
        t = self.ttnn
        for name in dir(t):
            if name.startswith("_") or name in self.SKIP:
                continue
            obj = getattr(t, name)
            if isinstance(obj, type) or type(obj).__name__ == "module" or not callable(obj):
                continue
            self.saved[name] = obj
            setattr(t, name, self._wrap(name, obj))

    def _wrap(self, name, fn):
        tracer = self

        def wrapper(*a, **k):
            if tracer.current_op is not None:  # nested call inside a ttnn python op: not a program call
                return fn(*a, **k)
            tracer.current_op = name
            PROGRESS.note(None, name, sys._getframe(1))
            try:
                out = fn(*a, **k)
            except BaseException:
                tracer.failed_op = name
                raise
            finally:
                tracer.current_op = None
            tracer._sample(name)
            return out

        wrapper.__wrapped__ = fn
        wrapper.__name__ = name
        return wrapper

    def uninstall(self):
        for name, obj in self.saved.items():
            setattr(self.ttnn, name, obj)
        self.saved = {}
