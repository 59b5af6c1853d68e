"""Compute kernel configs (ttnn.WormholeComputeKernelConfig, ttnn.MathFidelity) and what they do to the numbers.

The model (sources: tt-metal tech_reports/matrix_engine/matrix_engine.md; the ttnn 0.81.1 MathFidelity
docstring; tt-metal llk_unpack_AB_matmul, "In0 -> srcB, In1 -> srcA"; docs/ttnn-facts.md §11):
* math fidelity: the matrix engine's multipliers see 1 hidden + 4 mantissa bits of SrcA and 1 hidden + 6 of
  SrcB per pass, and the passes of a fidelity together consume LoFi 4 / 6, HiFi2 8 / 6, HiFi3 4 / 12, HiFi4
  8 / 12 mantissa bits of SrcA / SrcB.  A matmul (and conv2d, an im2col matmul) puts input_tensor_a (the
  activation) in SrcB and input_tensor_b (the weights) in SrcA.  Modelled as truncating each operand's
  mantissa to the bits consumed (the bits no pass reads contribute nothing), then exact products.  A
  bfloat16 / bfloat8_b operand has 7 mantissa bits, so HiFi4 leaves it whole, HiFi2 whole in SrcA, LoFi cuts
  weights to 4 bits and activations to 6.  Float32 operands keep every bit by default, which makes a float32
  program's matmuls and convs more precise here than on a device: the matrix engine's source registers hold
  TF32 (10 explicit mantissa bits; an FP32 value loses its low 13 bits on the way in: docs/ttnn-facts.md §48).
  With ONNX2TTNN_SIM_TF32=1 a float32 operand is truncated to TF32 and then to the bits its fidelity reads:
  a measurement switch (docs/design.md §6.40), not the default, since every float32 program's figures and the
  ONNX node tests' float32 tolerances were set without it.
* fp32_dest_acc_en=False: the destination register holds Float16_b, so a matmul's sum over K is rounded to
  bfloat16 after each K tile (32 values) is added; with it, the sum stays float32 (the simulator's default).
  packer_l1_acc accumulates K blocks in L1 in the same intermediate format: no further numeric effect here.
* math_approx_mode changes SFPU functions (exp, gelu, sqrt, ...); not modelled: the converter never sets it.
Softmax, layer_norm and rms_norm validate their config and compute in float32 whatever it says (their
reductions' fidelity is not modelled; the converter gives them HiFi4 and float32 accumulation).
A call without a config (or with math_fidelity Invalid, the class's default: ttnn then uses the op's own
default) is computed exactly, as before configs were modelled.
"""
from __future__ import annotations

import enum
import os

import torch

from onnx2ttnn.ir.kernel_config import CONSUMED_BITS as _BITS_BY_NAME


class MathFidelity(enum.Enum):
    """ttnn.MathFidelity: multiplier passes over the operands' mantissa bits."""

    LoFi = 0
    HiFi2 = 2
    HiFi3 = 3
    HiFi4 = 4
    Invalid = 255


class ThrottleLevel(enum.Enum):
    """ttnn.ThrottleLevel (accepted, no effect here)."""

    NO_THROTTLE = 0
    LEVEL_1 = 1
    LEVEL_2 = 2
    LEVEL_3 = 3
    LEVEL_4 = 4
    LEVEL_5 = 5


TF32_ENV = "ONNX2TTNN_SIM_TF32"  # "1": float32 matmul / conv operands read as TF32 (module docstring)
TF32_BITS = 10  # TF32's explicit mantissa bits
# mantissa bits consumed over all passes: (SrcA = input_tensor_b / weights, SrcB = input_tensor_a / activation)
CONSUMED_BITS = {MathFidelity[name]: bits for name, bits in _BITS_BY_NAME.items()}
DEST_K_TILE = 32  # values of K added to the destination register per matmul tile


