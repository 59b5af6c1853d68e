"""The device dtype of a dequantized weight: bfloat8_b where its rounding stays within budget, else the
compute dtype (passes/fold_dequantize.py marks the weights; the rules that upload weights ask here)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from onnx2ttnn.lowering.context import LoweringContext

BFP8_FACE = 16  # bfloat8_b shares one exponent per 16 values along the last dim (docs/design.md §3.2)
# A dequantized weight goes to the device as bfloat8_b when that moves its values by less than this fraction
# of their own quantization step (each value's error over its scale, root mean square over the tensor), i.e.
# when the block-float weight still tells the int8 codes apart on average; else it stays bfloat16.  A
# judgement, not a measurement: it keeps the program's weights within the quantized model's own resolution.
BFP8_BUDGET = 0.5


def bfp8_round(x: np.ndarray) -> np.ndarray:
    """float values rounded to bfloat8_b as tt-metal's packer does (the simulator's sim/_rounding.py, in
    numpy): per group of 16 along the last dim, a shared exponent E = max floor(log2|x|), each value a
    7-bit magnitude round_half_even(|x| / 2**(E-6)) saturated at 127."""
    x = np.asarray(x, dtype=np.float32)
    flat = x.reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1)
    width = flat.shape[-1]
    pad = (-width) % BFP8_FACE
    groups = np.pad(flat, ((0, 0), (0, pad))).reshape(flat.shape[0], -1, BFP8_FACE).astype(np.float64)
    _, exp = np.frexp(groups)
    exp = np.where(groups == 0, -1000, exp)
    shared = exp.max(axis=-1, keepdims=True) - 1
    shared = np.where(shared < -200, 0, shared)
    step = np.exp2(shared - 6.0)
    mag = np.minimum(np.round(np.abs(groups) / step), 127.0)
    out = np.copysign(mag * step, groups).reshape(flat.shape[0], -1)[:, :width]
    return out.reshape(x.shape).astype(np.float32)


def weight_dtype(ctx: LoweringContext, name: str, uploaded: np.ndarray, steps=None) -> Optional[str]:
    """The device dtype of a weight as the rule uploads it (`uploaded`: its values in the device tensor's
    shape; `steps`: their quantization steps, broadcastable to it, by default the ones fold-dequantize
    recorded for the weight as it is in the model): "bfp8" for a dequantized weight within BFP8_BUDGET, None
    (the compute dtype) otherwise.  Each decision is recorded in the context for the conversion summary."""
    if name not in ctx.dequantized:
        return None
    if ctx.dtype != "bf16":
        ctx.note_weight_dtype(name, "f32", "--dtype fp32 keeps weights in float32")
        return None
    steps = ctx.dequantized[name] if steps is None else steps
    values = np.asarray(uploaded, np.float32)
    moved = (bfp8_round(values) - values) / np.asarray(steps, np.float32)
    rms = float(np.sqrt(np.mean(np.square(moved, dtype=np.float64))))
    if rms <= BFP8_BUDGET:
        ctx.note_weight_dtype(name, "bfp8", "")
        return "bfp8"
    ctx.note_weight_dtype(name, "bf16", f"bfloat8_b would move it by {rms:.2f} of a quantization step (budget "
                                        f"{BFP8_BUDGET})")
    return None
