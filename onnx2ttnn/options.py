"""Conversion options: one dataclass, each field with its help text."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

MEMORY_POLICIES = ("dram", "l1", "auto")
# --dtype: the compute dtype of float tensors, named as users of tt-metal write it (fp32, as in its
# fp32_dest_acc_en); layouts name storage dtypes in ttnn's short form (ir/layout.LAYOUT_DTYPES: fp32 -> "f32").
COMPUTE_DTYPES = ("auto", "bf16", "fp32")
# --math-fidelity: auto (each call's fidelity from its operand formats, ir/kernel_config.py) or one for all
MATH_FIDELITIES = ("auto", "lofi", "hifi2", "hifi3", "hifi4")
# --parallel: how a multi-chip mesh shares the work (docs/design.md §6.19); tp is designed, not built yet
PARALLEL_MODES = ("auto", "dp", "tp")
# --weights: the device format of matmul / linear / conv weights (lowering/weight_dtype.py): auto (per weight,
# from the error block-float rounding puts into it), bf16 (today's programs), bfp8 or bfp4 for all
WEIGHT_FORMATS = ("auto", "bf16", "bfp8", "bfp4")
# --activations: the device format of activations between matmuls / linears (passes/choose_activation_formats.py):
# auto (bfloat8_b where the model's error budget, after its weights, holds), bf16 (the programs before the
# option), bfp8 for every tensor that may take it
ACTIVATION_FORMATS = ("auto", "bf16", "bfp8")
VERIFY_EACH_ENV = "ONNX2TTNN_VERIFY_EACH"  # "1": verify_each's default (the test run sets it, tests/conftest.py)


@dataclass
class Options:
    """Everything that changes what `convert` produces."""

    device: str = field(default="n150", metadata={"help": "target device: n150, p150 (one chip), n300 (2 chips), "
                                                          "t3k (8 chips) or galaxy (32 chips)"})
    mesh: str = field(default="", metadata={"help": "RxC: the mesh of chips the program opens; empty: the "
                                                    "device's whole mesh (n300 1x2, t3k 1x8, galaxy 4x8); 1x1 "
                                                    "runs on one chip of a multi-chip device"})
    parallel: str = field(default="auto", metadata={"help": "how the chips of a mesh share the work: dp (data "
                                                            "parallel: the batch split over the chips), tp "
                                                            "(tensor parallel: layers split over a mesh row) or auto (tp when "
                                                            "the weights do not fit one chip or the batch does not "
                                                            "divide, else dp)"})
    memory: str = field(default="auto", metadata={"help": "placement policy: auto (L1, height or width sharding "
                                                          "chosen by the cost model, the default), dram (all "
                                                          "DRAM interleaved) or l1 (L1 interleaved where it "
                                                          "fits)"})
    dtype: str = field(default="auto", metadata={"help": "compute dtype of float tensors: auto (bf16, or fp32 for a quantized model whose codes bf16 values would move too far: measured, docs/design.md §6.40), bf16 or fp32"})
    math_fidelity: str = field(default="auto", metadata={"help": "math fidelity of matmul, linear, conv, softmax "
                                                                 "and norm calls: auto (LoFi for bfloat4_b "
                                                                 "operands, HiFi2 for bfloat8_b, HiFi4 for bf16 "
                                                                 "and fp32) or lofi, hifi2, hifi3, hifi4 for all"})
    weights: str = field(default="auto", metadata={"help": "device format of matmul, linear, conv and embedding "
                                                           "weights: auto (bfloat4_b or bfloat8_b per weight where "
                                                           "the error its rounding adds stays within the model's "
                                                           "budget, else bf16), bf16, bfp8 or bfp4 for all "
                                                           "(embedding tables: bfloat8_b at most)"})
    activations: str = field(default="auto", metadata={"help": "device format of the activations a matmul or "
                                                                   "linear writes for matmuls and linears only: "
                                                                   "auto (bfloat8_b while the model's error "
                                                                   "budget holds; none under --weights bf16), "
                                                                   "bf16, or bfp8 for all such"})
    keep_bf16: tuple[str, ...] = field(default=(), metadata={"help": "weights (as lowering names them: the ONNX "
                                                                   "initializer, `_t` for a transposed Gemm "
                                                                   "weight) kept in bf16 whatever --weights says "
                                                                   "(tools/weight_bisect.py's lever)"})
    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict,
                                                     metadata={"help": "NAME -> static shape overrides"})
    fallback: bool = field(default=True, metadata={"help": "compute ONNX ops that have no ttnn lowering on the "
                                                           "host with torch (host fallback); False refuses "
                                                           "them, naming every such op type at once"})
    dump_ir_after: tuple[str, ...] = field(default=(), metadata={"help": "pass names to dump the IR after"})
    dump_dir: str = field(default=".", metadata={"help": "folder for --dump-ir-after files (written with the "
                                                       "program by Conversion.write)"})
    keep_failed_dumps: bool = field(default=False, metadata={"help": "write the --dump-ir-after files of a "
                                                                     "failed conversion too (else none is kept)"})
    verify_each: bool = field(default_factory=lambda: os.environ.get(VERIFY_EACH_ENV) == "1",
                              metadata={"help": "check the IR after every pass (ir/verify_ir.py: declared notes, "
                                                "layouts, shapes, deallocations); slower, off by default unless "
                                                f"{VERIFY_EACH_ENV}=1; never changes the program"})

    def activation_format(self) -> str:
        """--activations as it applies: auto under --weights bf16 is bf16 (a --weights bf16 program is the
        program of before the block-float options, numerics included, docs/design.md §6.31)."""
        return "bf16" if self.activations == "auto" and self.weights == "bf16" else self.activations

    def mesh_shape(self) -> tuple[int, int]:
        """(rows, columns) of the mesh: `mesh` parsed ("RxC"; empty means 1x1 until convert resolves it)."""
        rows, _, cols = (self.mesh or "1x1").partition("x")
        return int(rows), int(cols)

    @property
    def chips(self) -> int:
        rows, cols = self.mesh_shape()
        return rows * cols

    def describe(self, compute_dtype: str = "") -> str:
        """One line for the generated program's header (what changes the program: not dump_*, verify_each);
        `compute_dtype`: what --dtype settled on (settle-dtype), said as "fp32 (auto)" when auto chose fp32."""
        shapes = ",".join(f"{k}={'x'.join(map(str, v))}" for k, v in sorted(self.input_shapes.items()))
        dtype = compute_dtype or self.dtype
        dtype += " (auto)" if self.dtype == "auto" and dtype != "bf16" else ""
        text = f"device={self.device} memory={self.memory} dtype={dtype}"
        text += "" if self.math_fidelity == "auto" else f" math_fidelity={self.math_fidelity}"
        text += "" if self.weights == "bf16" else f" weights={self.weights}"  # bf16: the programs before --weights
        text += "" if self.activation_format() == "bf16" else f" activations={self.activations}"  # as before
        text += f" keep_bf16={len(self.keep_bf16)}" if self.keep_bf16 else ""
        text += "" if self.fallback else " fallback=off"
        text += f" mesh={self.mesh} parallel={self.parallel}" if self.chips > 1 else ""
        return text + (f" input_shapes={shapes}" if shapes else "")
