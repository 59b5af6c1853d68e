"""Rounding of op results to a ttnn dtype, including bfloat8_b block floating point.

Every simulated op computes in float32 (or int64 for integer dtypes) and stores its result through
`to_storage`, so each result carries exactly the precision the dtype has on the device.

BFLOAT8_B / BFLOAT4_B scheme (as tt-metal's host packer `convert_u32_to_bfp` / `pack_fp32_vec_as_bfp_tiles`,
tt_metal/impl/data_format/blockfloat_common.cpp):
  * a tile is 32x32 and made of four 16x16 faces; each face row (16 consecutive values along the last
    dim, starting at a column that is a multiple of 16) shares one 8-bit exponent.  In logical terms the
    groups are simply columns [16k, 16k+16) of every row; tile padding is zeros and never raises a
    group's exponent, so the grouping needs no physical padding.
  * shared exponent E = max over the group of floor(log2|x|) (the fp32 exponent field; zeros ignored).
  * each value keeps a sign and a W-bit magnitude m (the hidden bit explicit; W = 7 for bfloat8_b, 3 for
    bfloat4_b), value = +-m * 2**(E+1-W).  The packer first shifts the value's 24-bit mantissa (hidden bit
    included) right by E - e (its own exponent e; the bits shifted out are dropped), then rounds the top W
    bits half-to-even on the remaining low bits and saturates at 2**W - 1.  So values more than W binades
    below E flush to zero, and a value whose only excess over a tie lay in the dropped bits rounds as a tie.
  * the stored values have at most 7 significant bits, so the simulator keeps them in torch.bfloat16.
"""
from __future__ import annotations

import torch

from ._types import BLOCK_FLOAT_BITS, DataType, FACE, STORAGE_DTYPE

_INT_WRAP = {DataType.UINT32: 1 << 32, DataType.UINT16: 1 << 16, DataType.UINT8: 1 << 8}


def bfp_round(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Round float values to a block float of `bits`-bit magnitudes (one shared exponent per 16 values along
    the last dim): 7 for bfloat8_b, 3 for bfloat4_b."""
    if x.dim() == 0:
        return bfp_round(x.reshape(1), bits).reshape(())
    x = x.float()
    width = x.shape[-1]
    pad = (-width) % FACE
    if pad:
        x = torch.nn.functional.pad(x, (0, pad))
    groups = x.reshape(*x.shape[:-1], -1, FACE)
    _, exp = torch.frexp(groups)  # |x| = mant * 2**exp, mant in [0.5, 1)  =>  floor(log2|x|) = exp - 1
    exp = exp.masked_fill_(groups == 0, -1000)
    shared = exp.amax(dim=-1, keepdim=True) - 1  # E
    shared = shared.masked_fill_(shared < -200, 0)  # all-zero group
    # the mantissa aligned to E with its dropped bits gone: an integer count of 2**(E-23), exact in float64
    aligned = torch.floor(groups.abs().double() * torch.exp2((23 - shared).double()))
    step = torch.exp2((shared + 1 - bits).double())  # value of one magnitude unit
    mag = (aligned / 2.0 ** (24 - bits)).round_().clamp_(max=2.0 ** bits - 1)
    out = (mag * step).float().copysign_(groups).masked_fill_(mag == 0, 0.0)
    out = out.reshape(x.shape)
    if pad:
        out = out[..., :width]
    return out


def bfp8_round(x: torch.Tensor) -> torch.Tensor:
    """Round float values to bfloat8_b (7-bit magnitudes)."""
    return bfp_round(x, 7)


def bfp4_round(x: torch.Tensor) -> torch.Tensor:
    """Round float values to bfloat4_b (3-bit magnitudes)."""
    return bfp_round(x, 3)


def to_storage(data: torch.Tensor, dtype: DataType) -> torch.Tensor:
    """Round `data` to `dtype` and return it in the torch dtype the simulator stores that dtype in."""
    target = STORAGE_DTYPE[dtype]
    if dtype in BLOCK_FLOAT_BITS:
        return bfp_round(data, BLOCK_FLOAT_BITS[dtype]).to(torch.bfloat16)
    if dtype in (DataType.BFLOAT16, DataType.FLOAT32):
        return data if data.dtype is target else data.to(target)
    # integer dtypes: truncate floats toward zero, then wrap modulo the type's range
    if data.is_floating_point():
        data = torch.nan_to_num(data).trunc()
    data = data.to(torch.int64)
    if dtype is DataType.INT32:
        return data.to(torch.int32)
    return torch.remainder(data, _INT_WRAP[dtype]).to(target)


def compute_view(storage: torch.Tensor) -> torch.Tensor:
    """The values of a stored tensor in the type ops compute in: float32 for floats, int64 for integers."""
    if storage.is_floating_point():
        return storage if storage.dtype is torch.float32 else storage.float()
    return storage if storage.dtype is torch.int64 else storage.to(torch.int64)


def round_scalar(value, dtype: DataType):
    """A Python scalar operand as the device sees it for a tensor of `dtype` (bf16 scalars are rounded)."""
    if dtype in (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.BFLOAT4_B):
        return float(torch.tensor(float(value)).to(torch.bfloat16))
    if dtype is DataType.FLOAT32:
        return float(torch.tensor(float(value), dtype=torch.float32))
    return value
