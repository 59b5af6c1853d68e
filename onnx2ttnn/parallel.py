"""--parallel auto: tensor parallel when data parallel cannot hold or cannot split the model, data parallel
when tp is impossible, else the one the cost model finds faster (docs/design.md §6.21, §6.35).

tp is the only choice when one chip cannot hold the weights data parallel replicates (their device bytes in
the format --weights takes in the program's dtype, against the DRAM of one chip less a quarter kept for
activations: weight_bytes, which counts a QDQ model's integer weights too), or when the batch (dim 0 of the
first graph input) does not divide over the chips (dp would refuse it); dp is the only choice on one chip or a
mesh of one column.  Reading the weights' sizes loads no values.  --dtype auto is sized as bf16 until
settle-dtype has measured the model in the dp conversion; when it settles fp32 and the weights then outgrow one
chip, convert() keeps the tp program (dp_holds).

Otherwise neither is faster in general: the two programs do not have the same per-chip shapes.  A dp chip
runs batch/chips samples and reads every weight; a tp chip runs batch/rows samples, reads 1/cols of the
split weights and waits on an all_reduce of its activations over the ethernet links after every
row-parallel matmul.  Where reading the weights dominates tp can win; where the all_reduces or the larger
per-chip activations do, dp wins (the zoo models measured so far, §6.35).  So convert() converts the model both
ways from one load and keeps the program of lower modelled time per eager forward (ir/cost.py
ProgramCost.eager_s, the figure `report` prints), dp on a tie; a model tp cannot split (its conversion refused)
is dp.
"""
from __future__ import annotations

import math
import os

import onnx

from onnx2ttnn.ir.device import get_device

# device bytes per weight element in each --weights format (bfloat8_b and bfloat4_b: a tile of 1088 / 576 B
# holds 1024 values, ir/layout.LAYOUT_DTYPES); auto picks block floats for most weights
WEIGHT_BYTES = {"bf16": 2.0, "fp32": 4.0, "auto": 1088 / 1024, "bfp8": 1088 / 1024, "bfp4": 576 / 1024}
DRAM_FOR_WEIGHTS = 0.75  # of one chip's DRAM: what the choice lets dp's replicated weights take


def settle_auto(model, options) -> None:
    """`options.parallel` "auto" on a multi-chip mesh becomes "tp" or "dp" when only one of them can hold the
    model; it stays "auto" when both can, for convert() to compare them (module docstring)."""
    if options.parallel != "auto" or options.chips == 1:
        return
    modes = auto_modes(_header(model), options)
    if len(modes) == 1:
        options.parallel = modes[0]


def auto_modes(proto: onnx.ModelProto, options, dtype: str = "") -> tuple[str, ...]:
    """The modes --parallel auto chooses between: ("dp",) on one chip or a one-column mesh (nothing for tp to
    split over); ("tp",) when dp cannot hold or cannot split the model; ("dp", "tp") when both can.  `dtype`: the
    program's compute dtype, once settled (else --dtype's, auto taken as bf16)."""
    rows, cols = options.mesh_shape()
    if options.chips == 1 or cols == 1:
        return ("dp",)
    batch = _batch(proto, options.input_shapes)
    if not dp_holds(proto, options, dtype) or (batch is not None and batch % options.chips != 0):
        return ("tp",)
    return ("dp", "tp")


def dp_holds(proto: onnx.ModelProto, options, dtype: str = "") -> bool:
    """One chip holds the weights dp replicates, in the format --weights takes in a `dtype` program (auto_modes)."""
    device = get_device(options.device)
    budget = DRAM_FOR_WEIGHTS * device.dram_banks * device.dram_bank_bytes
    return weight_bytes(proto, options.weights, dtype or ("fp32" if options.dtype == "fp32" else "bf16")) <= budget


def faster(times: dict[str, float]) -> str:
    """The mode of lower modelled time per forward; dp on a tie (it moves nothing between chips)."""
    return "tp" if times["tp"] < times["dp"] else "dp"


def auto_line(auto: dict) -> str:
    """What --parallel auto compared: the modelled eager time per forward of each mode, the one kept."""
    times = ", ".join(f"{mode} {seconds * 1e6:.1f} us" for mode, seconds in auto["times"].items())
    refused = f"; tp refused the model ({auto['refused']})" if "refused" in auto else ""
    outgrown = f"; dp's weights outgrow one chip {auto['outgrown']}" if "outgrown" in auto else ""
    return f"parallel auto: modelled eager time per forward {times}{refused}{outgrown}; kept {auto['kept']}"


def weight_bytes(proto: onnx.ModelProto, weights: str = "bf16", dtype: str = "bf16") -> float:
    """The device bytes of the model's weights in the format `weights` takes in a `dtype` program
    (lowering/weight_dtype.py): its float initializers, which a float32 program keeps float32 under auto and bf16,
    and the integer ones a DequantizeLinear reads (fold-dequantize makes them float weights), sized alike, except
    that a float32 program under auto sends a matmul's as its codes in bfloat8_b (lowering/weight_codes.py)."""
    floats = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE)
    wide = dtype == "fp32" and weights in ("auto", "bf16")
    each = WEIGHT_BYTES["fp32"] if wide else WEIGHT_BYTES.get(weights, 2.0)
    coded = _dequantized(proto)  # integer initializer -> whether only matmuls read its dequantized values
    total = 0.0
    for tensor in proto.graph.initializer:
        if tensor.data_type in floats or tensor.name in coded:
            codes = dtype == "fp32" and weights == "auto" and coded.get(tensor.name, False)
            total += math.prod(tensor.dims) * (WEIGHT_BYTES["bfp8"] if codes else each)
    return total


def _dequantized(proto: onnx.ModelProto) -> dict[str, bool]:
    """The initializers a top-level DequantizeLinear reads (its input 0), each with whether matmuls (MatMul,
    Gemm) alone read the dequantized values."""
    readers: dict[str, set] = {}
    for node in proto.graph.node:
        for name in node.input:
            readers.setdefault(name, set()).add(node.op_type)
    initializers = {t.name for t in proto.graph.initializer}
    found: dict[str, bool] = {}
    for node in proto.graph.node:
        if node.op_type == "DequantizeLinear" and node.input and node.input[0] in initializers:
            matmuls = bool(readers.get(node.output[0])) and readers[node.output[0]] <= {"MatMul", "Gemm"}
            found[node.input[0]] = found.get(node.input[0], True) and matmuls
    return found


def _header(model) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    return onnx.load(os.fspath(model), load_external_data=False)


def _batch(proto: onnx.ModelProto, input_shapes: dict):
    """Dim 0 of the first graph input that is not an initializer (None when unknown)."""
    names = {t.name for t in proto.graph.initializer}
    for value in proto.graph.input:
        if value.name in names:
            continue
        if value.name in input_shapes:
            return int(input_shapes[value.name][0])
        dims = value.type.tensor_type.shape.dim
        return int(dims[0].dim_value) if dims and dims[0].HasField("dim_value") else None
    return None
