"""The converter's limits, each a constant with its reason, and the checks that refuse a model beyond them.

Three checks, each failing with one ConversionError that names what is too big, by how much and the limit:
* `check_model(proto)`, before shape inference: the model's opsets are ones onnx knows (and so
  onnxruntime: 1.32 refuses an opset past onnx's); no string tensor (ttnn has no string type); no
  attribute or constant operand that asks for more work than any device could hold (pool windows, Tile
  repeats, Expand / ConstantOfShape shapes, Resize scales and sizes, constant Range lengths).  It runs first
  because shape inference itself would do the work: ONNX data propagation materialises a constant Range; and
  no attribute on which shape inference crashes the process (`crashes_inference`).
* `check_tensors(graph, device, dtype)`, after import: every tensor of known shape fits one chip's DRAM.
* `check_dram_plan(graph, device, chips)`, after the pipeline: the DRAM buffers live at once fit each chip's
  banks; else the error names the smallest mesh that would hold them (memory/capacity.py).
Sizes are lower bounds (no tile padding, the narrowest device dtype), so a model that fits is never refused.
"""
from __future__ import annotations

import math

import numpy as np
import onnx
import onnx_graphsurgeon as gs
from onnx import numpy_helper

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.device import DEVICES, DeviceSpec
from onnx2ttnn.messages import escape_name

# The highest opset of each domain the installed onnx knows.  onnxruntime 1.32 (the version checked) knows
# the same default-domain opset (28 with onnx 1.23) and refuses the next one ("Opset 29 is under development").
KNOWN_OPSETS = {"": onnx.defs.onnx_opset_version(), "ai.onnx": onnx.defs.onnx_opset_version(),
                "ai.onnx.ml": max(row[3] for row in onnx.helper.VERSION_TABLE)}

# No tensor can hold more elements than the largest DRAM of any supported chip has bytes (p150: 8 banks of
# 4_277_141_376 B, ir/device.py), since the narrowest device dtype (uint8) takes one byte per element.
# It bounds what a single repeat count, shape or scale attribute may ask for before any shape is known.
MAX_TENSOR_ELEMENTS = max(d.dram_banks * d.dram_bank_bytes for d in DEVICES.values())

# The pool lowering's exact path (lowering/pool.py) emits one ttnn.slice per window element, so a window
# is work proportional to its size.  2**20 (a 1024 x 1024 window) is ten times the largest in the zoo
# (EfficientNet's 320 x 320 AvgPool over a 2x2 map); a 200-byte AveragePool with kernel_shape [2**31, 2]
# built 2**32 slices (23 GB before it died).
MAX_WINDOW_ELEMENTS = 2**20

# ONNX shape inference with data propagation (frontend/shapes.py) writes a constant Range's values out as
# shape dims, ~150 B and 0.33 us per element (measured, onnx 1.23.2: 2**20 elements 0.5 s and 200 MB,
# 2**24 5.6 s and 2.4 GB, 2**40 never returns).  2**20 is 256 times a 4096-token position-id Range.
MAX_RANGE_ELEMENTS = 2**20

# The converter's own onnxruntime runs of the whole model (measure-weight-gain's two, settle-dtype's two for a
# quantized model; lowering/weight_gain.py, bf16_activations.py) stop after this long each, the measurement
# then skipped and its reason noted: a valid model can take any time (fuzz seed 163 case 1008: a Loop of 2^30
# iterations, hours in onnxruntime; the conversion never ended).  300 s is 57 times the full-size ViT QDQ's
# two runs (5.3 s, docs/design.md §6.40).
MEASURE_SECONDS = 300

_POOLS = {"AveragePool", "MaxPool", "LpPool"}
_SHOWN = 5  # names listed in a message before "..."


INT64_MAX = 2**63 - 1  # ONNX dims are int64


