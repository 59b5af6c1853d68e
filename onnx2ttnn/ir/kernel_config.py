"""Compute kernel configs: what one `ttnn.WormholeComputeKernelConfig` says (KernelConfig) and the one function
that chooses it for a call from its operands' storage formats (choose).

The rule is the habit of tt-metal's hand-written models: the math fidelity follows the least precise operand
format (LoFi for bfloat4_b, HiFi2 for bfloat8_b, HiFi4 for bfloat16 and float32), except a float32
program's QDQ linear on int8 codes, which takes HiFi4 and a float32 dest (`choose`'s fp32_dest).  Why that fits the matrix
engine (tt-metal tech_reports/matrix_engine/matrix_engine.md, and the ttnn.MathFidelity docstring of ttnn
0.81.1): its multipliers take 1 hidden + 4 mantissa bits of SrcA and 1 hidden + 6 of SrcB per pass; LoFi is one
pass (4 and 6 bits), HiFi2 adds SrcA's next 4 bits (8 and 6), HiFi3 SrcB's next 6 (4 and 12), HiFi4 both (8
and 12); each pass costs a full matrix-engine cycle (LoFi 4, HiFi2 2, HiFi3 1.33, HiFi4 1 TFLOP/s per core).
A matmul unpacks input_tensor_a (in0) to SrcB and input_tensor_b (in1, the weights) to SrcA (tt-metal
llk_unpack_AB_matmul: "In0 -> srcB, In1 -> srcA").  So HiFi4 consumes every bit of bfloat16 (7 mantissa
bits) operands; HiFi2 every bit of bfloat8_b weights (7 mantissa bits below a shared exponent) but one of a
bfloat16 activation; LoFi the 3 bits of bfloat4_b weights.
The accumulator: matmul and linear calls at HiFi3/HiFi4 accumulate in a float32 destination register
(fp32_dest_acc_en; the precise configs of tt-metal's models); at LoFi/HiFi2, which already trade precision
for speed, they keep the
Float16_b destination (twice as many tiles fit in it) and accumulate across K blocks in L1 with the packer
(packer_l1_acc), as tt-metal's block-float matmuls do.  Convs keep ttnn's own default accumulation (Float16_b
destination, no packer accumulation: tt-metal get_conv_default_compute_kernel_config), the settings the conv
L1 needs the planner knows were measured with (tools/ttnn_mock/probes/results/conv_cb.txt); what a float32
destination or L1 accumulation would add to the conv's circular buffers was not measured.  Softmax and
the norms always accumulate in float32: their statistics (sums of exponentials, of squares) are where a
bfloat16 accumulator loses most.
math_approx_mode stays off: it changes only SFPU functions (exp, gelu, sqrt, ...; the tech report), none of
which a matmul or conv without a fused activation runs; softmax and the norms run them and would lose
precision for a speed-up the cost model does not count.

The simulator models what a config does to the numbers (sim/_fidelity.py); docs/ttnn-facts.md §19 holds the
probed facts (tools/ttnn_mock/probes/probe_kernel_config.py).  Standard library only (like ir/ttnn_ops).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

FIDELITIES = ("LoFi", "HiFi2", "HiFi3", "HiFi4")  # ttnn.MathFidelity members, in order of precision
# Mantissa bits (below the hidden bit) the multipliers consume per operand over all passes of a fidelity:
# (SrcA = a matmul's input_tensor_b, SrcB = its input_tensor_a); the simulator's model reads them (sim/_fidelity.py).
CONSUMED_BITS = {"LoFi": (4, 6), "HiFi2": (8, 6), "HiFi3": (4, 12), "HiFi4": (8, 12)}
# Multiplier passes per fidelity: the matrix engine's throughput divides by them (the tech report: LoFi 4, HiFi2
# 2, HiFi3 1.33, HiFi4 1 TFLOP/s per core); DeviceSpec.matrix_tflops is the HiFi4 (FP16) figure.
PASSES = {"LoFi": 1, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}
# The fidelity the least precise operand format calls for (ir/layout.LAYOUT_DTYPES names; bfp4 = bfloat4_b).
FIDELITY_OF_FORMAT = {"bfp4": "LoFi", "bfp8": "HiFi2", "bf16": "HiFi4", "f32": "HiFi4"}
# the kinds of kernels that take a config (ir/ttnn_ops kernel_config; passes/choose_kernel_configs.kernel_kind)
MATRIX, CONV, REDUCTION = "matrix", "conv", "reduction"


@dataclass(frozen=True)
class KernelConfig:
    """The fields of one ttnn.WormholeComputeKernelConfig the converter sets (dst_full_sync_en and
    throttle_level keep their defaults)."""

    math_fidelity: str = "HiFi4"
    math_approx_mode: bool = False
    fp32_dest_acc_en: bool = True
    packer_l1_acc: bool = False

    def __post_init__(self) -> None:
        if self.math_fidelity not in FIDELITIES:
            raise ValueError(f"unknown math fidelity {self.math_fidelity!r}; known: {', '.join(FIDELITIES)}")

    @property
    def matrix_speedup(self) -> float:
        """How much faster than HiFi4 the matrix engine runs at this fidelity (the cost model, ir/cost.py)."""
        return PASSES["HiFi4"] / PASSES[self.math_fidelity]

    @property
    def identifier(self) -> str:
        """The base of the program's name for it (HIFI4_FP32_ACC, LOFI_L1_ACC; the namespace lower-cases it)."""
        parts = [self.math_fidelity.upper()]
        parts += ["APPROX"] if self.math_approx_mode else []
        parts += ["FP32_ACC"] if self.fp32_dest_acc_en else []
        parts += ["L1_ACC"] if self.packer_l1_acc else []
        return "_".join(parts)

    CLASS = "WormholeComputeKernelConfig"  # the ttnn class; also Blackhole's (its docstring; no Blackhole name)

    def arguments(self) -> str:
        """The constructor's keyword arguments, as the program writes them."""
        return (f"math_fidelity=ttnn.MathFidelity.{self.math_fidelity}, math_approx_mode={self.math_approx_mode}, "
                f"fp32_dest_acc_en={self.fp32_dest_acc_en}, packer_l1_acc={self.packer_l1_acc}")

    def __repr__(self) -> str:  # the call that constructs it (emit/python.py defines one per distinct config)
        return f"ttnn.{self.CLASS}({self.arguments()})"


