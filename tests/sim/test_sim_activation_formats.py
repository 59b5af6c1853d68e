"""bfloat8_b activations (--activations, docs/ttnn-facts.md §30 and §38): a linear asked for dtype=bfloat8_b
rounds its result as tt-metal packs a bfloat8_b tile (sim/_rounding.py), the next linear reads those values and
returns the dtype it is asked for, else its activation's; a converted chain under bfp8 carries that error."""
from __future__ import annotations

import torch

from onnx2ttnn.sim._rounding import bfp8_round
from onnx2ttnn.verify import verify
from tests.passes.test_choose_activation_formats import _chain


def dev(ttnn, device, data, dtype=None):
    return ttnn.from_torch(data, dtype=dtype or ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)


def test_linear_writes_bfloat8_b_and_the_next_reads_it(ttnn, device):
    torch.manual_seed(0)
    x, w1, w2 = torch.randn(64, 128), torch.randn(128, 256) / 11, torch.randn(256, 64) / 16
    h = ttnn.linear(dev(ttnn, device, x), dev(ttnn, device, w1), dtype=ttnn.bfloat8_b)
    assert h.dtype == ttnn.bfloat8_b and h.layout is ttnn.TILE_LAYOUT
    got = ttnn.to_torch(h).float()
    ref = x.to(torch.bfloat16).float() @ w1.to(torch.bfloat16).float()
    assert torch.equal(bfp8_round(got), got)  # bfloat8_b values: 7-bit magnitudes under a shared exponent
    assert torch.equal(got, bfp8_round(ref)) or (got != bfp8_round(ref)).float().mean() < 0.01  # summation order
    assert (got != ref.to(torch.bfloat16).float()).float().mean() > 0.1  # coarser than a bf16 result
    y = ttnn.linear(h, dev(ttnn, device, w2), dtype=ttnn.bfloat16)
    assert y.dtype == ttnn.bfloat16
    want = got @ w2.to(torch.bfloat16).float()
    assert torch.allclose(ttnn.to_torch(y).float(), want, rtol=1e-2, atol=1e-2)
    assert ttnn.linear(h, dev(ttnn, device, w2)).dtype == ttnn.bfloat8_b  # no dtype=: the activation's dtype


def test_a_bfp8_program_carries_bfloat8_b_rounding_and_verifies():
    model = _chain([64, 256, 256, 64])
    reports = {fmt: verify(model, activations=fmt, weights="bf16") for fmt in ("bf16", "bfp8")}
    assert all(r.passed for r in reports.values())
    pcc = {fmt: min(o.pcc for o in r.outputs) for fmt, r in reports.items()}
    assert 0.99 <= pcc["bfp8"] < pcc["bf16"]
