"""TTNNLayout: text form round-trips, the rules of docs/design.md §3.2 are enforced, sizes are right."""
from __future__ import annotations

import pytest

from onnx2ttnn.ir.layout import (LayoutError, MemoryConfig, TTNNLayout, bytes_per_bank, memory_config_of, padded_shape,
                                 physical_2d)


@pytest.mark.parametrize("text", [
    "tile<bf16> dram interleaved",
    "tile<bf16> l1 height_sharded grid=8x8 shard=32x64",
    "row_major<f32> host",
    "tile<bfp8> l1 block_sharded grid=8x4 shard=32x96",
    "row_major<u32> l1 interleaved",
    "tile<bf16> dram interleaved mesh=replicated",
    "row_major<f32> host mesh=shard0",
    "tile<bf16> l1 height_sharded grid=8x8 shard=32x64 mesh=shard3@1",
])
def test_text_round_trips(text):
    assert str(TTNNLayout.parse(text)) == text


@pytest.mark.parametrize("kwargs, message", [
    (dict(page="row_major", dtype="bfp8"), "TILE"),
    (dict(buffer="host", memory_layout="interleaved"), "host tensors"),
    (dict(memory_layout="height_sharded"), "needs a grid"),
    (dict(grid=(8, 8), shard=(32, 32)), "interleaved layouts have no grid"),
    (dict(buffer="l1", memory_layout="height_sharded", grid=(8, 8), shard=(32, 48)), "must be tile"),
])
def test_rules_are_enforced(kwargs, message):
    with pytest.raises(LayoutError, match=message):
        TTNNLayout(**kwargs)


def test_parse_rejects_garbage():
    with pytest.raises(LayoutError):
        TTNNLayout.parse("tile bf16 dram")
    for text in ("tile<bf16> dram interleaved mesh=split0", "tile<bf16> dram mesh=shard0"):
        with pytest.raises(LayoutError):
            TTNNLayout.parse(text)


def test_mesh_placement_fields():
    """One part per mesh axis: the batch's (`shard<d>`, or `shard<d>@0` on a 2-D mesh) and tensor parallel's
    along axis 1 (`shard<d>@1` or `partial@1`, docs/design.md §6.21)."""
    layout = TTNNLayout.parse("tile<bf16> l1 interleaved mesh=shard0@0,shard3@1")
    assert (layout.mesh.dim, layout.mesh.axis, layout.mesh.tp, layout.mesh.replicated) == (0, 0, 3, False)
    alone = TTNNLayout.parse("tile<bf16> l1 interleaved mesh=shard3@1").mesh
    assert (alone.dim, alone.tp, alone.replicated) == (None, 3, False)
    partial = TTNNLayout.parse("tile<bf16> l1 interleaved mesh=partial@1").mesh
    assert partial.partial and not partial.replicated and str(partial) == "partial@1"
    for text in ("shard0@0,shard3@1", "shard0,partial@1", "shard2"):
        assert str(TTNNLayout.parse(f"tile<bf16> dram interleaved mesh={text}").mesh) == text
    with pytest.raises(LayoutError):
        TTNNLayout.parse("tile<bf16> dram interleaved mesh=partial@0")
    assert TTNNLayout.parse("tile<bf16> l1 interleaved mesh=replicated").mesh.replicated
    assert TTNNLayout().mesh is None and layout.with_(buffer="host").mesh == layout.mesh


def test_tile_padding_and_bank_sizes():
    tile = TTNNLayout()
    assert padded_shape((1, 7, 48), tile) == (1, 32, 64)
    assert padded_shape((1, 7, 48), TTNNLayout("row_major", "bf16")) == (1, 7, 48)
    # [1, 128, 768] bf16 tile: 96 tiles of 2048 B over 64 banks -> 2 tiles per bank
    assert bytes_per_bank((1, 128, 768), tile, 64) == 2 * 2048
    # row-major [3, 10] f32: 3 rows of 40 B, aligned to 64 B... 32 B alignment -> 64 B, one row per bank
    assert bytes_per_bank((3, 10), TTNNLayout("row_major", "f32"), 12) == 64


def test_sharded_bytes_per_bank_is_one_shard_in_every_bank():
    # docs/ttnn-facts.md section 2: HEIGHT (1,1,256,64) on 8 cores, shard (32,64) -> 4096 B; RM shard (40,48) -> 3840
    height = TTNNLayout.parse("tile<bf16> l1 height_sharded grid=8x1 shard=32x64")
    assert bytes_per_bank((1, 1, 256, 64), height, 64) == 4096
    width = TTNNLayout.parse("tile<f32> l1 width_sharded grid=8x8 shard=64x32")
    assert bytes_per_bank((1, 1, 64, 2048), width, 64) == 2 * 4096
    rows = TTNNLayout.parse("row_major<bf16> l1 height_sharded grid=5x1 shard=40x48")
    assert bytes_per_bank((1, 1, 200, 48), rows, 64) == 3840


def test_the_2d_view_pages_and_shards_are_cut_from():
    tile, rows = TTNNLayout(), TTNNLayout("row_major", "bf16")
    assert physical_2d((1, 7, 48), tile) == (32, 64)  # padded
    assert physical_2d((2, 3, 7, 48), rows) == (42, 48)
    assert physical_2d((48,), tile) == (32, 64)  # a rank-1 TILE tensor is one tile row
    assert physical_2d((48,), rows) == (1, 48)  # one row page


def test_memory_config_is_derived_from_the_layout():
    assert memory_config_of(TTNNLayout.parse("tile<bf16> l1 interleaved")) == MemoryConfig("interleaved", "l1")
    sharded = TTNNLayout.parse("tile<bf16> l1 width_sharded grid=8x1 shard=128x96")
    assert memory_config_of(sharded) == MemoryConfig("width_sharded", "l1", (8, 1), (128, 96))
    assert memory_config_of(TTNNLayout.parse("row_major<f32> host")) is None
