"""Data parallel's batch split, decided on the ModelProto before import (docs/design.md §6.19).

The batch dim of a data-parallel program is dim 0 of every graph input: that is what the program shards over
the chips (`shard_tensor_to_mesh_mapper(mesh, dim=0)`).  The per-chip program is the model converted at the
per-chip input shapes (batch / chips), so the split is safe only when every chip's rows are computed from
that chip's rows alone.  It is checked by running ONNX shape inference twice on a light copy of the model
(no weight is read): at the full batch and at the per-chip batch.  A tensor is *batched* when exactly one of
its dims differs, by the factor `chips` (that dim is where its batch rows lie); then, node by node in graph
order, an op that reads a batched tensor must:
  - give batched outputs (else it reduced or contracted over the batch rows: a sum over the batch, a MatMul
    with the batch in its contracted dim; Shape and Size read only shapes and are exempt);
  - keep the batch dim where rows stay whole: a Transpose moves it with its permutation; a reshape (Reshape,
    Flatten, Squeeze, Unsqueeze) keeps the product of the dims before it (batch-major order, so the chips'
    rows stay one contiguous block each); any other op keeps it at the same position counted from the left
    or from the right (elementwise broadcasting, MatMul's batch dims, Gather's indices, Conv's N);
  - not work along it (Softmax, LayerNormalization, Concat, Split, Slice, Gather's data axis, CumSum, TopK,
    Tile repeats);
  - be an op this check understands (no Einsum, control flow or other domains with batched inputs); a
    GatherND reading batch rows must pick each chip's own rows (frontend/batch_rows.py: the exporters'
    `x[arange(batch)[:, None], ...]` indexing, checked by computing the indices).
Every graph output must be batched with only size-1 dims before its batch dim, so that the chips' pieces
concatenate into it (`concat_mesh_to_tensor_composer(mesh, dim=0)` and a reshape).
"""
from __future__ import annotations

import math
from typing import Optional

import onnx
from onnx import numpy_helper

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.batch_rows import check_local_rows, gather_indices
from onnx2ttnn.frontend.load import opset_of
from onnx2ttnn.frontend.shapes import infer_shapes, light_copy, override_input_shapes

# ops working along an axis attribute: (attribute name, default) and whether the axis and all after it are used
_AXIS_OPS = {"Softmax": ("axis", -1), "LogSoftmax": ("axis", -1), "Hardmax": ("axis", -1),
             "Concat": ("axis", None), "Split": ("axis", 0), "Gather": ("axis", 0), "TopK": ("axis", -1),
             "GatherElements": ("axis", 0), "ScatterElements": ("axis", 0), "LayerNormalization": ("axis", -1)}
_FROM_AXIS = ("LayerNormalization",)  # normalizes over the axis and every later one
_SOFTMAXES = ("Softmax", "LogSoftmax", "Hardmax")  # before opset 13: over the input flattened from `axis` (1)
_RESHAPES = ("Reshape", "Flatten", "Squeeze", "Unsqueeze")
_SHAPE_ONLY = ("Shape", "Size")
_UNCHECKED = ("Einsum", "Loop", "Scan", "If", "ScatterND", "NonZero", "Unique", "Compress")


