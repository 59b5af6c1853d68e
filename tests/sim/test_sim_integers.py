"""int32 tensors on the simulator: exact integer arithmetic (no bfloat16 rounding) and the int32 facts real ttnn
showed on the mock (tools/ttnn_mock/probes/probe_integers.py, results/integers.txt)."""
from __future__ import annotations

import pytest
import torch

BIG = torch.tensor([[1001, 2001, 3001, 40001], [-70001, 123457, -2**30, 2**31 - 2]], dtype=torch.int64)


def ints(ttnn, device, data, layout=None, dtype=None):
    return ttnn.from_torch(data, dtype=dtype or ttnn.int32, layout=layout or ttnn.TILE_LAYOUT, device=device)


@pytest.mark.parametrize("layout", ["TILE_LAYOUT", "ROW_MAJOR_LAYOUT"])
def test_int32_arithmetic_is_exact(ttnn, device, layout):
    a = ints(ttnn, device, BIG, getattr(ttnn, layout))
    one = ints(ttnn, device, torch.ones_like(BIG), getattr(ttnn, layout))
    assert ttnn.to_torch(ttnn.add(a, 1)).tolist() == (BIG + 1).tolist()  # bf16 would give 40064 for 40002
    assert ttnn.to_torch(ttnn.subtract(a, one)).tolist() == (BIG - 1).tolist()
    assert ttnn.to_torch(ttnn.multiply(a, 1)).tolist() == BIG.tolist()
    assert ttnn.add(a, one).dtype == ttnn.int32
    assert ttnn.to_torch(ttnn.maximum(a, 2001)).tolist() == torch.maximum(BIG, torch.tensor(2001)).tolist()


def test_int32_divide_truncates_with_rounding_mode_and_is_float32_without(ttnn, device):
    a = ints(ttnn, device, torch.tensor([7, -7, 9, -1]))
    b = ints(ttnn, device, torch.tensor([2, 2, -4, 3]))
    q = ttnn.divide(a, b, rounding_mode="trunc")
    assert q.dtype == ttnn.int32 and ttnn.to_torch(q).tolist() == [3, -3, -2, 0]
    assert ttnn.divide(a, b).dtype == ttnn.float32


def test_int32_clip_gives_float32_clamp_keeps_int32(ttnn, device):
    a = ints(ttnn, device, BIG)
    assert ttnn.clip(a, -5, 3000).dtype == ttnn.float32
    c = ttnn.clamp(a, min=-5, max=3000)
    assert c.dtype == ttnn.int32 and ttnn.to_torch(c).tolist() == BIG.clamp(-5, 3000).tolist()


def test_int32_pow_takes_a_non_negative_integer_scalar_in_tile_only(ttnn, device):
    a = ints(ttnn, device, torch.tensor([3, -5, 1290]))
    p = ttnn.pow(a, 2)
    assert p.dtype == ttnn.int32 and ttnn.to_torch(p).tolist() == [9, 25, 1664100]
    with pytest.raises(RuntimeError, match="TILE"):
        ttnn.pow(ints(ttnn, device, torch.tensor([3]), ttnn.ROW_MAJOR_LAYOUT), 2)
    with pytest.raises(RuntimeError, match="scalar exponent"):
        ttnn.pow(a, a)


def test_int32_and_uint32_do_not_mix_and_where_takes_int32_values_as_tensors(ttnn, device):
    a = ints(ttnn, device, torch.tensor([1, 2, 3]))
    u = ints(ttnn, device, torch.tensor([1, 2, 3]), dtype=ttnn.uint32)
    with pytest.raises(RuntimeError, match="Mixed dtype"):
        ttnn.add(a, u)
    f = ttnn.from_torch(torch.tensor([1.0, 2.0, 3.0]), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    for x, y in ((f, a), (a, f)):  # nor an int32 beside a float (seen on the real mock: ddddocr_int8)
        with pytest.raises(RuntimeError, match="Mixed dtype"):
            ttnn.add(x, y)
    cond = ttnn.gt(ttnn.from_torch(torch.tensor([1.0, -1.0, 2.0]), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                                   device=device), 0.0)
    with pytest.raises(RuntimeError, match="Mixed dtype"):
        ttnn.where(cond, a, 0)
    w = ttnn.where(cond, a, ints(ttnn, device, torch.tensor([40001, 40002, 40003])))
    assert w.dtype == ttnn.int32 and ttnn.to_torch(w).tolist() == [1, 40002, 3]


def test_int32_neg_abs_keep_int32(ttnn, device):
    a = ints(ttnn, device, BIG)
    assert ttnn.to_torch(ttnn.neg(a)).tolist() == (-BIG).tolist()
    assert ttnn.to_torch(ttnn.abs(a)).tolist() == BIG.abs().tolist()
