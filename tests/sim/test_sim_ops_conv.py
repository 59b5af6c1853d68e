"""conv2d and conv_transpose2d (onnx2ttnn/sim/ops_conv.py) on NHWC tensors against torch."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from onnx2ttnn.sim import runtime
from tests.sim._nhwc import bf16, conv, nhwc_input, to_nchw


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
