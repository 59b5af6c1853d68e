"""Memory configs, shard specs and their validation (onnx2ttnn/sim/_memconfig.py, _placement.py)."""
from __future__ import annotations

import pytest
import torch

from onnx2ttnn.sim import runtime


def grid(ttnn, x1, y1, x0=0, y0=0):
    return ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(x0, y0), ttnn.CoreCoord(x1, y1))})


def sharded(ttnn, layout, g, shape, orientation=None):
    return ttnn.MemoryConfig(layout, ttnn.BufferType.L1,
                             ttnn.ShardSpec(g, list(shape), orientation or ttnn.ShardOrientation.ROW_MAJOR))


def dram_tensor(ttnn, device, shape, layout=None):
    return ttnn.from_torch(torch.randn(shape), dtype=ttnn.bfloat16, layout=layout or ttnn.TILE_LAYOUT,
                           device=device)


def test_memory_configs_compare_by_value_and_print_readably(ttnn):
    a = sharded(ttnn, ttnn.TensorMemoryLayout.HEIGHT_SHARDED, grid(ttnn, 7, 7), (32, 64))
    b = sharded(ttnn, ttnn.TensorMemoryLayout.HEIGHT_SHARDED, grid(ttnn, 7, 7), (32, 64))
    assert a == b and hash(a) == hash(b) and a != ttnn.L1_MEMORY_CONFIG
    assert ttnn.MemoryConfig(ttnn.TensorMemoryLayout.INTERLEAVED, ttnn.BufferType.DRAM) == ttnn.DRAM_MEMORY_CONFIG
    assert repr(ttnn.L1_MEMORY_CONFIG) == ("MemoryConfig(memory_layout=TensorMemoryLayout::INTERLEAVED,"
                                           "buffer_type=BufferType::L1,shard_spec=std::nullopt)")
    assert "shape={32, 64}" in repr(a) and "[(x=0,y=0) - (x=7,y=7)]" in repr(a)


def test_create_sharded_memory_config_block(ttnn):
    mc = ttnn.create_sharded_memory_config(shape=(128, 768), core_grid=ttnn.CoreGrid(y=4, x=8),
                                           strategy=ttnn.ShardStrategy.BLOCK)
    assert mc.memory_layout is ttnn.TensorMemoryLayout.BLOCK_SHARDED and mc.buffer_type is ttnn.BufferType.L1
    assert mc.shard_spec.shape == (32, 96) and mc.shard_spec.grid == grid(ttnn, 7, 3)
    hs = ttnn.create_sharded_memory_config((1, 1, 256, 64), ttnn.CoreGrid(y=1, x=8), ttnn.ShardStrategy.HEIGHT)
    assert hs.shard_spec.shape == (32, 64)
    ws = ttnn.create_sharded_memory_config((128, 768), ttnn.CoreGrid(y=1, x=8), ttnn.ShardStrategy.WIDTH)
    assert ws.shard_spec.shape == (128, 96)


def test_block_sharded_tensor_places_one_shard_per_core(ttnn, device):
    x = dram_tensor(ttnn, device, (1, 1, 128, 768))
    mc = ttnn.create_sharded_memory_config((128, 768), ttnn.CoreGrid(y=4, x=8), ttnn.ShardStrategy.BLOCK)
    xb = ttnn.to_memory_config(x, mc)
    assert xb.memory_config() == mc and torch.equal(ttnn.to_torch(xb), ttnn.to_torch(x))
    l1 = runtime.memory_stats(device)["L1"]
    shard = 3 * 2048  # [32, 96] = 3 tiles
    assert l1.current_per_bank == shard
    assert l1.data_per_bank[:32] == (shard,) * 32 and set(l1.data_per_bank[32:]) == {0}  # cores (0,0)-(7,3)
    y = ttnn.gelu(xb)  # eltwise keeps the sharded placement
    assert y.memory_config() == mc
    assert ttnn.to_memory_config(xb, mc) is xb


def test_shards_must_be_tile_sized_for_tile_layout(ttnn, device):
    x = dram_tensor(ttnn, device, (1, 1, 256, 48))
    bad = sharded(ttnn, ttnn.TensorMemoryLayout.HEIGHT_SHARDED, grid(ttnn, 7, 0), (32, 48))
    with pytest.raises(RuntimeError, match=r"Physical shard shape \(32, 48\) must be tile \{32, 32\} sized!"):
        ttnn.to_memory_config(x, bad)
    rm = dram_tensor(ttnn, device, (1, 1, 100, 48), layout=ttnn.ROW_MAJOR_LAYOUT)
    ok = sharded(ttnn, ttnn.TensorMemoryLayout.HEIGHT_SHARDED, grid(ttnn, 3, 0), (25, 48))
    assert ttnn.to_memory_config(rm, ok).memory_config() == ok  # row-major shards need no tile alignment