# --- before shape inference -----------------------------------------------------------------------------------
def check_input_shapes(shapes: dict) -> None:
    """Every dim given for an input (--input-shape) is a positive int64."""
    for name, shape in shapes.items():
        for d in shape:
            if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or not 0 < int(d) <= INT64_MAX:
                raise ConversionError(f"input shape {escape_name(name)} {tuple(shape)!r}: dimension {d!r} is not an "
                                      f"integer from 1 to {INT64_MAX} (int64, as ONNX dims are)")


def check_model(model: onnx.ModelProto) -> None:
    """Opsets known, no string tensor, no attribute asking for more work than the limits allow."""
    _check_opsets(model)
    constants = _small_constants(model.graph)
    strings = _string_tensors(model.graph)
    if strings:
        raise ConversionError("string tensors cannot be converted (ttnn has no string type): "
                              + _listed(strings))
    for node in _all_nodes(model.graph):
        if node.domain in ("", "ai.onnx"):
            crash = crashes_inference(node)
            if crash:
                name = escape_name(node.name or (node.output[0] if node.output else ""))
                raise ConversionError(f"invalid model: node {name} ({node.op_type}): {crash}")
            _check_work(node, constants)


def crashes_inference(node: onnx.NodeProto) -> str:
    """Why onnx's shape inference (1.23) and onnxruntime's session (1.32) would end the process on this node
    with a segmentation fault, not an error ('' when they would not): GatherND's negative batch_dims (fuzz seed
    157 case 380: -3; probed: -2 and -3 crash both, -1 passes inference and onnxruntime refuses it at run time;
    the spec counts batch dims, none below 0)."""
    if node.op_type == "GatherND":
        batch = next((a.i for a in node.attribute if a.name == "batch_dims"), 0)
        if batch < 0:
            return f"batch_dims {batch} must not be negative"
    return ""


def _check_opsets(model: onnx.ModelProto) -> None:
    for entry in model.opset_import:
        known = KNOWN_OPSETS.get(entry.domain)
        if known is not None and not 1 <= entry.version <= known:
            domain = entry.domain or "ai.onnx"
            raise ConversionError(
                f"the model imports opset {entry.version} of {domain}, which onnx {onnx.__version__} does not "
                f"know (it knows opsets 1 to {known}, and so does onnxruntime); export it with opset {known} "
                "or lower")


