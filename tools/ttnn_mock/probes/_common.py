"""Shared helpers for the probes: run with the mock venv python and env.sh sourced, e.g.
    bash tools/ttnn_mock/probes/run_probe.sh probe_views.py
Every probe prints one line per step: OK/ERR, the step name, and the tensor facts or the error's first lines."""
import os
import sys
import time

import torch
import ttnn


def converter_ir_on_path():
    """Make `onnx2ttnn.ir.layout` / `.placements` / `.ttnn_ops` (the op table) importable here. The mock venv has
    ttnn but not the converter's dependencies, so the packages are stubbed instead of running their __init__."""
    import types

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "onnx2ttnn")
    for name, path in (("onnx2ttnn", root), ("onnx2ttnn.ir", os.path.join(root, "ir"))):
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [path]
            sys.modules[name] = pkg


def shard_memory_config(layout):
    """The ttnn.MemoryConfig of a sharded L1 TTNNLayout (the memory config the compiler emits for it)."""
    gx, gy = layout.grid
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(gx - 1, gy - 1))})
    kind = getattr(ttnn.TensorMemoryLayout, layout.memory_layout.upper())
    return ttnn.MemoryConfig(kind, ttnn.BufferType.L1,
                             ttnn.ShardSpec(grid, list(layout.shard), ttnn.ShardOrientation.ROW_MAJOR))


def planner_height_sharded(shape, grid_x=8, grid_y=8, max_cores=None):
    """(TTNNLayout, ttnn.MemoryConfig) of the auto planner's height-sharded layout for `shape`
    (ir/placements.py height_shard_layout); needs converter_ir_on_path() first."""
    from onnx2ttnn.ir.layout import TTNNLayout
    from onnx2ttnn.ir.placements import height_shard_layout

    layout = height_shard_layout(shape, TTNNLayout(), grid_x, grid_y, max_cores=max_cores)
    return layout, shard_memory_config(layout)


DR, L1 = ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG
TILE, RM = ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT


def errtext(e, n=4):
    s = str(e)
    for m in ("backtrace:", "\nLocation:", "\n 1. "):
        k = s.find(m)
        if k >= 0:
            s = s[:k]
    lines = [ln.strip() for ln in s.strip().splitlines() if ln.strip() and ln.strip() != "info:"]
    return " | ".join(lines[:n])[:700]


def desc(t):
    if isinstance(t, (list, tuple)):
        return "(" + ", ".join(desc(x) for x in t) + ")"
    if not isinstance(t, ttnn.Tensor):
        return repr(t)[:300]
    s = f"shape={tuple(t.shape)} padded={tuple(t.padded_shape)} {str(t.dtype).split('.')[-1]} {str(t.layout).split('.')[-1]}"
    if t.storage_type() == ttnn.StorageType.DEVICE:
        mc = t.memory_config()
        s += f" {str(mc.buffer_type).split('.')[-1]} {str(mc.memory_layout).split('.')[-1]}"
        if mc.shard_spec is not None:
            s += f" shard={tuple(mc.shard_spec.shape)}"
        if t.is_allocated():
            s += f" addr={t.buffer_address()}"
        else:
            s += " (deallocated)"
    else:
        s += " HOST"
    return s


def step(name, fn):
    t0 = time.time()
    try:
        out = fn()
        print(f"OK   {name}: {desc(out)}", flush=True)
        return out
    except Exception as e:  # noqa: BLE001
        print(f"ERR  {name}: {type(e).__name__}: {errtext(e)}", flush=True)
        return None
    finally:
        if time.time() - t0 > 5:
            print(f"     ({time.time() - t0:.1f}s)", flush=True)


def open_dev():
    return ttnn.open_device(device_id=0, l1_small_size=16384)


def dev(d, shape, dtype=ttnn.bfloat16, layout=TILE, mc=DR, torch_dtype=torch.float32):
    if torch_dtype.is_floating_point:
        t = torch.randn(shape, dtype=torch_dtype)
    else:
        t = torch.randint(0, 5, shape, dtype=torch_dtype)
    return ttnn.from_torch(t, dtype=dtype, layout=layout, device=d, memory_config=mc)


def per_bank(d, bt):
    return int(ttnn.get_memory_view(d, bt).total_bytes_allocated_per_bank)


def done(d=None):
    if d is not None:
        ttnn.close_device(d)
    sys.stdout.flush()
    os._exit(0)
