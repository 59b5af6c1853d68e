"""A ROW_MAJOR [1, N] operand of a binary op or of linear's bias (docs/ttnn-facts.md §47): real ttnn tilizes it
into a tile-padded copy in the operand's own buffer type, freed when the call returns; the values are unchanged."""
from __future__ import annotations

import pytest
import torch


def _row(ttnn, device, data, buffer):
    mc = ttnn.L1_MEMORY_CONFIG if buffer == "l1" else ttnn.DRAM_MEMORY_CONFIG
    return ttnn.from_torch(data, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device, memory_config=mc)


@pytest.mark.parametrize("buffer", ["l1", "dram"])
@pytest.mark.parametrize("row_first", [False, True])
def test_a_row_major_row_is_tilized_into_a_temporary_in_its_own_buffer(ttnn, device, buffer, row_first):
    torch.manual_seed(0)
    y_t, row_t = torch.randn(1, 1, 64, 96), torch.randn(1, 96)
    y = ttnn.from_torch(y_t, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device,
                        memory_config=ttnn.L1_MEMORY_CONFIG)
    row = _row(ttnn, device, row_t, buffer)
    kind = ttnn.BufferType.L1 if buffer == "l1" else ttnn.BufferType.DRAM
    alloc = device._allocator(kind)
    before, alloc.peak = alloc.allocated, alloc.allocated
    out = ttnn.multiply(row, y, memory_config=ttnn.L1_MEMORY_CONFIG) if row_first else \
        ttnn.multiply(y, row, memory_config=ttnn.L1_MEMORY_CONFIG)
    # bytes per bank: the copy's 3 float32 tiles and the output's 6 take one 4096 B tile in each bank
    padded, output = 4096, (4096 if buffer == "l1" else 0)
    assert alloc.peak - before >= padded + output  # the copy lived beside the output
    assert alloc.allocated - before == output  # and is gone after the call
    assert out.layout == ttnn.TILE_LAYOUT
    assert torch.equal(ttnn.to_torch(out), y_t * row_t)


def test_a_row_major_bias_is_tilized_into_a_temporary_and_added_unchanged(ttnn, device):
    torch.manual_seed(0)
    x_t, w_t, b_t = torch.randn(1, 1, 64, 96), torch.randn(96, 64), torch.randn(1, 64)
    x = ttnn.from_torch(x_t, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(w_t, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    tile_bias = ttnn.from_torch(b_t, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    bias = _row(ttnn, device, b_t, "l1")
    alloc = device._allocator(ttnn.BufferType.L1)
    before, alloc.peak = alloc.allocated, alloc.allocated
    out = ttnn.linear(x, w, bias=bias)
    assert alloc.peak - before >= 4096 and alloc.allocated == before  # the copy in L1, then freed
    assert torch.equal(ttnn.to_torch(out), ttnn.to_torch(ttnn.linear(x, w, bias=tile_bias)))
