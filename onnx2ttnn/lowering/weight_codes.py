"""A dequantized linear weight uploaded as its integer codes, its scale applied to the linear's output.

A QDQ model's linear weight is `W = k * s`: int8 codes k, one scale per output channel (or per tensor).
Folded into W and uploaded as bfloat8_b, W is rounded: bfloat8_b shares one exponent per 16 values along the
last dim, the output channels, whose scales differ, so a channel of small scale next to one of large scale
keeps few bits (docs/design.md §6.34).  The codes themselves are exact in bfloat8_b: |k| <= 127 has at most 7
significant bits, which the 7-bit magnitudes under the group's shared exponent hold (128 would need a step of
2).  So the linear is `(x @ k + b / s) * s`: the weight carries no rounding, the bias is divided by the scale
on the host (float32) and the scale is one multiply by a [1, N] row (a number when per tensor) after it.
A QDQ conv's weight the same way in a float32 program (conv_codes: float32 codes, the scale a [1, OC] row after).
Not in a tensor-parallel program (Module.tp > 1): split-tensor-parallel pairs linears that read each other
directly, and the scale's multiply between them hides the pair (the model would be refused); its linears keep
the folded weight (docs/design.md §6.34).
"""
from __future__ import annotations

from typing import Optional, Union

import numpy as np

from onnx2ttnn.lowering.context import LoweringContext

# the largest code magnitude bfloat8_b holds exactly in a group of 16 (7-bit magnitudes, hidden bit included)
MAX_EXACT_CODE = 127

Scale = Union[float, np.ndarray]


def linear_codes(ctx: LoweringContext, name: str, weight: np.ndarray) -> Optional[tuple[np.ndarray, Scale]]:
    """(codes, scale) of the [K, N] dequantized weight `name` when the program computes in float32 and
    `codes * scale` gives the weight back bit for bit, with integer codes of magnitude at most MAX_EXACT_CODE
    and one scale per output channel (an [N] vector) or per tensor (a float); else None (and always None in
    a tensor-parallel program)."""
    if name not in ctx.dequantized:
        return None
    return steps_codes(ctx, weight, ctx.dequantized[name])


def steps_codes(ctx: LoweringContext, weight: np.ndarray, steps) -> Optional[tuple[np.ndarray, Scale]]:
    """linear_codes of a [K, N] weight whose quantization steps are `steps` (broadcastable to it)."""
    if ctx.dtype != "fp32" or ctx.tp > 1 or ctx.weights not in ("auto", "bfp8") or weight.ndim != 2:
        return None
    scale = _output_scale(np.asarray(steps, dtype=np.float32), weight.shape)
    if scale is None:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        codes = np.rint(weight / scale)
    if not np.all(np.isfinite(codes)) or float(np.max(np.abs(codes), initial=0.0)) > MAX_EXACT_CODE:
        return None
    codes = codes.astype(np.float32)
    if not np.array_equal(codes * scale, weight):
        return None
    return codes, (float(scale.reshape(-1)[0]) if scale.size == 1 else scale.reshape(-1))


def _output_scale(steps: np.ndarray, shape: tuple[int, int]) -> Optional[np.ndarray]:
    """The quantization steps as a [1, N] row (or [1, 1]) when they are per tensor or per output channel."""
    if steps.size == 1:
        return steps.reshape(1, 1)
    if steps.size == shape[1] and steps.reshape(-1).shape[0] == shape[1] and (
            steps.ndim == 1 or steps.shape[-1] == shape[1]):
        return steps.reshape(1, -1)
    return None


def conv_codes(ctx: LoweringContext, name: str, weight: np.ndarray) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """(codes, [OC] scales) of the [OC, IC / groups, KH, KW] dequantized conv weight `name` in a float32 program
    when `codes * scale` gives it back bit for bit, integer codes of magnitude at most MAX_EXACT_CODE, one scale
    per output channel or per tensor; else None.  The codes are uploaded as the conv's float32 host weight, which
    the matrix engine reads whole (integers below 2^11, docs/ttnn-facts.md §48) where `k * s` loses its low
    bits: the full ViT-B/16 QDQ's patch conv (docs/design.md §6.40)."""
    if ctx.dtype != "fp32" or ctx.tp > 1 or name not in ctx.dequantized or weight.ndim != 4:
        return None
    steps = np.asarray(ctx.dequantized[name], dtype=np.float32)
    channels = weight.shape[0]
    if steps.size == 1:
        scale = np.full(channels, steps.reshape(-1)[0], dtype=np.float32)
    elif steps.size == channels and (steps.ndim == 1 or steps.shape[0] == channels):
        scale = steps.reshape(-1)
    else:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        codes = np.rint(weight / scale.reshape(-1, 1, 1, 1))
    if not np.all(np.isfinite(codes)) or float(np.max(np.abs(codes), initial=0.0)) > MAX_EXACT_CODE:
        return None
    codes = codes.astype(np.float32)
    if not np.array_equal(codes * scale.reshape(-1, 1, 1, 1), weight):
        return None
    return codes, scale
