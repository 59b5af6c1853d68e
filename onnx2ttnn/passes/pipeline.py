"""The pipeline: the ordered list of passes (the table of contents of the compiler) and the PassManager."""
from __future__ import annotations

import time

from onnx2ttnn.ir.graph import Module
from onnx2ttnn.ir.verify_ir import verify_ir
from onnx2ttnn.passes.assign_layouts import AssignLayouts
from onnx2ttnn.passes.base import Pass, PassContext
from onnx2ttnn.passes.choose_activation_formats import ChooseActivationFormats
from onnx2ttnn.passes.choose_kernel_configs import ChooseKernelConfigs
from onnx2ttnn.passes.choose_program_configs import ChooseProgramConfigs
from onnx2ttnn.passes.decompose_layouts import DecomposeLayouts
from onnx2ttnn.passes.fold_constants import FoldConstants
from onnx2ttnn.passes.fold_dequantize import FoldDequantize
from onnx2ttnn.passes.fuse_epilogues import FuseEpilogues
from onnx2ttnn.passes.fuse_patterns import FusePatterns
from onnx2ttnn.passes.insert_deallocs import InsertDeallocs
from onnx2ttnn.passes.insert_moves import InsertMoves
from onnx2ttnn.passes.lower_to_ttnn import LowerToTTNN
from onnx2ttnn.passes.measure_weight_gain import MeasureWeightGain
from onnx2ttnn.passes.assign_memory_configs import AssignMemoryConfigs
from onnx2ttnn.passes.place_memory import PlaceMemory
from onnx2ttnn.passes.place_on_mesh import PlaceOnMesh
from onnx2ttnn.passes.remove_identities import RemoveIdentities
from onnx2ttnn.passes.reuse_conv_weights import ReuseConvWeights
from onnx2ttnn.passes.settle_dtype import SettleDtype
from onnx2ttnn.passes.simplify_ttnn import SimplifyTTNN
from onnx2ttnn.passes.split_tensor_parallel import SplitTensorParallel

# What the importer does before the first pass (frontend/importer.py).
IMPORT_STAGES = (
    ("load", "read the .onnx file and its external data, run the ONNX checker"),
    ("inline-functions", "calls of model-local functions become their bodies' nodes; recursion refused"),
    ("override-input-shapes", "pin graph input shapes given with --input-shape"),
    ("infer-shapes", "ONNX shape inference with data propagation; every input must be static"),
)


def build_pipeline() -> list[Pass]:
    """The passes in order, phase by phase."""
    return [
        # clean up what the exporter wrote
        FoldDequantize(),     # quantized weights (DequantizeLinear of constants) become float weights
        FoldConstants(),      # shape arithmetic and constant subgraphs become constants
        RemoveIdentities(),   # no-op nodes out of the way of the pattern matcher
        SettleDtype(),        # --dtype auto: bf16, or fp32 for a quantized model bf16 values move off its codes
        MeasureWeightGain(),  # --weights auto: how much the model amplifies weight errors (onnxruntime, unfused)
        # ONNX -> ttnn
        FusePatterns(),       # linear+bias, gelu, conv+batchnorm, conv+activation, Q->DQ pairs
        LowerToTTNN(),        # registry rules; all unsupported ops reported at once
        SimplifyTTNN(),       # reshape chains collapse
        FuseEpilogues(),      # activations and residual adds folded into the call next to them
        ReuseConvWeights(),   # conv2d prepares its weights once; later calls reuse them
        SplitTensorParallel(),  # --parallel tp: Megatron pairs split over the chips, all_reduce after each
        # layouts
        AssignLayouts(),      # a TTNNLayout on every tensor
        DecomposeLayouts(),   # only the to_layout conversions that ops need
        ChooseActivationFormats(),  # bfloat8_b between matmuls / linears within the error budget (--activations)
        # compute
        ChooseKernelConfigs(),   # math fidelity and accumulation from the operand formats (dtypes now final)
        # memory
        PlaceMemory(),        # dram / l1 / auto policy: the plan of onnx2ttnn/memory, applied
        InsertMoves(),        # the plan's to_memory_config moves out of DRAM-only outputs
        ChooseProgramConfigs(),  # matmul program configs from shapes and shard grids (placements now final)
        InsertDeallocs(),     # free each buffer after its last use
        PlaceOnMesh(),        # multi-chip: each tensor's placement over the chips (batch split or replicated)
        AssignMemoryConfigs(),   # last: memory_config attributes derived from layouts, verified
    ]


def pipeline_text() -> str:
    """What --print-pipeline shows: each stage's name and the first line of its docstring."""
    lines = [f"{name:24} {doc}" for name, doc in IMPORT_STAGES]
    for p in build_pipeline():
        summary = p.summary()
        summary = summary.split(":", 1)[1].strip() if summary.startswith(p.name + ":") else summary
        lines.append(f"{p.name:24} {summary}")
    return "\n".join(lines)


class PassManager:
    """Runs the pipeline, times each pass, dumps the IR after the passes asked for and, with
    Options.verify_each, checks the IR after every pass (ir/verify_ir.py: the contracts of the passes run)."""

    def __init__(self, passes: list[Pass]) -> None:
        self.passes = passes
        names = {p.name for p in passes}
        self.known = names | {name for name, _ in IMPORT_STAGES}
        self.dumps: dict[str, bytes] = {}  # pass -> the IR after it (--dump-ir-after); written with the program

    def run(self, module: Module, ctx: PassContext, progress=None) -> None:
        for p in self.passes:
            if progress:
                progress(p.name)
            start = time.perf_counter()
            p.run(module, ctx)
            ctx.timings.append((p.name, time.perf_counter() - start))
            module.passes_run.append(p.name)
            if p.name in ctx.options.dump_ir_after:  # (before verifying: a broken IR can be looked at)
                from onnx2ttnn.emit.ir_dump import ir_bytes

                self.dumps[p.name] = ir_bytes(module)
            if ctx.options.verify_each:
                verify_ir(module, p.name, module.passes_run, ctx.device)
