#!/usr/bin/env python
"""Measure what the allocator reserves for a list of tensors, written once against the ttnn API so that the
same code runs on the real ttnn (mock device) and on onnx2ttnn's simulator.

A spec is a dict:
    {"name": str, "shape": [..], "dtype": "bfloat16" | "bfloat8_b" | "bfloat4_b" | "float32" | "uint32" | "int32",
     "layout": "TILE" | "ROW_MAJOR", "buffer": "DRAM" | "L1",
     "memory_layout": "INTERLEAVED" | "HEIGHT_SHARDED" | "WIDTH_SHARDED" | "BLOCK_SHARDED",
     "grid": [x, y]            (sharded only: cores (0,0)..(x-1,y-1)),
     "shard": [height, width]  (sharded only: elements)}

For each spec, `measure` creates the tensor with ttnn.from_torch on the device, records the bytes allocated
per bank (L1 and DRAM, from ttnn.get_memory_view) before and after, and the tensor's buffer address, then
deallocates it. Tensors are measured one at a time on an otherwise empty device, so the deltas are the
tensors' own reservations.

Command line (real ttnn; run with the mock venv's python and env.sh sourced, or through run.sh's env):
    alloc_probe.py SPECS.json OUT.json [--device n150|p150]
Ends with os._exit (Python 3.11 + the renamed cp310 extension segfault at interpreter exit).
"""
from __future__ import annotations

import json
import os
import sys

TORCH_DTYPES = {"bfloat16": "float32", "bfloat8_b": "float32", "bfloat4_b": "float32", "float32": "float32",
                "uint32": "int32", "int32": "int32"}


def memory_config(ttnn, spec: dict):
    """The ttnn.MemoryConfig a spec describes."""
    buffer = getattr(ttnn.BufferType, spec["buffer"])
    layout = getattr(ttnn.TensorMemoryLayout, spec.get("memory_layout", "INTERLEAVED"))
    if spec.get("memory_layout", "INTERLEAVED") == "INTERLEAVED":
        return ttnn.MemoryConfig(layout, buffer)
    gx, gy = spec["grid"]
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(gx - 1, gy - 1))})
    shard = ttnn.ShardSpec(grid, list(spec["shard"]), ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(layout, buffer, shard)


def allocated(ttnn, device) -> dict:
    """Bytes allocated per bank, {'L1': n, 'DRAM': n}."""
    return {bt: int(ttnn.get_memory_view(device, getattr(ttnn.BufferType, bt)).total_bytes_allocated_per_bank)
            for bt in ("L1", "DRAM")}


def measure(ttnn, torch, device, specs: list) -> list:
    """One result per spec: {"name", "per_bank": {"L1", "DRAM"}, "address"} or {"name", "error"}."""
    results = []
    for spec in specs:
        before = allocated(ttnn, device)
        data = torch.arange(int(torch.tensor(spec["shape"]).prod()), dtype=getattr(torch, TORCH_DTYPES[spec["dtype"]]))
        data = data.reshape(spec["shape"]) % 7
        try:
            tensor = ttnn.from_torch(data, dtype=getattr(ttnn, spec["dtype"]),
                                     layout=getattr(ttnn, spec["layout"] + "_LAYOUT"), device=device,
                                     memory_config=memory_config(ttnn, spec))
        except Exception as exc:  # noqa: BLE001 - the message is the result
            results.append({"name": spec["name"], "error": str(exc).split("backtrace:")[0].strip()[:600]})
            continue
        after = allocated(ttnn, device)
        results.append({"name": spec["name"], "address": int(tensor.buffer_address()),
                        "per_bank": {bt: after[bt] - before[bt] for bt in after}})
        ttnn.deallocate(tensor)
        if allocated(ttnn, device) != before:
            results[-1]["error"] = "deallocate did not return the memory"
    return results


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("specs")
    ap.add_argument("out")
    ap.add_argument("--device", choices=["n150", "p150"], default="n150")
    args = ap.parse_args(argv)
    home = os.environ.get("ONNX2TTNN_TTNN_MOCK_HOME", os.path.expanduser("~/.cache/onnx2ttnn/ttnn-mock"))
    os.environ["TT_METAL_MOCK_CLUSTER_DESC_PATH"] = os.path.join(home, "mock", f"{args.device}.yaml")
    with open(args.specs) as f:
        specs = json.load(f)
    out = os.path.abspath(args.out)
    workdir = os.environ.get("ONNX2TTNN_TTNN_MOCK_WORKDIR")
    if workdir:
        os.chdir(workdir)
    import torch
    import ttnn

    device = ttnn.open_device(device_id=0, l1_small_size=16384)
    results = measure(ttnn, torch, device, specs)
    ttnn.close_device(device)
    with open(out + ".tmp", "w") as f:
        json.dump(results, f, indent=1)
    os.replace(out + ".tmp", out)
    return 0


if __name__ == "__main__":
    status = 1
    try:
        status = main()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
