"""Uploads through a mesh mapper (sim/ops_host.py from_torch, sim/_mesh.py map_to_mesh): converted on the device
with transient buffers when given the device, on the host when not (docs/ttnn-facts.md §36)."""
from __future__ import annotations

import pytest
import torch

from onnx2ttnn import sim as ttnn
from onnx2ttnn.sim import runtime

W = torch.randn(768, 2304)  # one chip of 1x2 holds [768, 1152]: bf16 TILE 28,672 B per L1 bank (probe: the same)
PIECE = 28672


@pytest.fixture
def mesh():
    runtime.configure("n300")
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), l1_small_size=16384)
    yield mesh
    if mesh.is_open:
        ttnn.close_mesh_device(mesh)
    runtime.configure(None)


def _l1(mesh) -> tuple[int, int]:
    """Bytes allocated per L1 bank (the same on both chips, checked) and the bank's size."""
    views = [ttnn.get_memory_view(chip, ttnn.BufferType.L1) for chip in mesh.get_devices()]
    assert len({int(v.total_bytes_allocated_per_bank) for v in views}) == 1
    return int(views[0].total_bytes_allocated_per_bank), int(views[0].total_bytes_per_bank)


def _fill(mesh, free: int):
    """A ROW_MAJOR bf16 filler leaving `free` bytes per L1 bank (bf16 torch to bf16 ROW_MAJOR: no transient)."""
    used, bank = _l1(mesh)
    rows = (bank - used - free) // 32 * 64
    return ttnn.from_torch(torch.zeros(rows, 16, dtype=torch.bfloat16), dtype=ttnn.bfloat16,
                           layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, memory_config=ttnn.L1_MEMORY_CONFIG,
                           mesh_mapper=ttnn.replicate_tensor_to_mesh_mapper(mesh))


def _direct(mesh, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT):
    return ttnn.from_torch(W, dtype=dtype, layout=layout, device=mesh, memory_config=ttnn.L1_MEMORY_CONFIG,
                           mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, dim=-1))


def _host_then_device(mesh, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT):
    host = ttnn.from_torch(W, dtype=dtype, layout=layout, mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, dim=-1))
    assert host.storage_type() == ttnn.StorageType.HOST
    return ttnn.to_device(host, mesh, memory_config=ttnn.L1_MEMORY_CONFIG)


def test_direct_float_upload_needs_its_float32_pieces_beside_it(mesh):
    fill = _fill(mesh, 2 * PIECE)  # twice the bf16 piece: the float32 ROW_MAJOR piece alone takes that
    before, _ = _l1(mesh)
    with pytest.raises(RuntimeError, match="Out of Memory"):
        _direct(mesh)
    assert _l1(mesh)[0] == before  # what it allocated before failing is freed (as ttnn's buffers are)
    ttnn.deallocate(fill)
    fill = _fill(mesh, 4 * PIECE)  # float32 ROW_MAJOR + float32 TILE (the probe: 55,296 + 57,344)
    before, _ = _l1(mesh)
    t = _direct(mesh)
    assert _l1(mesh)[0] - before == PIECE and t.dtype == ttnn.bfloat16  # the transients are freed
    ttnn.deallocate(t)
    ttnn.deallocate(fill)


def test_host_conversion_then_to_device_allocates_the_tensor_alone(mesh):
    for layout in (ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT):
        size = PIECE if layout == ttnn.TILE_LAYOUT else 27648
        fill = _fill(mesh, size)  # room for the tensor alone
        before, _ = _l1(mesh)
        t = _host_then_device(mesh, layout=layout)
        assert _l1(mesh)[0] - before == size
        pieces = ttnn.get_device_tensors(t)
        assert len(pieces) == 2 and tuple(pieces[1].shape) == (768, 1152) and pieces[1].layout == layout
        out = ttnn.to_torch(t, mesh_composer=ttnn.concat_mesh_to_tensor_composer(mesh, dim=-1))
        torch.testing.assert_close(out.float(), W.to(torch.bfloat16).float())
        ttnn.deallocate(t)
        ttnn.deallocate(fill)


def test_block_float_upload_is_converted_on_the_host_either_way(mesh):
    fill = _fill(mesh, 15232)  # bfloat8_b [768, 1152]: 864 tiles of 1088 B, 14 a bank: room for it alone
    before, _ = _l1(mesh)
    t = _direct(mesh, dtype=ttnn.bfloat8_b)
    assert _l1(mesh)[0] - before == 15232 and t.dtype == ttnn.bfloat8_b
    ttnn.deallocate(t)
    ttnn.deallocate(fill)
