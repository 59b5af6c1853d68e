"""Data movement and host/device ops (ops_data_movement.py, ops_host.py) against torch."""
from __future__ import annotations

import pytest
import torch


@pytest.fixture
def src():
    torch.manual_seed(3)
    return torch.randn(2, 3, 40, 50).to(torch.bfloat16)  # bf16-exact values: moves must be exact


def dev(ttnn, device, data, layout=None, dtype=None, mc=None):
    return ttnn.from_torch(data, dtype=dtype or ttnn.bfloat16, layout=layout or ttnn.TILE_LAYOUT, device=device,
                           memory_config=mc)


def test_from_torch_defaults(ttnn, device, src):
    host = ttnn.from_torch(src)
    assert host.storage_type() is ttnn.StorageType.HOST and host.layout is ttnn.ROW_MAJOR_LAYOUT
    assert host.dtype is ttnn.bfloat16
    assert ttnn.from_torch(torch.ones(2), ).dtype is ttnn.float32
    assert ttnn.from_torch(torch.ones(2, dtype=torch.int64)).dtype is ttnn.uint32
    on = ttnn.from_torch(src, device=device)
    assert on.memory_config() == ttnn.DRAM_MEMORY_CONFIG and on.storage_type() is ttnn.StorageType.DEVICE
    assert torch.equal(ttnn.to_torch(on), src)