def test_number_of_shards_must_not_exceed_cores(ttnn, device):
    x = dram_tensor(ttnn, device, (1, 1, 256, 64))
    bad = sharded(ttnn, ttnn.TensorMemoryLayout.HEIGHT_SHARDED, grid(ttnn, 1, 0), (32, 64))
    with pytest.raises(RuntimeError, match="Number of shards along height 8 must not exceed number of cores 2"):
        ttnn.to_memory_config(x, bad)
    wide = dram_tensor(ttnn, device, (32, 768))
    bad_w = sharded(ttnn, ttnn.TensorMemoryLayout.WIDTH_SHARDED, grid(ttnn, 3, 0), (32, 96))
    with pytest.raises(RuntimeError, match="Number of shards along width 8 must not exceed number of cores 4"):
        ttnn.to_memory_config(wide, bad_w)


def test_height_shard_width_must_match_and_block_columns_fit(ttnn, device):
    x = dram_tensor(ttnn, device, (1, 1, 128, 768))
    bad = sharded(ttnn, ttnn.TensorMemoryLayout.HEIGHT_SHARDED, grid(ttnn, 3, 0), (32, 32))
    with pytest.raises(RuntimeError, match="Shard width 32 must match physical width 768 for height sharded"):
        ttnn.to_memory_config(x, bad)
    block = sharded(ttnn, ttnn.TensorMemoryLayout.BLOCK_SHARDED, grid(ttnn, 7, 3), (32, 32))
    with pytest.raises(RuntimeError, match="Number of shards along width 24 must not exceed number of columns 8 "
                                           "for row major orientation!"):
        ttnn.to_memory_config(x, block)


def test_shard_grid_must_be_inside_the_device(ttnn, device):
    x = dram_tensor(ttnn, device, (1, 1, 256, 64))
    off = sharded(ttnn, ttnn.TensorMemoryLayout.HEIGHT_SHARDED, grid(ttnn, 0, 15), (32, 64))
    with pytest.raises(RuntimeError, match="outside the device's compute grid of 8x8"):
        ttnn.to_memory_config(x, off)


def test_shard_spec_only_with_sharded_layouts(ttnn, device):
    x = dram_tensor(ttnn, device, (1, 1, 256, 64))
    spec = ttnn.ShardSpec(grid(ttnn, 7, 0), [32, 64], ttnn.ShardOrientation.ROW_MAJOR)
    with pytest.raises(RuntimeError, match="Interleaved memory config must not have a shard spec"):
        ttnn.to_memory_config(x, ttnn.MemoryConfig(ttnn.TensorMemoryLayout.INTERLEAVED, ttnn.BufferType.L1, spec))
    with pytest.raises(RuntimeError, match="needs a sharded input|requires a shard spec"):
        ttnn.to_memory_config(x, ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1))
    with pytest.raises(RuntimeError, match="requires a shard spec"):
        ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                        memory_config=ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1))


def test_sharded_config_without_spec_inherits_the_input_grid(ttnn, device):
    x = dram_tensor(ttnn, device, (1, 1, 256, 64))
    hs = ttnn.create_sharded_memory_config((1, 1, 256, 64), ttnn.CoreGrid(y=1, x=8), ttnn.ShardStrategy.HEIGHT)
    xs = ttnn.to_memory_config(x, hs)
    y = ttnn.relu(xs, memory_config=ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1))
    assert y.memory_config() == hs


def test_linear_refuses_sharded_output_from_interleaved_input(ttnn, device):
    x = dram_tensor(ttnn, device, (1, 1, 128, 768))
    w = dram_tensor(ttnn, device, (768, 768))
    hs = ttnn.create_sharded_memory_config((128, 768), ttnn.CoreGrid(y=4, x=1), ttnn.ShardStrategy.HEIGHT)
    with pytest.raises(RuntimeError, match="sharded output"):
        ttnn.linear(x, w, memory_config=hs)
    bs = ttnn.create_sharded_memory_config((128, 768), ttnn.CoreGrid(y=4, x=8), ttnn.ShardStrategy.BLOCK)
    xb = ttnn.to_memory_config(x, bs)
    assert ttnn.linear(xb, w, memory_config=bs).memory_config() == bs
