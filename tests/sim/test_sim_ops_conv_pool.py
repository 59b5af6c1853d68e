"""conv2d and pooling (onnx2ttnn/sim/ops_conv_pool.py) on NHWC tensors against torch."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from onnx2ttnn.sim import runtime


def bf16(x):
    return x.to(torch.bfloat16).float()


def nhwc_input(ttnn, device, x_nchw, flat=False, layout=None, memory_config=None):
    n, c, h, w = x_nchw.shape
    nhwc = x_nchw.permute(0, 2, 3, 1)
    if flat:
        nhwc = nhwc.reshape(1, 1, n * h * w, c)
    return ttnn.from_torch(nhwc, dtype=ttnn.bfloat16, layout=layout or ttnn.ROW_MAJOR_LAYOUT, device=device,
                           memory_config=memory_config)


def to_nchw(ttnn, t, n, oh, ow):
    flat = ttnn.to_torch(t).float()
    return flat.reshape(n, oh, ow, -1).permute(0, 3, 1, 2)


def conv(ttnn, device, x, w, b=None, **kw):
    n, c, h, width = x.shape
    return ttnn.conv2d(input_tensor=nhwc_input(ttnn, device, x, flat=kw.pop("flat", False),
                                               memory_config=kw.pop("input_memory_config", None)),
                       weight_tensor=ttnn.from_torch(w, dtype=ttnn.float32),
                       bias_tensor=None if b is None else ttnn.from_torch(b.reshape(1, 1, 1, -1), dtype=ttnn.float32),
                       in_channels=c, out_channels=w.shape[0], device=device, batch_size=n, input_height=h,
                       input_width=width, **kw)


def test_conv2d_returns_output_dims_and_prepared_weights(ttnn, device):
    torch.manual_seed(6)
    x, w, b = torch.randn(2, 16, 14, 14), torch.randn(24, 16, 3, 3) * 0.1, torch.randn(24)
    out, (oh, ow), (pw, pb) = conv(ttnn, device, x, w, b, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1),
                                   return_output_dim=True, return_weights_and_bias=True)
    assert (oh, ow) == (7, 7) and tuple(out.shape) == (1, 1, 2 * 7 * 7, 24)
    assert out.layout is ttnn.TILE_LAYOUT and out.memory_config() == ttnn.DRAM_MEMORY_CONFIG
    ref = F.conv2d(bf16(x), bf16(w), bf16(b), stride=2, padding=1)
    assert torch.allclose(to_nchw(ttnn, out, 2, 7, 7), ref, rtol=2 ** -7, atol=2 ** -6)
    assert pw.storage_type() is ttnn.StorageType.DEVICE and pw.is_allocated() and tuple(pb.shape) == (1, 1, 1, 24)
    live = [b.description for b in runtime.live_buffers(device)]
    # real ttnn (probe_conv, results/conv.txt): a float32 host weight is prepared as FLOAT32 [1,1,KH*KW*C,OC]
    assert "[1, 1, 144, 24] f32 TILE DRAM interleaved" in live  # the prepared weight occupies device memory
    again = ttnn.conv2d(input_tensor=nhwc_input(ttnn, device, x), weight_tensor=pw, bias_tensor=pb, in_channels=16,
                        out_channels=24, device=device, batch_size=2, input_height=14, input_width=14,
                        kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))
    assert torch.equal(ttnn.to_torch(again), ttnn.to_torch(out))


def test_conv2d_frees_weights_it_prepared_unless_returned(ttnn, device):
    """Without return_weights_and_bias the prepared weight and bias are temporaries of the call."""
    torch.manual_seed(5)
    x, w, b = torch.randn(1, 4, 6, 6), torch.randn(8, 4, 3, 3), torch.randn(8)
    out = conv(ttnn, device, x, w, b, kernel_size=(3, 3))
    live = [buf.description for buf in runtime.live_buffers(device)]
    assert "[1, 1, 36, 8] f32 TILE DRAM interleaved" not in live  # the prepared weight is gone
    assert "[1, 1, 1, 8] f32 TILE DRAM interleaved" not in live  # and the prepared bias
    assert out.is_allocated()


def test_conv2d_flat_input_four_padding_groups_dilation(ttnn, device):
    torch.manual_seed(7)
    x, w = torch.randn(1, 8, 11, 13), torch.randn(8, 2, 3, 3) * 0.2
    out, (oh, ow) = conv(ttnn, device, x, w, kernel_size=(3, 3), padding=(1, 2, 0, 1), dilation=(2, 1), groups=4,
                         flat=True, return_output_dim=True)
    ref = F.conv2d(F.pad(bf16(x), (0, 1, 1, 2)), bf16(w), dilation=(2, 1), groups=4)
    assert (oh, ow) == tuple(ref.shape[2:])
    assert torch.allclose(to_nchw(ttnn, out, 1, oh, ow), ref, rtol=2 ** -7, atol=2 ** -6)


def test_conv2d_fused_activation_and_memory_config(ttnn, device):
    x, w = torch.randn(1, 4, 8, 8), torch.randn(8, 4, 1, 1)
    cfg = ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat16, activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU))
    out = conv(ttnn, device, x, w, kernel_size=(1, 1), conv_config=cfg, memory_config=ttnn.L1_MEMORY_CONFIG,
               input_memory_config=ttnn.L1_MEMORY_CONFIG)
    assert out.memory_config() == ttnn.L1_MEMORY_CONFIG
    got = to_nchw(ttnn, out, 1, 8, 8)
    assert got.min() >= 0 and torch.allclose(got, torch.relu(F.conv2d(bf16(x), bf16(w))), rtol=2 ** -7, atol=1e-2)
    clip = ttnn.Conv2dConfig(activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.HARDTANH, 0.0, 6.0))
    assert to_nchw(ttnn, conv(ttnn, device, x * 10, w, kernel_size=(1, 1), conv_config=clip), 1, 8, 8).max() <= 6
    relu6 = ttnn.Conv2dConfig(activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU6))
    assert to_nchw(ttnn, conv(ttnn, device, x * 10, w, kernel_size=(1, 1), conv_config=relu6), 1, 8, 8).max() <= 6
    with pytest.raises(TypeError, match="UnaryWithParam"):
        ttnn.Conv2dConfig(activation="relu")


def test_conv2d_from_a_dram_input_writes_tile_dram_whatever_memory_config_says(ttnn, device):
    """Real ttnn's DRAM slicing path (docs/ttnn-facts.md section 4): L1 memory_config and a ROW_MAJOR output
    layout are ignored for a DRAM input."""
    x, w = torch.randn(1, 4, 8, 8), torch.randn(8, 4, 1, 1)
    cfg = ttnn.Conv2dConfig(output_layout=ttnn.ROW_MAJOR_LAYOUT)
    out = conv(ttnn, device, x, w, kernel_size=(1, 1), conv_config=cfg, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert out.memory_config() == ttnn.DRAM_MEMORY_CONFIG and out.layout == ttnn.TILE_LAYOUT


def test_conv2d_on_the_all_in_l1_path_writes_where_memory_config_says(ttnn, device):
    """slice_config=Conv2dL1FullSliceConfig: from a DRAM input too, L1 interleaved or height-sharded
    (tools/ttnn_mock/probes/results/conv_l1_out.txt)."""
    x, w = torch.randn(1, 4, 8, 8), torch.randn(8, 4, 1, 1)
    out = conv(ttnn, device, x, w, kernel_size=(1, 1), memory_config=ttnn.L1_MEMORY_CONFIG,
               slice_config=ttnn.Conv2dL1FullSliceConfig)
    assert out.memory_config() == ttnn.L1_MEMORY_CONFIG and out.layout == ttnn.TILE_LAYOUT
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))})
    sharded = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
                                ttnn.ShardSpec(grid, [32, 32], ttnn.ShardOrientation.ROW_MAJOR))
    out = conv(ttnn, device, x, w, kernel_size=(1, 1), memory_config=sharded,
               slice_config=ttnn.Conv2dL1FullSliceConfig)
    assert out.memory_config().memory_layout == ttnn.TensorMemoryLayout.HEIGHT_SHARDED
    expected = torch.nn.functional.conv2d(bf16(x), bf16(w)).permute(0, 2, 3, 1).reshape(1, 1, 64, 8)
    assert torch.allclose(ttnn.to_torch(out).float(), expected, atol=0.1, rtol=0.05)


def test_conv2d_validates_shapes(ttnn, device):
    x, w = torch.randn(1, 4, 8, 8), torch.randn(8, 3, 3, 3)
    with pytest.raises(RuntimeError, match="weight_tensor shape"):
        conv(ttnn, device, x, w, kernel_size=(3, 3))
    with pytest.raises(RuntimeError, match="does not match batch_size"):
        ttnn.conv2d(input_tensor=nhwc_input(ttnn, device, x), weight_tensor=ttnn.from_torch(torch.randn(8, 4, 3, 3)),
                    in_channels=4, out_channels=8, device=device, batch_size=2, input_height=8, input_width=8,
                    kernel_size=(3, 3))


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


@pytest.mark.parametrize("stride,padding,output_padding,groups", [((2, 2), (1, 1), (1, 1), 1),
                                                                  ((3, 2), (0, 1, 1, 0), (0, 0), 1),
                                                                  ((1, 1), (0, 0), (0, 0), 2)])
def test_conv_transpose2d_matches_torch(ttnn, device, stride, padding, output_padding, groups):
    torch.manual_seed(9)
    x, w, b = torch.randn(2, 4, 5, 6), torch.randn(4, 6 // groups, 3, 3) * 0.2, torch.randn(6)
    xin = ttnn.from_torch(x.permute(0, 2, 3, 1), dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    out, (oh, ow) = ttnn.conv_transpose2d(
        input_tensor=xin, weight_tensor=ttnn.from_torch(w, dtype=ttnn.float32),
        bias_tensor=ttnn.from_torch(b.reshape(1, 1, 1, 6), dtype=ttnn.float32), device=device, in_channels=4,
        out_channels=6, batch_size=2, input_height=5, input_width=6, kernel_size=(3, 3), stride=stride,
        padding=padding, output_padding=output_padding, groups=groups, return_output_dim=True)
    top, bottom, left, right = padding * 2 if len(padding) == 2 else padding
    full = F.conv_transpose2d(x, w, None, stride, 0, 0, groups)
    full = F.pad(full, (0, output_padding[1], 0, output_padding[0]))
    ref = full[:, :, top:full.shape[2] - bottom, left:full.shape[3] - right] + b.reshape(1, 6, 1, 1)
    assert (oh, ow) == tuple(ref.shape[2:]) and out.layout is ttnn.TILE_LAYOUT
    assert torch.allclose(to_nchw(ttnn, out, 2, oh, ow), ref, atol=1e-5)
    if padding == (1, 1):  # symmetric padding is torch's padding
        sym = F.conv_transpose2d(x, w, b, stride, 1, output_padding, groups)
        assert torch.allclose(to_nchw(ttnn, out, 2, oh, ow), sym, atol=1e-5)


# --- upsample (resize block) -------------------------------------------------------------------------------------

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
