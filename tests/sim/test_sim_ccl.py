"""The simulator's CCL ops and 2-D mappers (sim/_ccl.py): the fabric config they need, all_reduce's sum,
reduce_scatter's and all_gather's pieces along a cluster axis, per-chip allocation of their results, and the
composer of a replicated result (docs/ttnn-facts.md §27)."""
from __future__ import annotations

import pytest
import torch

from onnx2ttnn import sim as ttnn
from onnx2ttnn.sim import runtime


@pytest.fixture
def mesh():
    """A 2x4 T3000 mesh opened with the 1-D fabric (as a tensor-parallel program opens it)."""
    runtime.configure("t3k")
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), l1_small_size=16384)
    yield mesh
    if mesh.is_open:
        ttnn.close_mesh_device(mesh)
    ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)
    runtime.configure(None)


def _upload(mesh, values, rows_dim, cols_dim):
    places = [ttnn.PlacementReplicate() if d is None else ttnn.PlacementShard(d) for d in (rows_dim, cols_dim)]
    return ttnn.from_torch(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
                           mesh_mapper=ttnn.create_mesh_mapper(mesh, ttnn.MeshMapperConfig(places)))


def test_row_parallel_linear_then_all_reduce_is_the_whole_product(mesh):
    x, w = torch.randn(2, 32, 128), torch.randn(128, 64)
    xt = _upload(mesh, x, 0, 2)  # batch over the rows, columns over the 4 chips of each row
    wt = _upload(mesh, w, None, 0)  # rows over the chips of each row
    assert tuple(xt.shape) == (1, 32, 32) and tuple(wt.shape) == (32, 64)
    partial = ttnn.linear(xt, wt)
    whole = ttnn.all_reduce(partial, cluster_axis=1)
    composer = ttnn.create_mesh_composer(mesh, ttnn.MeshComposerConfig([0, 1], ttnn.MeshShape(2, 1)))
    torch.testing.assert_close(ttnn.to_torch(whole, mesh_composer=composer), x @ w, rtol=1e-4, atol=1e-3)
    pieces = [ttnn.to_torch(p) for p in ttnn.get_device_tensors(whole)]
    assert all(torch.equal(pieces[0], p) for p in pieces[:4]) and not torch.equal(pieces[0], pieces[4])


def test_reduce_scatter_and_all_gather_along_an_axis(mesh):
    x = torch.randn(2, 32, 128)
    xt = _upload(mesh, x, None, None)  # every chip: the whole tensor
    scattered = ttnn.reduce_scatter(xt, dim=-1, cluster_axis=1)
    assert tuple(scattered.shape) == (2, 32, 32)
    torch.testing.assert_close(ttnn.to_torch(ttnn.get_device_tensors(scattered)[1]), 4 * x[..., 32:64])
    gathered = ttnn.all_gather(scattered, dim=-1, cluster_axis=1)
    torch.testing.assert_close(ttnn.to_torch(ttnn.get_device_tensors(gathered)[5]), 4 * x)
    column = ttnn.all_reduce(xt, cluster_axis=0)  # the two chips of each column
    torch.testing.assert_close(ttnn.to_torch(ttnn.get_device_tensors(column)[3]), 2 * x)


def test_ccl_results_are_allocated_on_each_chip_and_freed(mesh):
    xt = _upload(mesh, torch.zeros(1, 32, 32), None, None)
    before = [ttnn.get_memory_view(c, ttnn.BufferType.DRAM).total_bytes_allocated_per_bank for c in runtime.chips(mesh)]
    out = ttnn.all_reduce(xt, cluster_axis=1, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    after = [ttnn.get_memory_view(c, ttnn.BufferType.DRAM).total_bytes_allocated_per_bank for c in runtime.chips(mesh)]
    assert [a - b for a, b in zip(after, before)] == [4096] * 8  # one float32 tile on every chip
    ttnn.deallocate(out)
    ttnn.deallocate(xt)
    ttnn.close_mesh_device(mesh)
    assert mesh.leaks_per_chip() == [[]] * 8


def test_ccl_needs_the_fabric_and_a_mesh():
    runtime.configure("n300")
    ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), l1_small_size=16384)
    try:
        xt = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                             mesh_mapper=ttnn.replicate_tensor_to_mesh_mapper(mesh))
        with pytest.raises(RuntimeError, match="un-initialized fabric context"):
            ttnn.all_reduce(xt, cluster_axis=1)
        ttnn.deallocate(xt)
        with pytest.raises(RuntimeError, match="dims must be unique"):
            ttnn.create_mesh_composer(mesh, ttnn.MeshComposerConfig([0, 0]))
    finally:
        ttnn.close_mesh_device(mesh)
        runtime.configure(None)
