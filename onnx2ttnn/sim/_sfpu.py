"""The arithmetic of the SFPU kernels behind ttnn's unary ops where their accuracy variants differ (sigmoid,
exp), re-implemented in torch from the kernel sources the ttnn 0.81.1 wheel ships and JIT-compiles
(`tt_metal/hw/ckernels/wormhole_b0/metal/llk_api/llk_sfpu/`: ckernel_sfpu_sigmoid.h,
ckernel_sfpu_sigmoid_appx.h, ckernel_sfpu_exp.h, ckernel_sfpu_recip.h; the SFPLUT semantics from Tenstorrent's
ISA documentation: the piece by |x| < 1, < 2, else; the input's sign kept).  Which kernel a call compiles to
(template flags, fp32 dest) was read from the generated defines on the mock device:
tools/ttnn_mock/probes/probe_unary_modes.py, docs/ttnn-facts.md §16.

Every function takes and returns float32 torch tensors; the caller rounds to the output dtype.  The register
arithmetic is float32 (SFPMAD's partial fusing is not modelled).  Kernels that are accurate to about one
unit of their output format (the float32-dest paths, gelu's accurate and tanh forms) are modelled as the
exact function, rounded once, and are not here.
"""
from __future__ import annotations

import torch

_ONE_LN2 = 1.4426950216293334961  # the kernels' 1/ln2 (float32)
_EXP21F = (1.0017248, 7.839635491371155e-08, 4.791750143340323e-15)  # 2**f on [0, 1), f scaled by 2**23
_RECIP_SEED = (0.3232325017452239990234375, 1.4545459747314453125, 2.121212482452392578125)  # k0, k1, k2
_SCHRAUDOLPH_A = 256.0 * 1.4426950408889634  # 2**8 / ln2
_SCHRAUDOLPH_B = 32500.818359375  # 127 * 2**8 minus the error-balancing shift
_SIGMOID_LUT = ((0.2265625, 0.0), (0.265625, -0.046875), (0.0, 0.5))  # (slope, offset) on |x| in [0,1) [1,2) [2,inf)


def _f32(value: float) -> torch.Tensor:
    return torch.tensor(value, dtype=torch.float32)


def bf16_truncate(x: torch.Tensor) -> torch.Tensor:
    """float32 -> bfloat16 by dropping the low 16 bits (what an SFPSTORE to a bfloat16 dest does)."""
    bits = x.contiguous().view(torch.int32) & ~0xFFFF
    return bits.view(torch.float32)


def bf16_nearest(x: torch.Tensor) -> torch.Tensor:
    """float32 -> bfloat16, round to nearest even (the kernels' explicit convert before the store)."""
    return x.to(torch.bfloat16).float()


def exp_21f(x: torch.Tensor) -> torch.Tensor:
    """exp(x) as the bfloat16 kernels compute it (Moroz et al.'s exp_21f): z = x/ln2 + 127 clamped to
    [0, 255], its integer part becomes the exponent and a quadratic in its fraction the mantissa."""
    z = (x.float() * _f32(_ONE_LN2) + _f32(127.0)).clamp(0.0, 255.0)
    fixed = torch.floor(z.double() * 2.0 ** 23).to(torch.int64)  # exact: z has 24 significant bits
    exponent, fraction = fixed >> 23, (fixed & ((1 << 23) - 1)).float()
    c0, c1, c2 = (_f32(c) for c in _EXP21F)
    mantissa = c0 + fraction * (c1 + fraction * c2)  # in [1, 2)
    out = torch.ldexp(mantissa, (exponent - 127).to(torch.int32)).float()
    out = torch.where(exponent == 0, torch.zeros_like(out), out)  # exponent field 0: flushed to zero
    return torch.where(exponent >= 255, torch.full_like(out, float("inf")), out)


