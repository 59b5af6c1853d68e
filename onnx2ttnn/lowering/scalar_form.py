"""Scaling by a constant: multiply by s or divide by 1/s, whichever scalar the device holds more exactly.

A Python scalar beside a bfloat16 tensor is a bfloat16 value on the device (docs/ttnn-facts.md, open question
6; the simulator rounds it so): 8 significant bits, a relative error up to 2^-9 = 0.2 % in the factor. That error
is not noise: every element is scaled by the same wrong factor. `x / 6` written as `multiply(x, 1/6)` scales by
bf16(1/6) = 0.16699, 0.195 % too much, in every hardswish of a Paddle model (x * relu6(x + 3) / 6); 73 of them
in SLANet's backbone compound into a 1-2.6 % gain and per-channel offsets after the folded batch norms, which
turn a table decoder's greedy token (docs/design.md §6.42). `divide(x, 6.0)` holds its scalar exactly and
divides in the SFPU's float32 (div_binary_tile, ttnn-facts §41): the only error left is the result's rounding.

So a float scaling of a bfloat16 program is a division, divide(x, 1/s), when bfloat16 holds the divisor 1/s
(to within EXACT: float32's 1/6 as a Mul constant, 0.16666667, has the divisor 6.0) and not the factor s;
otherwise a multiplication (a cheaper kernel, and the only one an epilogue can fuse): a power of two is exact
either way, and where neither is exact (BERT's mask bias, x * -10000: bf16 holds -9984) the division would
trade one rounded scalar for another. A float32 program holds either scalar to 2^-24: it keeps what the model
wrote as a multiplication (a division by c as a multiplication by 1/c, as before).
Before (bf16): `y = multiply(x, 0.16666666666666666)`; after: `y = divide(x, 6.0)`.
"""
from __future__ import annotations

import math

import ml_dtypes  # numpy's bfloat16 (onnx needs it, so it is installed)
import numpy as np

EXACT = 2.0 ** -20  # a factor error this small is float32's rounding of the model's constant, not bfloat16's


def bf16(value: float) -> float:
    """`value` rounded to the nearest bfloat16 (ties to even), as the device holds a bf16 tensor's scalar."""
    with np.errstate(over="ignore"):  # beyond bfloat16's range: inf, as on the device
        return float(np.float32(value).astype(ml_dtypes.bfloat16).astype(np.float32))


def factor_error(factor: float, op: str, scalar: float) -> float:
    """The relative error of the factor `op(x, bf16(scalar))` scales x by, against `factor`."""
    held = bf16(scalar)
    got = held if op == "multiply" else (1.0 / held if held != 0.0 else math.inf)
    return abs(got - factor) / abs(factor)


def scaling_form(op: str, scalar: float, dtype: str) -> tuple[str, float]:
    """The (ttnn op, scalar) that scales a `dtype` tensor ("bf16" | "fp32") by `op`'s factor most exactly:
    for a float `scalar` of multiply or divide, multiply(x, s) or divide(x, 1/s); anything else unchanged."""
    if op not in ("multiply", "divide") or not isinstance(scalar, float) or scalar == 0.0 \
            or not math.isfinite(scalar):
        return op, scalar
    factor = scalar if op == "multiply" else 1.0 / scalar
    inverse = 1.0 / factor
    if dtype != "bf16" or not (math.isfinite(factor) and math.isfinite(inverse)) or factor == 0.0:
        return "multiply", factor
    if factor_error(factor, "divide", inverse) <= EXACT < factor_error(factor, "multiply", factor):
        return "divide", bf16(inverse)  # the divisor the device holds: 6.0 for float32's 0.16666667
    return "multiply", factor