def split_batch(proto: onnx.ModelProto, input_shapes: dict, chips: int) -> tuple[dict, dict]:
    """(per-chip input shapes, {graph output: its batch dim}) of a data-parallel split of `proto` over
    `chips` chips; a batch that does not divide, or a model whose rows cannot be split, is a ConversionError."""
    full = _full_shapes(proto, input_shapes)
    batches = {shape[0] for shape in full.values()}
    if len(batches) != 1:
        shown = ", ".join(f"{name!r} {list(shape)}" for name, shape in full.items())
        raise ConversionError(f"data parallel splits dim 0 of every input, but the inputs disagree on it: {shown}")
    batch = batches.pop()
    if batch % chips:
        raise ConversionError(f"data parallel: the batch ({batch}, dim 0 of every input) does not divide by the "
                              f"mesh's {chips} chips; give a batch that is a multiple of {chips} with --input-shape "
                              "or choose a smaller --mesh")
    per_chip = {name: (shape[0] // chips,) + tuple(shape[1:]) for name, shape in full.items()}
    whole, _ = _shapes(proto, full, "the full batch")
    part, indices = _shapes(proto, per_chip, "the per-chip batch")
    batched = {name: 0 for name in full}
    constants, opset = _constants(proto), opset_of(proto)
    for node in proto.graph.node:
        if node.op_type == "GatherND" and node.input[0] in batched:
            check_local_rows(node, indices.get(node.output[0]), batched[node.input[0]])
        _check_node(node, whole, part, chips, batched, constants, opset)
    return per_chip, _output_dims(proto, whole, batched)


def _full_shapes(proto: onnx.ModelProto, input_shapes: dict) -> dict:
    """Every graph input's full shape: --input-shape's, else the model's static one."""
    initializers = {t.name for t in proto.graph.initializer}
    shapes = {}
    for value in proto.graph.input:
        if value.name in initializers:
            continue
        if value.name in input_shapes:
            shape = tuple(input_shapes[value.name])
        else:
            dims = value.type.tensor_type.shape.dim
            if not dims or any(not d.HasField("dim_value") for d in dims):
                return {}  # import refuses symbolic inputs with its own message
            shape = tuple(d.dim_value for d in dims)
        if not shape:
            raise ConversionError(f"data parallel splits dim 0 of every input, but input {value.name!r} is a "
                                  "scalar")
        shapes[value.name] = shape
    return shapes


def _shapes(proto: onnx.ModelProto, inputs: dict, which: str) -> tuple[dict, dict]:
    """(tensor name -> shape (None where unknown) inferred at these input shapes, on a light copy; the
    GatherND indices computable from those shapes, which the copy takes as constants so that inference
    knows the shapes after them)."""
    light = light_copy(proto)
    override_input_shapes(light, inputs)
    indices = gather_indices(light, inputs)
    for node in light.graph.node:
        if node.op_type == "GatherND" and node.output[0] in indices:
            node.input[1] = f"{node.input[1]}:at {which}"
            light.graph.initializer.append(numpy_helper.from_array(indices[node.output[0]], node.input[1]))
    try:
        light = infer_shapes(light)
    except ConversionError as exc:
        raise ConversionError(f"data parallel: the model cannot be split over the chips: at {which} {exc}") from None
    out = {}
    for value in list(light.graph.value_info) + list(light.graph.output) + list(light.graph.input):
        dims = value.type.tensor_type.shape.dim
        known = value.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims)
        out[value.name] = tuple(d.dim_value for d in dims) if known else None
    return out, indices


def _constants(proto: onnx.ModelProto) -> dict:
    """Small constant tensors (axes, repeats) by name: initializers and Constant nodes."""
    values = {t.name: t for t in proto.graph.initializer if math.prod(t.dims) <= 64}
    for node in proto.graph.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            values[node.output[0]] = node.attribute[0].t
    return values


def _refuse(node: onnx.NodeProto, why: str) -> ConversionError:
    where = f"node {node.name!r} ({node.op_type})" if node.name else f"a {node.op_type} node (unnamed)"
    return ConversionError(f"data parallel: the batch cannot be split over the chips: {where} {why}")


def _batch_dim(name: str, whole: dict, part: dict, chips: int, node: onnx.NodeProto) -> Optional[int]:
    """The dim of `name` holding the batch rows (None: it does not depend on the batch)."""
    full, chip = whole.get(name), part.get(name)
    if full is None or chip is None:
        raise _refuse(node, f"has output {name!r} of unknown shape, so its batch dim cannot be identified")
    differ = [k for k, (a, b) in enumerate(zip(full, chip)) if a != b]
    if len(full) != len(chip) or len(differ) > 1 or (differ and full[differ[0]] != chips * chip[differ[0]]):
        raise _refuse(node, f"gives {name!r} shape {list(full)} at the full batch and {list(chip)} per chip, not "
                            f"one dim split {chips} ways")
    return differ[0] if differ else None


def _check_node(node: onnx.NodeProto, whole: dict, part: dict, chips: int, batched: dict, constants: dict,
                opset: int) -> None:
    """Record the batch dim of the node's outputs, refusing a node that mixes batch rows."""
    reads = [(k, name) for k, name in enumerate(node.input) if name in batched]
    if not reads:
        for name in node.output:
            if name and name in whole and whole[name] != part.get(name):
                batched[name] = _batch_dim(name, whole, part, chips, node)
        return
    if node.op_type in _SHAPE_ONLY:
        return
    if node.domain not in ("", "ai.onnx") or node.op_type in _UNCHECKED:
        raise _refuse(node, "reads the batch and is not an op the data-parallel check understands")
    _check_axes(node, reads[0][1], batched[reads[0][1]], whole, constants, opset)
    for name in node.output:
        if not name:
            continue
        dim = _batch_dim(name, whole, part, chips, node)
        if dim is None:
            raise _refuse(node, f"mixes the rows of the batch (a reduction, a contraction or a shape the model "
                                f"fixes): its output {name!r} is {list(whole[name])} whatever the batch")
        _check_moved(node, reads, dim, batched, whole, name)
        batched[name] = dim


def _check_moved(node, reads, dim: int, batched: dict, whole: dict, output: str) -> None:
    """The output's batch dim must be where the op keeps rows whole (module docstring)."""
    first, source = reads[0][0], reads[0][1]
    k, in_shape, out_shape = batched[source], whole[source], whole[output]
    if node.op_type in _RESHAPES:
        if first == 0 and math.prod(in_shape[:k]) == math.prod(out_shape[:dim]):
            return
    elif node.op_type == "Transpose":
        perm = _attr(node, "perm", list(reversed(range(len(in_shape)))))
        if list(perm).index(k) == dim:
            return
    elif dim in (k, k + len(out_shape) - len(in_shape)):
        return
    raise _refuse(node, f"moves the batch dim of {source!r} (dim {k}) to dim {dim} of {output!r}, which "
                        "interleaves the chips' rows")


def _check_axes(node: onnx.NodeProto, source: str, k: int, whole: dict, constants: dict, opset: int) -> None:
    """Refuse an op working along the batch dim of its (first batched) input."""
    rank = len(whole[source])
    axes: list = []
    if node.op_type in _AXIS_OPS:
        name, default = _AXIS_OPS[node.op_type]
        old_softmax = node.op_type in _SOFTMAXES and opset < 13
        axis = _attr(node, name, 1 if old_softmax else default)
        if node.op_type in ("Gather", "GatherElements", "ScatterElements") and source != node.input[0]:
            axis = None  # batched indices: each output row reads its own index row
        if axis is not None:
            axis %= rank
            axes = list(range(axis, rank)) if node.op_type in _FROM_AXIS or old_softmax else [axis]
    elif node.op_type == "Slice" and node.input[0] == source:
        axes = _slice_axes(node, whole, constants, rank)
    elif node.op_type == "CumSum" and node.input[0] == source:
        axes = [a % rank for a in _constant(node, node.input[1], constants)]
    elif node.op_type == "Tile" and node.input[0] == source:
        repeats = _constant(node, node.input[1], constants)
        axes = [a for a, r in enumerate(repeats) if r != 1]
    if k in axes:
        raise _refuse(node, f"works along dim {k} of {source!r}, the batch dim")


def _slice_axes(node: onnx.NodeProto, whole: dict, constants: dict, rank: int) -> list:
    """The axes a Slice cuts: its `axes` (an input from opset 10, an attribute before), else the first as many
    as it has starts."""
    if len(node.input) == 1:  # opset < 10: attributes
        starts = _attr(node, "starts", [])
        return [a % rank for a in _attr(node, "axes", range(len(starts)))]
    if len(node.input) > 3 and node.input[3]:
        return [a % rank for a in _constant(node, node.input[3], constants)]
    starts = whole.get(node.input[1])
    if starts is None or len(starts) != 1:
        raise _refuse(node, "has starts of unknown length, so whether it cuts the batch dim is unknown")
    return list(range(starts[0]))


def _constant(node: onnx.NodeProto, name: str, constants: dict) -> list:
    if name not in constants:
        raise _refuse(node, f"takes {name!r}, not a constant, so whether it works along the batch dim is unknown")
    return [int(v) for v in numpy_helper.to_array(constants[name]).reshape(-1)]


def _attr(node: onnx.NodeProto, name: str, default):
    for attr in node.attribute:
        if attr.name == name:
            return onnx.helper.get_attribute_value(attr)
    return default


def _output_dims(proto: onnx.ModelProto, whole: dict, batched: dict) -> dict:
    """Each graph output's batch dim, which must follow only size-1 dims (module docstring)."""
    dims = {}
    for value in proto.graph.output:
        dim = batched.get(value.name)
        if dim is None:
            raise ConversionError(f"data parallel: output {value.name!r} does not depend on the batch, so there is "
                                  "nothing to split over the chips")
        if math.prod(whole[value.name][:dim]) != 1:
            raise ConversionError(f"data parallel: output {value.name!r} has its batch at dim {dim} after dims "
                                  f"{list(whole[value.name][:dim])}; the chips' pieces would interleave")
        dims[value.name] = dim
    return dims
