"""The simulator's allocator against the real one: the same tensors, measured by the same code
(tools/ttnn_mock/alloc_probe.py) on both, must reserve the same bytes in every L1 and DRAM bank.

Tolerance: none. The simulator reproduces the real per-bank reservation exactly (the issue allowed one
page per bank; exact agreement is what we measured, so that is what the test holds us to).
"""
from __future__ import annotations

import dataclasses
import importlib.util
import os

import pytest
import torch

from onnx2ttnn import sim
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.sim import runtime
from tests.real_ttnn.mock import TOOLS


def _probe_module():
    spec = importlib.util.spec_from_file_location("alloc_probe", os.path.join(TOOLS, "alloc_probe.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _spec(name, shape, dtype, layout, buffer, memory_layout="INTERLEAVED", grid=None, shard=None):
    spec = {"name": name, "shape": list(shape), "dtype": dtype, "layout": layout, "buffer": buffer,
            "memory_layout": memory_layout}
    if grid:
        spec.update(grid=list(grid), shard=list(shard))
    return spec


SPECS = [
    _spec("tile_bf16_dram", (1, 1, 32, 32), "bfloat16", "TILE", "DRAM"),
    _spec("tile_bf16_l1", (1, 128, 768), "bfloat16", "TILE", "L1"),
    _spec("rm_bf16_dram_odd", (3, 5, 7), "bfloat16", "ROW_MAJOR", "DRAM"),
    _spec("tile_fp32_l1_odd", (13, 97), "float32", "TILE", "L1"),
    _spec("bfp8_dram_big", (1, 1, 1024, 1024), "bfloat8_b", "TILE", "DRAM"),
    _spec("bfp8_l1_conv_weight", (64, 64, 3, 3), "bfloat8_b", "TILE", "L1"),
    _spec("bfp4_dram_big", (1, 1, 1024, 1024), "bfloat4_b", "TILE", "DRAM"),
    _spec("bfp4_l1_odd", (1, 100, 70), "bfloat4_b", "TILE", "L1"),
    _spec("rm_uint32_l1", (100, 3), "uint32", "ROW_MAJOR", "L1"),
    _spec("rm_bf16_dram_long", (1, 1, 4096, 32), "bfloat16", "ROW_MAJOR", "DRAM"),
    _spec("height_sharded_bf16", (1, 1, 1024, 64), "bfloat16", "TILE", "L1", "HEIGHT_SHARDED", (8, 4), (32, 64)),
    _spec("width_sharded_bf16", (1, 1, 64, 2048), "bfloat16", "TILE", "L1", "WIDTH_SHARDED", (8, 8), (64, 32)),
    _spec("block_sharded_bf16", (1, 1, 256, 512), "bfloat16", "TILE", "L1", "BLOCK_SHARDED", (4, 8), (32, 128)),
    _spec("height_sharded_bfp8", (1, 1, 512, 64), "bfloat8_b", "TILE", "L1", "HEIGHT_SHARDED", (8, 2), (32, 64)),
    _spec("height_sharded_rm_partial", (1, 1, 200, 48), "bfloat16", "ROW_MAJOR", "L1", "HEIGHT_SHARDED", (7, 1),
          (32, 48)),
    _spec("block_sharded_fp32", (2, 1, 64, 96), "float32", "TILE", "L1", "BLOCK_SHARDED", (3, 4), (32, 32)),
    _spec("width_sharded_bfp8", (1, 1, 64, 4096), "bfloat8_b", "TILE", "L1", "WIDTH_SHARDED", (8, 4), (64, 128)),
]


# the mock p150 descriptor has no harvested Tensix column: 13x10 cores (DeviceSpec p150 plans for 11x10)
MOCK_GRIDS = {"n150": (8, 8), "p150": (13, 10)}


def _simulated(device_name: str) -> list:
    probe = _probe_module()
    grid_x, grid_y = MOCK_GRIDS[device_name]
    runtime.configure(dataclasses.replace(get_device(device_name), grid_x=grid_x, grid_y=grid_y))
    try:
        device = sim.open_device(device_id=0)
        results = probe.measure(sim, torch, device, SPECS)
        sim.close_device(device)
    finally:
        runtime.configure(None)
    return results


def test_specs_cover_what_the_issue_asks():
    kinds = {(s["memory_layout"] != "INTERLEAVED", s["layout"], s["dtype"]) for s in SPECS}
    assert len(SPECS) >= 10
    assert {True, False} <= {k[0] for k in kinds}
    assert {"TILE", "ROW_MAJOR"} <= {k[1] for k in kinds}
    assert {"bfloat16", "bfloat8_b"} <= {k[2] for k in kinds}
    assert {"HEIGHT_SHARDED", "WIDTH_SHARDED", "BLOCK_SHARDED"} <= {s["memory_layout"] for s in SPECS}


@pytest.mark.parametrize("device", ["n150", "p150"])
def test_simulator_reserves_what_the_real_allocator_reserves(ttnn_mock, tmp_path, device):
    real = ttnn_mock.measure_allocations(SPECS, str(tmp_path), device)
    simulated = _simulated(device)
    errors = [r for r in real if "error" in r]
    assert not errors, f"real ttnn refused a spec: {errors}"
    mismatches = []
    for spec, want, got in zip(SPECS, real, simulated):
        if "error" in got or got["per_bank"] != want["per_bank"] or got["address"] != want["address"]:
            mismatches.append(f"{spec['name']}: real {want}, simulator {got}")
    assert not mismatches, "\n".join(mismatches)
    assert all(r["per_bank"]["L1"] + r["per_bank"]["DRAM"] > 0 for r in real)