def test_to_device_from_device_round_trip(ttnn, device, src):
    host = ttnn.from_torch(src, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    on = ttnn.to_device(host, device, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert on.memory_config() == ttnn.L1_MEMORY_CONFIG and on.is_allocated()
    back = ttnn.from_device(on)
    assert back.storage_type() is ttnn.StorageType.HOST and torch.equal(ttnn.to_torch(back), src)
    assert ttnn.to_device(on, device) is on


def test_clone_copies_into_a_new_buffer_where_memory_config_says(ttnn, device, src):
    t = dev(ttnn, device, src, dtype=ttnn.bfloat8_b)
    l1 = ttnn.clone(t, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert l1.memory_config() == ttnn.L1_MEMORY_CONFIG and l1.dtype is ttnn.bfloat8_b
    assert torch.equal(ttnn.to_torch(l1), ttnn.to_torch(t))
    same = ttnn.clone(t)  # no memory_config: the input's placement, still a new buffer
    assert same is not t and same.memory_config() == t.memory_config()
    ttnn.deallocate(t)
    assert l1.is_allocated() and same.is_allocated()
    with pytest.raises(Exception):
        ttnn.clone(ttnn.from_torch(src))  # a host tensor


def test_to_layout_typecast_to_memory_config(ttnn, device, src):
    t = dev(ttnn, device, src)
    rm = ttnn.to_layout(t, ttnn.ROW_MAJOR_LAYOUT)
    assert rm.layout is ttnn.ROW_MAJOR_LAYOUT and tuple(rm.padded_shape) == (2, 3, 40, 50)
    assert ttnn.to_layout(t, ttnn.TILE_LAYOUT) is t  # nothing to do: the input itself
    f = ttnn.typecast(t, ttnn.float32)
    assert f.dtype is ttnn.float32 and torch.equal(ttnn.to_torch(f), src.float())
    i = ttnn.typecast(dev(ttnn, device, torch.tensor([[-1.5, 2.7]])), ttnn.int32)
    assert ttnn.to_torch(i).tolist() == [[-1, 2]]
    l1 = ttnn.to_memory_config(t, ttnn.L1_MEMORY_CONFIG)
    assert l1.memory_config() == ttnn.L1_MEMORY_CONFIG and torch.equal(ttnn.to_torch(l1), src)
    assert ttnn.to_memory_config(t, ttnn.DRAM_MEMORY_CONFIG) is t
    with pytest.raises(RuntimeError, match="bfloat8_b"):
        ttnn.to_layout(dev(ttnn, device, src, dtype=ttnn.bfloat8_b), ttnn.ROW_MAJOR_LAYOUT)


def test_permute_transpose(ttnn, device, src):
    t = dev(ttnn, device, src)
    assert torch.equal(ttnn.to_torch(ttnn.permute(t, (0, 2, 1, 3))), src.permute(0, 2, 1, 3))
    assert torch.equal(ttnn.to_torch(ttnn.permute(t, (0, 2, 3, 1))), src.permute(0, 2, 3, 1))
    assert torch.equal(ttnn.to_torch(ttnn.transpose(t, -2, -1)), src.transpose(-2, -1))
    out = ttnn.permute(t, (3, 2, 1, 0), memory_config=ttnn.L1_MEMORY_CONFIG)
    assert out.memory_config() == ttnn.L1_MEMORY_CONFIG
    with pytest.raises(RuntimeError, match="not a permutation"):
        ttnn.permute(t, (0, 0, 1, 2))


def test_concat_split_slice(ttnn, device, src):
    t = dev(ttnn, device, src)
    assert torch.equal(ttnn.to_torch(ttnn.concat([t, t], dim=-1)), torch.cat([src, src], -1))
    parts = ttnn.split(t, 20, dim=2)
    assert len(parts) == 2 and torch.equal(ttnn.to_torch(parts[1]), src[:, :, 20:])
    parts = ttnn.split(t, [10, 40], dim=-1)
    assert [tuple(p.shape) for p in parts] == [(2, 3, 40, 10), (2, 3, 40, 40)]
    sl = ttnn.slice(t, [0, 1, 0, 5], [2, 3, 33, 50], [1, 1, 2, 3], memory_config=ttnn.L1_MEMORY_CONFIG)
    assert torch.equal(ttnn.to_torch(sl), src[0:2, 1:3, 0:33:2, 5:50:3])
    assert sl.memory_config() == ttnn.L1_MEMORY_CONFIG
    with pytest.raises(RuntimeError, match="layout"):
        ttnn.concat([t, dev(ttnn, device, src, layout=ttnn.ROW_MAJOR_LAYOUT)], dim=0)


def test_expand_repeat_pad(ttnn, device):
    x = torch.randn(1, 3, 1, 5).to(torch.bfloat16)
    t = dev(ttnn, device, x, layout=ttnn.ROW_MAJOR_LAYOUT)
    assert torch.equal(ttnn.to_torch(ttnn.expand(t, [2, 3, 4, 5])), x.expand(2, 3, 4, 5))
    assert torch.equal(ttnn.to_torch(ttnn.repeat(t, [2, 1, 3, 1])), x.repeat(2, 1, 3, 1))
    padded = ttnn.pad(t, [(0, 0), (1, 0), (0, 2), (0, 3)], 7.0)
    assert torch.equal(ttnn.to_torch(padded), torch.nn.functional.pad(x, (0, 3, 0, 2, 1, 0), value=7.0))
    tile = dev(ttnn, device, x)
    with pytest.raises(RuntimeError, match="front padding"):
        ttnn.pad(tile, [(0, 0), (1, 0), (0, 0), (0, 0)], 0.0)


def test_unsqueeze_squeeze_shapes(ttnn, device, src):
    t = dev(ttnn, device, src[:1])
    assert tuple(ttnn.unsqueeze(t, 0).shape) == (1, 1, 3, 40, 50)
    assert tuple(ttnn.squeeze(t, 0).shape) == (3, 40, 50)
    assert tuple(ttnn.squeeze(t).shape) == (3, 40, 50)


def test_embedding(ttnn, device):
    table = torch.randn(100, 64)
    ids = torch.tensor([[3, 7, 0, 99]])
    t_ids = ttnn.from_torch(ids, dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    t_tab = ttnn.from_torch(table, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    out = ttnn.embedding(t_ids, t_tab)
    assert out.layout is ttnn.ROW_MAJOR_LAYOUT and tuple(out.shape) == (1, 4, 64)
    assert torch.equal(ttnn.to_torch(out), table.to(torch.bfloat16)[ids])
    assert ttnn.embedding(t_ids, t_tab, layout=ttnn.TILE_LAYOUT).layout is ttnn.TILE_LAYOUT
    padded = ttnn.to_torch(ttnn.embedding(t_ids, t_tab, padding_idx=7))
    assert torch.all(padded[0, 1] == 0)
    with pytest.raises(RuntimeError, match="unsupported dtype DataType::INT32"):
        ttnn.embedding(ttnn.from_torch(ids.int(), dtype=ttnn.int32, device=device), t_tab)
    tile_ids = ttnn.from_torch(torch.zeros(32, 32, dtype=torch.int64), dtype=ttnn.uint32,
                               layout=ttnn.TILE_LAYOUT, device=device)
    with pytest.raises(RuntimeError, match="ROW_MAJOR"):
        ttnn.embedding(tile_ids, t_tab)
    # a TILE table gives TILE rows (docs/ttnn-facts.md §6); a bfloat8_b one bf16 rows of its rounded values, a
    # bfloat4_b one is refused (§20)
    assert ttnn.embedding(t_ids, ttnn.to_layout(t_tab, ttnn.TILE_LAYOUT)).layout is ttnn.TILE_LAYOUT
    t_bfp8 = ttnn.from_torch(table, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=device)
    rows = ttnn.embedding(t_ids, t_bfp8)
    assert rows.dtype is ttnn.bfloat16 and rows.layout is ttnn.TILE_LAYOUT
    assert torch.equal(ttnn.to_torch(rows).float(), ttnn.to_torch(t_bfp8)[ids])
    with pytest.raises(RuntimeError, match="Only TILE layout is supported for BFLOAT8_B"):
        ttnn.embedding(t_ids, ttnn.from_torch(table, dtype=ttnn.bfloat4_b, layout=ttnn.TILE_LAYOUT, device=device))


def test_host_tensor_ops(ttnn, src):
    host = ttnn.from_torch(src)
    assert tuple(ttnn.reshape(host, (6, 40, 50)).shape) == (6, 40, 50)
    assert torch.equal(ttnn.to_torch(ttnn.permute(host, (1, 0, 2, 3))), src.permute(1, 0, 2, 3))
    assert ttnn.to_layout(host, ttnn.TILE_LAYOUT).layout is ttnn.TILE_LAYOUT
    ttnn.deallocate(host)  # host tensors: no-op


def test_tensor_constructor_from_arrays(ttnn, device):
    import numpy as np

    data = np.arange(64, dtype=np.float32).reshape(1, 64)
    host = ttnn.Tensor(data, ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    assert host.storage_type() is ttnn.StorageType.HOST and host.layout is ttnn.TILE_LAYOUT
    on = ttnn.Tensor(data, ttnn.float32, device=device, mem_config=ttnn.L1_MEMORY_CONFIG)
    assert on.memory_config() == ttnn.L1_MEMORY_CONFIG and ttnn.to_torch(on).tolist() == data.tolist()
    ttnn.deallocate(on)
    assert not on.is_allocated()
    from onnx2ttnn.sim import runtime
    assert runtime.memory_stats(device)["L1"].current_per_bank == 0


def test_typecast_keeps_the_input_memory_layout(ttnn, device):
    # real ttnn: "Typecast operation requires Input and Output memory layout to match" (probe_sharding.py)
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(7, 0))})
    sharded = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
                                ttnn.ShardSpec(grid, [32, 64], ttnn.ShardOrientation.ROW_MAJOR))
    x = ttnn.from_torch(torch.randn(1, 1, 256, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                        memory_config=sharded)
    y = ttnn.from_torch(torch.randn(1, 1, 256, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                        memory_config=ttnn.L1_MEMORY_CONFIG)
    assert ttnn.typecast(x, ttnn.float32, memory_config=sharded).memory_config() == sharded
    assert ttnn.typecast(y, ttnn.float32, memory_config=ttnn.DRAM_MEMORY_CONFIG).memory_config().buffer_type == \
        ttnn.BufferType.DRAM
    for src, mc in ((x, ttnn.L1_MEMORY_CONFIG), (y, sharded)):
        with pytest.raises(RuntimeError, match="memory layout to match"):
            ttnn.typecast(src, ttnn.float32, memory_config=mc)
