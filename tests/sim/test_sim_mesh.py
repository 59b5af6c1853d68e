"""The simulator's mesh (sim/_mesh.py): per-chip allocators and leaks, mappers and composers, ops lifted per
chip, and the real library's refusals (ttnn-facts §26)."""
from __future__ import annotations

import pytest
import torch

from onnx2ttnn import sim as ttnn
from onnx2ttnn.sim import runtime


@pytest.fixture
def mesh():
    runtime.configure("t3k")
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), l1_small_size=16384)
    yield mesh
    if mesh.is_open:
        ttnn.close_mesh_device(mesh)
    runtime.configure(None)


def test_split_runs_per_chip_and_joins(mesh):
    x = torch.randn(16, 64, 128)
    w = torch.randn(128, 32)
    xt = ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
                         mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, dim=0))
    wt = ttnn.from_torch(w, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
                         mesh_mapper=ttnn.replicate_tensor_to_mesh_mapper(mesh))
    assert tuple(xt.shape) == (2, 64, 128) and len(ttnn.get_device_tensors(xt)) == 8
    y = ttnn.softmax(ttnn.linear(xt, wt), dim=-1)
    out = ttnn.to_torch(y, mesh_composer=ttnn.concat_mesh_to_tensor_composer(mesh, dim=0))
    assert out.shape == (16, 64, 32)
    torch.testing.assert_close(out, torch.softmax(x @ w, dim=-1), rtol=1e-4, atol=1e-4)
    with pytest.raises(RuntimeError, match="needs a mesh_composer"):
        ttnn.to_torch(y)


def test_each_chip_allocates_and_leaks_on_its_own(mesh):
    a = ttnn.from_torch(torch.zeros(8, 32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, dim=0))
    views = {ttnn.get_memory_view(chip, ttnn.BufferType.DRAM).total_bytes_allocated_per_bank
             for chip in runtime.chips(mesh)}
    assert views == {2048}  # each chip: its [1, 32, 32] piece, one 2048 B tile page reserved in every bank
    ttnn.close_mesh_device(mesh)
    assert [len(leaks) for leaks in mesh.leaks_per_chip()] == [1] * 8
    assert runtime.last_closed_device() is mesh and a is not None


def test_uneven_split_and_oversized_mesh_are_refused(mesh):
    with pytest.raises(RuntimeError, match="does not split into 8 equal pieces"):
        ttnn.from_torch(torch.zeros(6, 32), dtype=ttnn.bfloat16, device=mesh,
                        mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, dim=0))
    with pytest.raises(RuntimeError, match="cannot hold"):
        ttnn.open_mesh_device(ttnn.MeshShape(1, 16))
