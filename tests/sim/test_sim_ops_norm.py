"""softmax, layer_norm, rms_norm and reductions (onnx2ttnn/sim/ops_norm.py)."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F


def dev(ttnn, device, data, dtype=None, layout=None, mc=None):
    return ttnn.from_torch(data, dtype=dtype or ttnn.bfloat16, layout=layout or ttnn.TILE_LAYOUT, device=device,
                           memory_config=mc)


def bf16(x):
    return x.to(torch.bfloat16).float()


@pytest.mark.parametrize("dim", [-1, 1])
def test_softmax(ttnn, device, dim):
    x = torch.randn(1, 12, 50, 70) * 3
    out = ttnn.softmax(dev(ttnn, device, x), dim=dim, numeric_stable=True)
    assert torch.equal(ttnn.to_torch(out).float(), bf16(torch.softmax(bf16(x), dim=dim)))


def test_softmax_needs_tile(ttnn, device):
    with pytest.raises(RuntimeError, match="TILE layout"):
        ttnn.softmax(dev(ttnn, device, torch.randn(32, 32), layout=ttnn.ROW_MAJOR_LAYOUT))


def test_layer_norm_weight_forms(ttnn, device):
    x, g, b = torch.randn(1, 50, 768), torch.randn(768), torch.randn(768)
    t = dev(ttnn, device, x)
    ref = bf16(F.layer_norm(bf16(x), (768,), bf16(g), bf16(b), 1e-12))
    for gw, bw in [(dev(ttnn, device, g), dev(ttnn, device, b)),
                   (dev(ttnn, device, g.reshape(1, 768)), dev(ttnn, device, b.reshape(1, 768))),
                   (dev(ttnn, device, g.reshape(24, 32), layout=ttnn.ROW_MAJOR_LAYOUT),
                    dev(ttnn, device, b.reshape(24, 32), layout=ttnn.ROW_MAJOR_LAYOUT))]:
        out = ttnn.layer_norm(t, epsilon=1e-12, weight=gw, bias=bw)
        assert torch.equal(ttnn.to_torch(out).float(), ref)
    with pytest.raises(RuntimeError, match="does not fit an input of width 768"):
        ttnn.layer_norm(t, weight=dev(ttnn, device, g.reshape(768, 1), layout=ttnn.ROW_MAJOR_LAYOUT))


def test_layer_norm_residual_and_rms_norm(ttnn, device):
    x, r, g = torch.randn(2, 40, 64), torch.randn(2, 40, 64), torch.randn(64)
    tx, tr, tg = dev(ttnn, device, x), dev(ttnn, device, r), dev(ttnn, device, g)
    out = ttnn.layer_norm(tx, epsilon=1e-5, residual_input_tensor=tr)
    assert torch.equal(ttnn.to_torch(out).float(), bf16(F.layer_norm(bf16(x) + bf16(r), (64,), eps=1e-5)))
    rms = ttnn.rms_norm(tx, epsilon=1e-6, weight=tg)
    xr = bf16(x)
    ref = xr * torch.rsqrt(xr.pow(2).mean(-1, keepdim=True) + 1e-6) * bf16(g)
    assert torch.allclose(ttnn.to_torch(rms).float(), bf16(ref), rtol=2 ** -8, atol=1e-6)


def test_layer_norm_refuses_height_sharded_inputs(ttnn, device):
    x = dev(ttnn, device, torch.randn(1, 1, 256, 64))
    hs = ttnn.create_sharded_memory_config((1, 1, 256, 64), ttnn.CoreGrid(y=1, x=8), ttnn.ShardStrategy.HEIGHT)
    with pytest.raises(RuntimeError, match="height-sharded"):
        ttnn.layer_norm(ttnn.to_memory_config(x, hs))


@pytest.mark.parametrize("name,fn", [("sum", torch.sum), ("mean", torch.mean),
                                     ("max", torch.amax), ("min", torch.amin)])
def test_reductions(ttnn, device, name, fn):
    x = torch.randn(1, 50, 70)
    t = dev(ttnn, device, x)
    out = getattr(ttnn, name)(t, dim=-1, keepdim=True)
    assert tuple(out.shape) == (1, 50, 1) and tuple(out.padded_shape) == (1, 64, 32)
    assert torch.equal(ttnn.to_torch(out).float(), bf16(fn(bf16(x), dim=-1, keepdim=True)))
    out = getattr(ttnn, name)(t, dim=1)
    assert tuple(out.shape) == (1, 70) and tuple(out.padded_shape) == (32, 96)
    assert torch.equal(ttnn.to_torch(out).float(), bf16(fn(bf16(x), dim=1)))


def test_argmax(ttnn, device):
    x = torch.randn(1, 4, 70)
    out = ttnn.argmax(dev(ttnn, device, x, layout=ttnn.ROW_MAJOR_LAYOUT), dim=-1)
    assert out.dtype is ttnn.uint32 and ttnn.to_torch(out).tolist() == bf16(x).argmax(-1).tolist()
