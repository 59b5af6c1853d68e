"""Pools and upsample (onnx2ttnn/sim/ops_pool.py) on NHWC tensors against torch."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.sim._nhwc import bf16, nhwc_input, to_nchw


def test_max_pool2d_default_placement_and_values(ttnn, device):
    x = torch.randn(1, 64, 56, 56)
    t = nhwc_input(ttnn, device, x, flat=True)
    out = ttnn.max_pool2d(t, batch_size=1, input_h=56, input_w=56, channels=64, kernel_size=[3, 3], stride=[2, 2],
                          padding=[1, 1], dilation=[1, 1])
    assert tuple(out.shape) == (1, 1, 784, 64) and out.layout is ttnn.ROW_MAJOR_LAYOUT
    mc = out.memory_config()
    assert mc.buffer_type is ttnn.BufferType.L1 and mc.memory_layout is ttnn.TensorMemoryLayout.HEIGHT_SHARDED
    ref = F.max_pool2d(bf16(x), 3, 2, 1)
    assert torch.equal(to_nchw(ttnn, out, 1, 28, 28), ref)
    out2 = ttnn.max_pool2d(t, 1, 56, 56, 64, [2, 2], [2, 2], [0, 0], [1, 1], True,
                           memory_config=ttnn.DRAM_MEMORY_CONFIG)
    assert out2.memory_config() == ttnn.DRAM_MEMORY_CONFIG


def test_avg_pool2d_and_global_avg_pool2d(ttnn, device):
    x = torch.randn(2, 32, 9, 9)
    t = nhwc_input(ttnn, device, x)
    out = ttnn.avg_pool2d(t, 2, 9, 9, 32, [3, 3], [2, 2], [1, 1], count_include_pad=False)
    ref = F.avg_pool2d(bf16(x), 3, 2, 1, count_include_pad=False)
    assert torch.allclose(to_nchw(ttnn, out, 2, 5, 5), ref, atol=1e-2, rtol=2 ** -7)
    out = ttnn.avg_pool2d(t, 2, 9, 9, 32, [3, 3], [2, 2], [0, 1, 0, 1])
    ref = F.avg_pool2d(F.pad(bf16(x), (0, 1, 0, 1)), 3, 2)
    assert torch.allclose(to_nchw(ttnn, out, 2, 4, 4), ref, atol=1e-2, rtol=2 ** -7)
    g = ttnn.global_avg_pool2d(t)
    assert tuple(g.shape) == (2, 1, 1, 32) and g.layout is ttnn.TILE_LAYOUT
    assert torch.allclose(ttnn.to_torch(g).float(), bf16(bf16(x).mean((2, 3))).reshape(2, 1, 1, 32))


def test_pools_refuse_float32_input(ttnn, device):
    """Real ttnn (probe_pools): float32 input -> 'Only BFLOAT16 supported for now'."""
    x = ttnn.from_torch(torch.randn(1, 1, 64, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    with pytest.raises(RuntimeError, match="Only BFLOAT16 supported"):
        ttnn.max_pool2d(x, 1, 8, 8, 32, [2, 2], [2, 2], [0, 0], [1, 1])
    with pytest.raises(RuntimeError, match="Only BFLOAT16 supported"):
        ttnn.avg_pool2d(x, 1, 8, 8, 32, [2, 2], [2, 2], [0, 0])


def test_pools_refuse_a_window_larger_than_the_padded_input(ttnn, device):
    """Real ttnn dies inside the call (SIGSEGV) on such a window; lowering/pool.py makes it a global pool."""
    x = ttnn.from_torch(torch.randn(1, 1, 4, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    with pytest.raises(RuntimeError, match="larger than the padded 2x2 input"):
        ttnn.max_pool2d(x, 1, 2, 2, 32, [3, 3], [1, 1], [0, 0], [1, 1])
    with pytest.raises(RuntimeError, match="larger than the padded 2x2 input"):
        ttnn.avg_pool2d(x, 1, 2, 2, 32, [3, 3], [1, 1], [0, 0])
    assert ttnn.max_pool2d(x, 1, 2, 2, 32, [3, 3], [1, 1], [1, 1], [1, 1]).shape[-1] == 32  # padded 4x4: fits


def test_global_avg_pool2d_output_stays_bfloat16(ttnn, device):
    x = ttnn.from_torch(torch.randn(1, 7, 7, 64), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    assert ttnn.global_avg_pool2d(x, dtype=ttnn.float32).dtype is ttnn.bfloat16


def test_upsample_nearest_repeats_rows_and_columns(ttnn, device):
    x = torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5)
    t = ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    y = ttnn.upsample(t, [2, 3])
    assert tuple(y.shape) == (2, 6, 12, 5) and y.layout is ttnn.ROW_MAJOR_LAYOUT and y.dtype is ttnn.float32
    assert torch.equal(ttnn.to_torch(y), x.repeat_interleave(2, 1).repeat_interleave(3, 2))


def test_upsample_tile_input_must_be_tile_aligned(ttnn, device):
    ok = ttnn.from_torch(torch.randn(1, 2, 32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    assert ttnn.upsample(ok, 2).layout is ttnn.ROW_MAJOR_LAYOUT
    bad = ttnn.from_torch(torch.randn(1, 2, 3, 5), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    with pytest.raises(RuntimeError, match="tile-aligned"):
        ttnn.upsample(bad, 2)


def test_upsample_refuses_what_it_does_not_model(ttnn, device):
    t = ttnn.from_torch(torch.randn(1, 2, 2, 4), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    with pytest.raises(RuntimeError, match="mode must be"):
        ttnn.upsample(t, 2, mode="bicubic")
    with pytest.raises(NotImplementedError):
        ttnn.upsample(t, 1.5)
    with pytest.raises(NotImplementedError):
        ttnn.upsample(t, 2, mode="bilinear")