def _all_nodes(graph: onnx.GraphProto):
    """Every node of `graph` and of its subgraphs (If / Loop / Scan bodies)."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for sub in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                yield from _all_nodes(sub)


def _string_tensors(graph: onnx.GraphProto) -> list[str]:
    """'input x', 'initializer w', ... of every string-typed tensor the graph declares or holds."""
    found = []
    for role, values in (("input", graph.input), ("output", graph.output)):
        found += [f"{role} {escape_name(v.name)}" for v in values
                  if v.type.tensor_type.elem_type == onnx.TensorProto.STRING]
    found += [f"initializer {escape_name(t.name)}" for t in graph.initializer
              if t.data_type == onnx.TensorProto.STRING]
    for node in _all_nodes(graph):
        if node.op_type == "Constant" and any(
                a.name in ("value_string", "value_strings")
                or (a.name == "value" and a.t.data_type == onnx.TensorProto.STRING) for a in node.attribute):
            found.append(f"constant {escape_name(node.output[0] if node.output else node.name)}")
    return found


def _small_constants(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    """Values of the initializers and Constant nodes with at most 64 elements held in the model (the
    operands the checks read: repeats, shapes, scales, Range bounds)."""
    values = {}
    for tensor in graph.initializer:
        if _is_small(tensor):
            values[tensor.name] = numpy_helper.to_array(tensor)
    for node in _all_nodes(graph):
        if node.op_type != "Constant" or not node.output:
            continue
        for attr in node.attribute:
            if attr.name == "value" and _is_small(attr.t):
                values[node.output[0]] = numpy_helper.to_array(attr.t)
            elif attr.name in ("value_int", "value_float"):
                values[node.output[0]] = np.array(attr.i if attr.name == "value_int" else attr.f)
            elif attr.name in ("value_ints", "value_floats"):
                values[node.output[0]] = np.array(list(attr.ints if attr.name == "value_ints" else attr.floats))
    return values


def _is_small(tensor: onnx.TensorProto) -> bool:
    return (math.prod(tensor.dims) <= 64 and tensor.data_type != onnx.TensorProto.STRING
            and tensor.data_location != onnx.TensorProto.EXTERNAL)


def _check_work(node: onnx.NodeProto, constants: dict) -> None:
    """Refuse a node whose attributes or constant operands ask for more than the limits allow."""
    def operand(i):
        return constants.get(node.input[i]) if len(node.input) > i and node.input[i] else None

    what = f"{node.op_type} {escape_name(node.name or (node.output[0] if node.output else ''))}"
    if node.op_type in _POOLS:
        kernel = next((list(a.ints) for a in node.attribute if a.name == "kernel_shape"), [])
        _refuse_over(what, f"kernel_shape {kernel} is a window of", math.prod(kernel), MAX_WINDOW_ELEMENTS,
                     "MAX_WINDOW_ELEMENTS", "elements")
    elif node.op_type in ("Tile", "Expand", "ConstantOfShape"):
        value = operand(0 if node.op_type == "ConstantOfShape" else 1)
        if value is not None and value.size:
            label = {"Tile": "repeats", "Expand": "shape", "ConstantOfShape": "shape"}[node.op_type]
            count = math.prod(int(v) for v in value.reshape(-1))
            _refuse_over(what, f"{label} {value.reshape(-1).tolist()} asks for", count, MAX_TENSOR_ELEMENTS,
                         "MAX_TENSOR_ELEMENTS", "elements")
    elif node.op_type in ("Resize", "Upsample"):
        for index, label in ((3, "sizes"), (2 if node.op_type == "Resize" else 1, "scales")):
            value = operand(index)
            if value is not None and value.size and np.all(np.isfinite(value)):
                count = math.prod(float(v) for v in value.reshape(-1))
                _refuse_over(what, f"{label} {value.reshape(-1).tolist()} ask for", count, MAX_TENSOR_ELEMENTS,
                             "MAX_TENSOR_ELEMENTS", "times the input's elements" if label == "scales" else "elements")
    elif node.op_type == "Range":
        bounds = [operand(i) for i in range(3)]
        if all(b is not None and b.size == 1 for b in bounds):
            start, limit, delta = (float(b.reshape(-1)[0]) for b in bounds)
            if delta != 0 and all(map(math.isfinite, (start, limit, delta))):
                count = max(math.ceil((limit - start) / delta), 0)
                _refuse_over(what, f"start {_num(start)}, limit {_num(limit)}, delta {_num(delta)} make", count,
                             MAX_RANGE_ELEMENTS, "MAX_RANGE_ELEMENTS", "elements")


def _refuse_over(what: str, asks: str, count, limit: int, name: str, unit: str) -> None:
    if count > limit:
        raise ConversionError(f"{what}: {asks} {int(count)} {unit}, more than the converter accepts "
                              f"({name} = {limit}; see docs/errors.md)")


# --- after import: one tensor against one chip -------------------------------------------------------------
def element_bytes(dtype, compute_dtype: str) -> int:
    """The fewest bytes an element of a tensor of numpy `dtype` takes on the device: floats in the compute
    dtype (bf16: 2, fp32: 4), integers and booleans in the narrowest ttnn type for them (uint8 / uint16).
    A type numpy lacks (graphsurgeon keeps bfloat16 as ONNX's enum) counts as one byte."""
    dtype = _numpy_dtype(dtype)
    if dtype is None:
        return 1
    if dtype.kind == "f":
        return 2 if compute_dtype == "bf16" else 4
    return min(dtype.itemsize, 2)


def _numpy_dtype(dtype):
    """`dtype` as a numpy dtype, or None for an ONNX type numpy has no dtype for (bfloat16, float8)."""
    try:
        return np.dtype(dtype)
    except TypeError:
        return None


def _is_string(dtype) -> bool:
    if dtype is None:
        return False
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        return int(dtype) == onnx.TensorProto.STRING
    numpy_dtype = _numpy_dtype(dtype)
    return numpy_dtype is not None and numpy_dtype.kind in "OSU"


def check_tensors(graph: gs.Graph, device: DeviceSpec, compute_dtype: str) -> None:
    """Every tensor whose shape is known fits in the DRAM of one chip; no tensor is a string."""
    strings = [f"tensor {escape_name(t.name)}" for t in graph.tensors().values() if _is_string(t.dtype)]
    if strings:
        raise ConversionError("string tensors cannot be converted (ttnn has no string type): " + _listed(strings))
    available = device.dram_banks * device.dram_bank_bytes
    for tensor in graph.tensors().values():
        shape = tensor.shape
        if shape is None or tensor.dtype is None or not all(isinstance(d, (int, np.integer)) and d >= 0 for d in shape):
            continue
        needed = math.prod(int(d) for d in shape) * element_bytes(tensor.dtype, compute_dtype)
        if needed > available:
            raise ConversionError(
                f"tensor {escape_name(tensor.name)} {list(int(d) for d in shape)} needs at least {_bytes(needed)} of "
                f"device memory, more than the {_bytes(available)} of DRAM of one {device.name} chip "
                f"({device.dram_banks} banks of {device.dram_bank_bytes} B)")


# --- after the pipeline: the plan against the chip ---------------------------------------------------------------
def check_dram_plan(graph: gs.Graph, device: DeviceSpec, chips: int = 1, tp: int = 1) -> None:
    """The DRAM buffers live at the same time fit in each DRAM bank of each chip (interleaved pages,
    round-robin; memory/capacity.py); the error names the parameters' and activations' share and the smallest
    mesh of the device table that would hold the program (an estimate).  `chips`: the chips the batch is split
    over (a data-parallel program's graph is one chip's); `tp`: the chips each layer is split over (tensor
    parallel: the graph's parameters are one chip's part, about 1/tp of the model's)."""
    from onnx2ttnn.memory.capacity import dram_budget, dram_use, smallest_mesh

    use = dram_use(graph, device)
    if use.peak <= device.dram_bank_bytes:
        return
    node = graph.nodes[use.at]
    written = escape_name(node.outputs[0].name if node.outputs else node.name)
    where = f" on each of its {chips * tp} chips" if chips * tp > 1 else ""
    raise ConversionError(
        f"the program needs {_bytes(use.peak_bytes)} of DRAM at once{where} ({_bytes(use.peak)} in each of "
        f"the {device.dram_banks} banks, at ttnn.{node.op} writing {written}), more than the "
        f"{_bytes(dram_budget(device))} of one {device.name} chip ({device.dram_banks} banks of "
        f"{device.dram_bank_bytes} B): parameters {_bytes(use.parameter_bytes)}, activations up to "
        f"{_bytes(use.activation_bytes)} per chip; {_mesh_hint(smallest_mesh(use, device, chips, tp), use, chips)}")


def _mesh_hint(fit, use, chips: int) -> str:
    """The smallest mesh that would hold the program, or why none would (memory/capacity.py's estimate)."""
    estimate = "an estimate: tensor parallel divides the parameters over the chips, every chip holds the " \
               "whole batch's activations"
    if fit is None:
        return (f"no mesh of the device table would hold it ({estimate}: "
                f"{_bytes(use.activation_bytes * chips)}); use smaller input shapes")
    return (f"the smallest mesh that would hold it: {fit.chips} chips, --device {fit.device} --mesh "
            f"{fit.rows}x{fit.cols} --parallel tp, {_bytes(fit.per_chip)} per chip of {_bytes(fit.available)} "
            f"({estimate})")


def _num(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def _bytes(count: int) -> str:
    return f"{count} B ({count / 1e9:.1f} GB)" if count >= 1e8 else f"{count} B"


def _listed(items: list[str]) -> str:
    return ", ".join(items[:_SHOWN]) + (f", ... ({len(items)} in all)" if len(items) > _SHOWN else "")
