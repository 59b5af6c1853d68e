"""Rounding to ttnn dtypes (onnx2ttnn/sim/_rounding.py), through from_torch and directly."""
from __future__ import annotations

import torch

from onnx2ttnn.sim._rounding import bfp8_round, round_scalar, to_storage
from onnx2ttnn.sim._types import DataType


def test_bf16_is_torch_bfloat16_rounding(ttnn):
    x = torch.randn(3, 37) * 100
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16)
    out = ttnn.to_torch(t)
    assert out.dtype is torch.bfloat16
    assert torch.equal(out, x.to(torch.bfloat16))
    assert not torch.equal(out.float(), x)  # rounding really happened


def test_float32_keeps_values(ttnn):
    x = torch.randn(5, 7, dtype=torch.float64)
    out = ttnn.to_torch(ttnn.from_torch(x, dtype=ttnn.float32))
    assert out.dtype is torch.float32
    assert torch.equal(out, x.float())


def test_bfp8_exact_values_for_hand_made_block():
    # one block of 16: max |x| = 1.5 -> shared exponent 0, unit 2**-6
    row = torch.tensor([1.5, 1.0, 0.5, 0.015625, 0.0078125, 0.01171875, -0.75, 3 / 64] + [0.0] * 8)
    out = bfp8_round(row)
    expected = torch.tensor([1.5, 1.0, 0.5, 0.015625, 0.0, 0.015625, -0.75, 3 / 64] + [0.0] * 8)
    # 0.0078125 = half a unit -> ties to even (0); 0.01171875 = 0.75 unit -> 1 unit
    assert torch.equal(out, expected)


def test_bfp8_shared_exponent_per_16_values_along_last_dim():
    x = torch.full((2, 48), 0.001)
    x[0, 3] = 100.0  # big value only in group 0 of row 0
    out = bfp8_round(x)
    assert torch.all(out[0, :16][torch.arange(16) != 3] == 0)  # flushed: 0.001 << 100 * 2**-6
    assert torch.allclose(out[0, 16:], torch.full((32,), 0.001), rtol=1 / 64)  # other groups unaffected
    assert torch.allclose(out[1], torch.full((48,), 0.001), rtol=1 / 64)  # other rows unaffected
    assert out[0, 3] == 100.0


def test_bfp8_saturates_at_127_units():
    # 1.999 has exponent 0: 1.999 * 64 = 127.9 -> would round to 128, saturates at 127/64
    assert bfp8_round(torch.tensor([1.999])).item() == 127 / 64


def test_bfp8_error_bound_and_bf16_representable(ttnn):
    torch.manual_seed(0)
    x = torch.randn(64, 100)
    t = ttnn.from_torch(x, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT)
    out = ttnn.to_torch(t)
    assert out.dtype is torch.float32  # to_torch of bfloat8_b gives float32
    groups = torch.nn.functional.pad(x, (0, 12)).reshape(64, -1, 16)
    block_max = groups.abs().amax(-1, keepdim=True).expand_as(groups).reshape(64, -1)[:, :100]
    unit = torch.exp2(torch.floor(torch.log2(block_max)) - 6)
    err = (out - x).abs()
    assert torch.all(err <= unit / 2 + 1e-12)
    assert err.max() > 0  # not a no-op
    assert torch.equal(out.to(torch.bfloat16).float(), out)
    # fewer significant bits than bf16: the error is larger than bf16's on average
    assert err.mean() > (x.to(torch.bfloat16).float() - x).abs().mean()


def test_bfp8_needs_tile_layout(ttnn):
    import pytest
    with pytest.raises(RuntimeError, match="Layout must be Layout::TILE for bfloat8_b or bfloat4_b"):
        ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat8_b, layout=ttnn.ROW_MAJOR_LAYOUT)


def test_integer_types_wrap_and_truncate():
    x = torch.tensor([-1.7, 2.9, 70000.0, 300.0])
    assert to_storage(x, DataType.INT32).tolist() == [-1, 2, 70000, 300]
    assert to_storage(x, DataType.UINT16).tolist() == [65535, 2, 70000 - 65536, 300]
    assert to_storage(x, DataType.UINT8).tolist() == [255, 2, 70000 % 256, 300 - 256]
    assert to_storage(torch.tensor([-1]), DataType.UINT32).tolist() == [2**32 - 1]


def test_to_torch_integer_dtypes_follow_real_ttnn(ttnn):
    ids = torch.tensor([[0, 5, 2**31 + 3]], dtype=torch.int64)
    out = ttnn.to_torch(ttnn.from_torch(ids, dtype=ttnn.uint32))
    assert out.dtype is torch.int32  # real ttnn hands uint32 back as int32 (same bits)
    assert out.tolist() == [[0, 5, -(2**31) + 3]]
    assert ttnn.to_torch(ttnn.from_torch(torch.tensor([3, 4], dtype=torch.int32))).dtype is torch.int32


def test_scalars_are_rounded_to_the_tensor_dtype():
    assert round_scalar(0.1, DataType.BFLOAT16) == float(torch.tensor(0.1).bfloat16())
    assert round_scalar(0.1, DataType.FLOAT32) == float(torch.tensor(0.1, dtype=torch.float32))
    assert round_scalar(7, DataType.INT32) == 7
