"""--parallel auto settled before the model is converted: tensor parallel when data parallel cannot hold or
cannot split the model, else data parallel (docs/design.md §6.21).

tp is chosen when one chip cannot hold the weights data parallel replicates (their device bytes in the
format --weights asks, against the DRAM of one chip less a quarter kept for activations), or when the batch
(dim 0 of the first graph input) does not divide over the chips (dp would refuse it).  Otherwise dp: it moves
nothing between chips, and with the same per-chip shapes the cost model gives it no slower time (tp adds the
all_reduce of every layer over the ethernet links, ir/cost.py).  Reading the weights' sizes loads no values.
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
    """`options.parallel` "auto" on a multi-chip mesh becomes "tp" or "dp" (module docstring)."""
    if options.parallel != "auto" or options.chips == 1:
        return
    proto = _header(model)
    rows, cols = options.mesh_shape()
    device = get_device(options.device)
    budget = DRAM_FOR_WEIGHTS * device.dram_banks * device.dram_bank_bytes
    batch = _batch(proto, options.input_shapes)
    too_big = weight_bytes(proto, options.weights) > budget
    undivided = batch is not None and batch % options.chips != 0
    options.parallel = "tp" if cols > 1 and (too_big or undivided) else "dp"


def weight_bytes(proto: onnx.ModelProto, weights: str = "bf16") -> float:
    """The device bytes of the model's float initializers in the format `weights`."""
    floats = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE)
    count = sum(math.prod(t.dims) for t in proto.graph.initializer if t.data_type in floats)
    return count * WEIGHT_BYTES.get(weights, 2.0)


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