class WormholeComputeKernelConfig:
    """ttnn.WormholeComputeKernelConfig (also Blackhole's): precision / throughput settings of a compute kernel."""

    def __init__(self, *, math_fidelity: MathFidelity = MathFidelity.Invalid, math_approx_mode: bool = True,
                 fp32_dest_acc_en: bool = False, packer_l1_acc: bool = False, dst_full_sync_en: bool = False,
                 throttle_level: ThrottleLevel = ThrottleLevel.NO_THROTTLE) -> None:
        _typed("math_fidelity", math_fidelity, MathFidelity)
        for name, value in (("math_approx_mode", math_approx_mode), ("fp32_dest_acc_en", fp32_dest_acc_en),
                            ("packer_l1_acc", packer_l1_acc), ("dst_full_sync_en", dst_full_sync_en)):
            _typed(name, value, bool)
        _typed("throttle_level", throttle_level, ThrottleLevel)
        self.math_fidelity, self.math_approx_mode = math_fidelity, math_approx_mode
        self.fp32_dest_acc_en, self.packer_l1_acc = fp32_dest_acc_en, packer_l1_acc
        self.dst_full_sync_en, self.throttle_level = dst_full_sync_en, throttle_level

    def __repr__(self) -> str:
        return (f"WormholeComputeKernelConfig(math_fidelity={self.math_fidelity.name}, math_approx_mode="
                f"{self.math_approx_mode}, fp32_dest_acc_en={self.fp32_dest_acc_en}, packer_l1_acc="
                f"{self.packer_l1_acc})")


def _typed(name: str, value, kind) -> None:
    if type(value) is not kind:
        raise TypeError(f"WormholeComputeKernelConfig.__init__(): incompatible function arguments: {name} must "
                        f"be {kind.__name__}, got {type(value).__name__}")


def kernel_config(op: str, name: str, config):
    """The config passed under keyword `name`, checked (None: none passed)."""
    if config is not None and not isinstance(config, WormholeComputeKernelConfig):
        raise TypeError(f"{op}(): incompatible function arguments: {name} must be a "
                        f"ttnn.WormholeComputeKernelConfig or None, got {type(config).__name__}")
    return config


def truncate_mantissa(x: torch.Tensor, bits: int) -> torch.Tensor:
    """`x` (float32) with only the top `bits` explicit mantissa bits kept (rounded toward zero); inf and nan
    keep their class (the quiet-NaN bit is the top mantissa bit)."""
    if bits >= 23:
        return x
    mask = -(1 << (23 - bits))  # sign, exponent and the top `bits` mantissa bits
    return (x.float().contiguous().view(torch.int32) & mask).view(torch.float32)


def fidelity_operands(config, a: torch.Tensor, b: torch.Tensor, a_float32: bool = False, b_float32: bool = False):
    """(a, b) as the multipliers see them under `config`: a in SrcB, b in SrcA (unchanged without a config);
    an operand stored as float32 (`a_float32`, `b_float32`) is left whole, or under TF32_ENV read as TF32."""
    if config is None or config.math_fidelity is MathFidelity.Invalid:
        return a, b
    bits_src_a, bits_src_b = CONSUMED_BITS[config.math_fidelity]
    tf32 = os.environ.get(TF32_ENV) == "1"
    return (_tf32(a, bits_src_b, tf32) if a_float32 else _consumed(a, bits_src_b)), \
        (_tf32(b, bits_src_a, tf32) if b_float32 else _consumed(b, bits_src_a))


def _tf32(x: torch.Tensor, bits: int, modelled: bool) -> torch.Tensor:
    """A float32 operand as the multipliers see it: whole, or (`modelled`) TF32 with `bits` of it read."""
    return truncate_mantissa(x.float(), min(TF32_BITS, bits)) if modelled else x


def _consumed(x: torch.Tensor, bits: int) -> torch.Tensor:
    """A bfloat16-precision operand (7 mantissa bits at most) with `bits` of them read."""
    if bits >= 7:  # every bit is read
        return x
    return truncate_mantissa(x.float(), bits)


def bf16_dest(config) -> bool:
    """True when the call accumulates in a Float16_b destination (a config without fp32_dest_acc_en)."""
    return (config is not None and config.math_fidelity is not MathFidelity.Invalid
            and not config.fp32_dest_acc_en)


def matmul_bf16_dest(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x @ y with the sum over K rounded to bfloat16 after every DEST_K_TILE values (float32 products)."""
    x, y = x.float(), y.float()
    if x.dim() < 2 or y.dim() < 2:  # a vector operand: one K tile row of products, rounded once at the end
        return torch.matmul(x, y).to(torch.bfloat16).float()
    k = x.shape[-1]
    out = None
    for start in range(0, k, DEST_K_TILE):
        part = torch.matmul(x[..., start:start + DEST_K_TILE], y[..., start:start + DEST_K_TILE, :])
        out = part if out is None else out + part
        out = out.to(torch.bfloat16).float()
    return out