def fidelity_for(formats: Iterable[str]) -> str:
    """The fidelity the least precise of these operand formats calls for (HiFi4 when none is known)."""
    chosen = "HiFi4"
    for dtype in formats:
        wanted = FIDELITY_OF_FORMAT.get(dtype)
        if wanted is not None and FIDELITIES.index(wanted) < FIDELITIES.index(chosen):
            chosen = wanted
    return chosen


def choose(kind: str, formats: Iterable[str], forced: Optional[str] = None, fp32_dest: bool = False) -> KernelConfig:
    """The config of one call: `kind` MATRIX (matmul, linear), CONV or REDUCTION (softmax, norms), `formats`
    its float operands' storage dtypes, `forced` a fidelity every call takes (--math-fidelity) or None;
    `fp32_dest`: a conv asked for a float32 result (lowering/accuracy.py), which it computes in a bfloat16
    dest unless fp32_dest_acc_en is set (docs/ttnn-facts.md §16); a matmul or linear asked for one (a QDQ
    linear on integer codes, lowering/weight_codes.py) takes HiFi4 and a float32 dest, whatever its formats."""
    if kind not in (MATRIX, CONV, REDUCTION):
        raise ValueError(f"unknown kernel kind {kind!r}")
    fidelity = forced or ("HiFi4" if fp32_dest and kind == MATRIX else fidelity_for(formats))
    if fidelity not in FIDELITIES:
        raise ValueError(f"unknown math fidelity {fidelity!r}; known: {', '.join(FIDELITIES)}")
    if kind == CONV:
        return KernelConfig(fidelity, math_approx_mode=False, fp32_dest_acc_en=fp32_dest, packer_l1_acc=False)
    precise = kind == REDUCTION or fidelity in ("HiFi3", "HiFi4") or fp32_dest
    return KernelConfig(fidelity, math_approx_mode=False, fp32_dest_acc_en=precise,
                        packer_l1_acc=not precise)


def forced_fidelity(choice: str) -> Optional[str]:
    """The ttnn.MathFidelity member a --math-fidelity value forces (None for auto)."""
    if choice == "auto":
        return None
    forced = next((f for f in FIDELITIES if f.lower() == choice), None)
    if forced is None:
        raise ValueError(f"unknown math fidelity {choice!r}; known: auto, {', '.join(f.lower() for f in FIDELITIES)}")
    return forced