def exp_schraudolph(x: torch.Tensor) -> torch.Tensor:
    """exp(x) of the fast and approximate kernel (Schraudolph): round(2**8/ln2 * max(x, -88.5) + B) as an
    unsigned 16-bit integer, shifted left 15 bits and read as a float32 (8 mantissa bits, linear in each
    binade; about 4 % relative error at worst)."""
    t = _f32(_SCHRAUDOLPH_A) * x.float().clamp(min=-88.5) + _f32(_SCHRAUDOLPH_B)
    integer = torch.round(t).clamp(0, 65535).to(torch.int64)
    bits = (integer << 15).to(torch.int64)
    bits = torch.where(bits >= 0x7F800000, torch.full_like(bits, 0x7F800000), bits)  # past 2**128: inf
    return bits.to(torch.int32).view(torch.float32)


def reciprocal_newton(x: torch.Tensor, steps: int) -> torch.Tensor:
    """1/x as sfpu_reciprocal_iter: a quadratic seed on the mantissa m in [1, 2), then `steps` Newton steps,
    scaled back by the exponent (positive x, as a sigmoid's denominator is).  The kernel scales by 2**(255 -
    exponent field): an infinite x (exp of a very negative input overflowed) gives 0, a zero x infinity."""
    x = x.float()
    mantissa, exponent = torch.frexp(x)  # x = mantissa * 2**exponent, mantissa in [0.5, 1)
    m = mantissa * 2.0
    k0, k1, k2 = (_f32(c) for c in _RECIP_SEED)
    y = k2 + (k1 + k0 * -m) * -m
    for _ in range(steps):
        t = _f32(1.0) + -m * y
        y = y + y * t
    out = torch.ldexp(y, (1 - exponent).to(torch.int32)).float()
    field = (x.contiguous().view(torch.int32) >> 23) & 0xFF
    out = torch.where(field == 255, torch.zeros_like(out), out)
    return torch.where(field == 0, torch.full_like(out, float("inf")), out)


def sigmoid_accurate(x: torch.Tensor, fp32_dest: bool) -> torch.Tensor:
    """sigmoid(x) = 1 / (1 + exp(-x)), the accurate kernel.  bfloat16 dest: exp_21f, one Newton step, round to
    nearest bfloat16.  float32 dest: the float32 exp and two Newton steps (faithful float32; modelled exact)."""
    if fp32_dest:
        return torch.sigmoid(x.float())
    return bf16_nearest(reciprocal_newton(_f32(1.0) + exp_21f(-x.float()), 1))


def sigmoid_lut(x: torch.Tensor, fp32_dest: bool) -> torch.Tensor:
    """sigmoid(x) of the fast and approximate kernel: 0.5 + sign(x) * (a |x| + b), three linear pieces on
    |x| < 1, < 2 and beyond (0 and 1 from |x| >= 2 on); a bfloat16 dest truncates the float32 result."""
    a = x.float().abs()
    piece = torch.zeros_like(a)
    for index, (slope, offset) in enumerate(_SIGMOID_LUT):
        lo, hi = float(index), (float(index + 1) if index < 2 else float("inf"))
        inside = (a >= lo) & (a < hi)
        piece = torch.where(inside, _f32(slope) * a + _f32(offset), piece)
    out = _f32(0.5) + torch.copysign(piece, x.float())
    return out if fp32_dest else bf16_truncate(out)


def sigmoid_fast_exp(x: torch.Tensor, fp32_dest: bool) -> torch.Tensor:
    """sigmoid(x) of mode AccurateWithFastExp, the chain negative, exp (Schraudolph), add 1, reciprocal; each
    step's result is stored in the dest (a bfloat16 store truncates; the reciprocal rounds to nearest)."""
    store = (lambda v: v) if fp32_dest else bf16_truncate  # noqa: E731
    denominator = store(store(exp_schraudolph(-x.float())) + _f32(1.0))
    out = reciprocal_newton(denominator, 2 if fp32_dest else 1)
    return out if fp32_dest else bf16_nearest(out)


def exp_kernel(x: torch.Tensor, approximate: bool, fp32_dest: bool) -> torch.Tensor:
    """ttnn.exp: the accurate bfloat16 kernel is exp_21f rounded to nearest; the float32 one is modelled
    exact; the approximate one is Schraudolph's (truncated by a bfloat16 store)."""
    if approximate:
        out = exp_schraudolph(x)
        return out if fp32_dest else bf16_truncate(out)
    if fp32_dest:
        return torch.exp(x.float())
    return bf16_nearest(exp_21f(x))
