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


# --- prod / argmax / topk / cumsum (API docs' support tables) ---------------------------------------------

def test_prod_one_dim_and_full(ttnn, device):
    x = torch.rand(3, 4, 5) + 0.5
    t = dev(ttnn, device, x, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn.prod(t, dim=1, keepdim=True)
    assert tuple(out.shape) == (3, 1, 5) and out.layout is ttnn.TILE_LAYOUT
    assert torch.allclose(ttnn.to_torch(out), x.prod(dim=1, keepdim=True))
    assert torch.allclose(ttnn.to_torch(ttnn.prod(t)), x.prod().reshape(1))
    with pytest.raises(RuntimeError, match="keepdim=True is not supported for a full product"):
        ttnn.prod(t, keepdim=True)


def test_argmax_constraints(ttnn, device):
    x = torch.tensor([[1.0, 5.0, 5.0, 2.0], [7.0, 0.0, 7.0, 1.0]])
    out = ttnn.argmax(dev(ttnn, device, x), dim=1, keepdim=True)
    assert out.dtype is ttnn.uint32 and out.layout is ttnn.ROW_MAJOR_LAYOUT
    assert ttnn.to_torch(out).reshape(-1).tolist() == [1, 0]  # first of equal maxima
    with pytest.raises(RuntimeError, match="dim=None.*ROW_MAJOR"):
        ttnn.argmax(dev(ttnn, device, x))
    ints = dev(ttnn, device, x.int(), dtype=ttnn.int32)
    with pytest.raises(RuntimeError, match="integer inputs"):
        ttnn.argmax(ints, dim=0)


def test_topk_values_indices_and_index_dtype(ttnn, device):
    x = torch.tensor([[3.0, 1.0, 3.0, 2.0, 0.5]])
    for dtype, index_dtype in ((ttnn.bfloat16, ttnn.uint16), (ttnn.float32, ttnn.uint32)):
        v, i = ttnn.topk(dev(ttnn, device, x, dtype=dtype), k=3, dim=-1, largest=True, sorted=True)
        assert ttnn.to_torch(v).float().tolist() == [[3.0, 3.0, 2.0]]
        assert ttnn.to_torch(i).tolist() == [[0, 2, 3]] and i.dtype is index_dtype
    v, _ = ttnn.topk(dev(ttnn, device, x), k=2, dim=-1, largest=False)
    assert ttnn.to_torch(v).float().tolist() == [[0.5, 1.0]]
    with pytest.raises(RuntimeError, match="TILE layout"):
        ttnn.topk(dev(ttnn, device, x, layout=ttnn.ROW_MAJOR_LAYOUT), k=1)


def test_cumsum_forward_reverse_and_layout(ttnn, device):
    x = torch.randn(3, 6)
    t = dev(ttnn, device, x, dtype=ttnn.float32)
    assert torch.allclose(ttnn.to_torch(ttnn.cumsum(t, 1)), x.cumsum(1), atol=1e-6)
    rev = ttnn.to_torch(ttnn.cumsum(t, 0, reverse_order=True))
    assert torch.allclose(rev, x.flip(0).cumsum(0).flip(0), atol=1e-6)
    with pytest.raises(RuntimeError, match="TILE layout"):
        ttnn.cumsum(dev(ttnn, device, x, layout=ttnn.ROW_MAJOR_LAYOUT), 0)
