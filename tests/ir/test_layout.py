"""TTNNLayout: text form round-trips, the rules of docs/design.md §3.2 are enforced, sizes are right."""
from __future__ import annotations

import pytest

from onnx2ttnn.ir.layout import LayoutError, MemoryConfig, TTNNLayout, bytes_per_bank, memory_config_of, padded_shape


@pytest.mark.parametrize("text", [
    "tile<bf16> dram interleaved",
    "tile<bf16> l1 height_sharded grid=8x8 shard=32x64",
    "row_major<f32> host",
    "tile<bfp8> l1 block_sharded grid=8x4 shard=32x96",
    "row_major<u32> l1 interleaved",
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


def test_tile_padding_and_bank_sizes():
    tile = TTNNLayout()
    assert padded_shape((1, 7, 48), tile) == (1, 32, 64)
    assert padded_shape((1, 7, 48), TTNNLayout("row_major", "bf16")) == (1, 7, 48)
    # [1, 128, 768] bf16 tile: 96 tiles of 2048 B over 64 banks -> 2 tiles per bank
    assert bytes_per_bank((1, 128, 768), tile, 64) == 2 * 2048
    # row-major [3, 10] f32: 3 rows of 40 B, aligned to 64 B... 32 B alignment -> 64 B, one row per bank
    assert bytes_per_bank((3, 10), TTNNLayout("row_major", "f32"), 12) == 64


def test_memory_config_is_derived_from_the_layout():
    assert memory_config_of(TTNNLayout.parse("tile<bf16> l1 interleaved")) == MemoryConfig("interleaved", "l1")
    sharded = TTNNLayout.parse("tile<bf16> l1 width_sharded grid=8x1 shard=128x96")
    assert memory_config_of(sharded) == MemoryConfig("width_sharded", "l1", (8, 1), (128, 96))
    assert memory_config_of(TTNNLayout.parse("row_major<f32> host")) is None
