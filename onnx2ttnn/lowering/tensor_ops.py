"""Ops that select or combine parts of tensors: Concat, Slice, Split, Gather (embedding and constant index)."""
from __future__ import annotations

import builtins

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.index_inputs import PASS_THROUGH
from onnx2ttnn.ir.ttnn_ops import Page
from onnx2ttnn.lowering.context import NHWC, LoweringContext
from onnx2ttnn.lowering.eltwise import device_uint32
from onnx2ttnn.lowering.registry import register
from onnx2ttnn.lowering.weight_dtype import embedding_dtype


@register("Concat", versions=(4, 11, 13), ttnn=("concat",))
def concat(ctx: LoweringContext, node: gs.Node) -> None:
    """Concat-4: `axis` required (Concat-1 defaulted it to 1 and has no shape inference: not claimed); 11:
    negative axes; 13: bfloat16."""
    out = node.outputs[0]
    rank = len(out.shape)
    axis = int(node.attrs["axis"]) % rank
    inputs = [t for t in node.inputs if not (isinstance(t, gs.Constant) and np.asarray(t.values).size == 0)]
    forms = [ctx.value_with_form(t)[1] if ctx.constant(t) is None else None for t in inputs]
    if axis == 1 and all(f is not None for f in forms) and len({(f.n, f.h, f.w) for f in forms}) == 1:
        xs = [ctx.value_with_form(t)[0] for t in inputs]
        f0 = forms[0]
        form = NHWC(f0.n, f0.h, f0.w, sum(f.c for f in forms))
        ctx.bind(out, ctx.op("concat", xs, form.flat_shape, name=out.name, dim=3), form)
        return
    xs = [ctx.value(t) for t in inputs]
    y = xs[0] if len(xs) == 1 else ctx.op("concat", xs, out.shape, name=out.name, dim=axis)
    ctx.bind(out, y)


def slice_(ctx, x: gs.Variable, starts, ends, steps, out_shape, name: str) -> gs.Variable:
    """ttnn.slice over all dims; a no-op slice returns the input."""
    if tuple(starts) == (0,) * len(starts) and tuple(ends) == tuple(x.shape) and set(steps) <= {1}:
        return x
    return ctx.op("slice", [x], out_shape, name=name, slice_start=list(starts), slice_end=list(ends),
                  slice_step=list(steps))


@register("Slice", versions=(10, 11, 13), ttnn=("slice", "concat"),
          note="constant starts/ends/axes/steps; an axis with a negative step is reversed by one slice per element")
def slice_op(ctx: LoweringContext, node: gs.Node) -> None:
    """Slice-10: starts/ends/axes/steps are inputs (Slice-1 had attributes and no steps: not claimed); 11:
    negative axes and steps spelled out; 13: bfloat16."""
    x = ctx.value(node.inputs[0])
    out = node.outputs[0]
    shape = list(x.shape)
    rank = len(shape)
    starts_in = ctx.require_constant(node.inputs[1], "Slice starts").reshape(-1).tolist()
    ends_in = ctx.require_constant(node.inputs[2], "Slice ends").reshape(-1).tolist()
    axes = list(range(len(starts_in)))
    if len(node.inputs) > 3 and node.inputs[3].name:
        axes = ctx.require_constant(node.inputs[3], "Slice axes").reshape(-1).tolist()
    steps_in = [1] * len(axes)
    if len(node.inputs) > 4 and node.inputs[4].name:
        steps_in = ctx.require_constant(node.inputs[4], "Slice steps").reshape(-1).tolist()
    starts, ends, steps, reversed_axes = [0] * rank, list(shape), [1] * rank, []
    for a, s, e, st in zip(axes, starts_in, ends_in, steps_in):
        a %= rank
        if st == 0:
            raise ConversionError(f"node {ctx.source!r}: Slice step must not be 0")
        picked = range(*builtins.slice(int(s), int(e), int(st)).indices(shape[a]))  # ONNX clamping rules
        if not picked:  # the host fallback computes the empty result
            ctx.decline(f"Slice selects nothing on axis {a} (ttnn has no empty tensors)")
        low, high = min(picked), max(picked)
        starts[a], ends[a], steps[a] = low, high + 1, abs(int(st))
        if st < 0 and len(picked) > 1:
            reversed_axes.append(a)
    out_shape = [len(range(s, e, st)) for s, e, st in zip(starts, ends, steps)]
    name = out.name + "_ascending" if reversed_axes else out.name
    y = slice_(ctx, x, starts, ends, steps, out_shape, name)
    for a in reversed_axes:
        y = _reverse(ctx, y, a, out.name + f"_reversed{a}")
    ctx.bind(out, y)


def _reverse(ctx, x: gs.Variable, axis: int, name: str) -> gs.Variable:
    """x with `axis` in reverse order: one slice per element, concatenated backwards."""
    shape = list(x.shape)
    rank = len(shape)
    pieces = []
    for i in reversed(range(shape[axis])):
        starts, ends = [0] * rank, list(shape)
        starts[axis], ends[axis] = i, i + 1
        piece = list(shape)
        piece[axis] = 1
        pieces.append(slice_(ctx, x, starts, ends, [1] * rank, piece, f"{name}_{i}"))
    return ctx.op("concat", pieces, shape, name=name, dim=axis)


def _equal_parts(axis_size: int, count: int) -> list[int]:
    """`count` parts of ceil(axis_size / count), the last one smaller when the division leaves a rest."""
    chunk = -(-axis_size // count)
    return [min(chunk, axis_size - i * chunk) for i in range(count)]


def _split_sizes_input(ctx, node) -> list | None:
    """The constant `split` input (sizes of the parts), None when absent."""
    if len(node.inputs) > 1 and node.inputs[1].name:
        return ctx.require_constant(node.inputs[1], "Split sizes").reshape(-1).tolist()
    return None


def _sizes_or(sizes: list | None, axis_size: int, count: int) -> list[int]:
    """`sizes` when the node gives them, else `count` equal parts."""
    return sizes if sizes is not None else _equal_parts(axis_size, count)


def _split(ctx: LoweringContext, node: gs.Node, sizes_of) -> None:
    """One ttnn.slice per output along `axis`; `sizes_of(axis size)` gives the part sizes."""
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    axis = int(node.attrs.get("axis", 0)) % rank
    offset = 0
    for out, size in zip(node.outputs, sizes_of(x.shape[axis])):
        starts, ends = [0] * rank, list(x.shape)
        starts[axis], ends[axis] = offset, offset + int(size)
        offset += int(size)
        ctx.bind(out, slice_(ctx, x, starts, ends, [1] * rank, out.shape, out.name))


@register("Split", versions=(2, 11), ttnn=("slice",), note="as one ttnn.slice per output")
def split_2(ctx: LoweringContext, node: gs.Node) -> None:
    """Split-2: part sizes in the `split` attribute, else equal parts (Split-1 also took them as an input and
    has no shape inference: not claimed); 11: negative axes."""
    _split(ctx, node, lambda size: list(node.attrs["split"]) if "split" in node.attrs
           else _equal_parts(size, len(node.outputs)))


@register("Split", versions=(13,), ttnn=("slice",), note="as one ttnn.slice per output")
def split_13(ctx: LoweringContext, node: gs.Node) -> None:
    """Split-13: the sizes became the optional `split` input (they were an attribute), else equal parts;
    bfloat16."""
    _split(ctx, node, lambda size: _sizes_or(_split_sizes_input(ctx, node), size, len(node.outputs)))


@register("Split", versions=(18,), ttnn=("slice",), note="as one ttnn.slice per output")
def split_18(ctx: LoweringContext, node: gs.Node) -> None:
    """Split-18: without the `split` input, `num_outputs` parts of ceil(size / num_outputs), the last one
    smaller (13 split into equal parts only, one per output)."""
    parts = int(node.attrs.get("num_outputs", len(node.outputs)))
    _split(ctx, node, lambda size: _sizes_or(_split_sizes_input(ctx, node), size, parts))


@register("Gather", versions=(1, 11, 13), ttnn=("embedding", "slice", "concat", "reshape", "permute"),
          note="runtime indices: float data (ttnn.embedding, negative indices wrapped); constant indices: slices")
def gather(ctx: LoweringContext, node: gs.Node) -> None:
    """Gather-1; 11: negative indices spelled out (counted from the end, as here); 13: bfloat16."""
    data, indices = node.inputs
    out = node.outputs[0]
    axis = int(node.attrs.get("axis", 0))
    table, idx = ctx.constant(data), ctx.constant(indices)
    if table is not None and idx is None and axis % table.ndim == 0 and table.ndim == 2:
        ids = ctx.value(indices)
        if ids.dtype.kind == "f" or not device_uint32(ids) or not _read_only_as_indices(ctx, indices,
                                                                                          table.shape[0]):
            ids = _wrap_negative(ctx, indices, table.shape[0], out.name)  # not uint32 on the device yet
        fmt = embedding_dtype(ctx, data.name, table)
        weight = ctx.float_param(table, data.name, key=(data.name, "embedding"), dtype=fmt)
        pinned = {"_input_layouts": (Page.ROW_MAJOR, Page.TILE)} if fmt else {}  # a block-float table is TILE
        ctx.bind(out, ctx.op("embedding", [ids, weight], out.shape, name=out.name, **pinned))
        return
    if idx is None:
        ctx.bind(out, _gather_runtime(ctx, node, axis))
        return
    x = ctx.value(data)
    rank = len(x.shape)
    axis %= rank
    flat = [int(i) % x.shape[axis] for i in _in_range(ctx, idx, x.shape[axis], f"axis {axis}")]
    pieces = []
    for k, i in enumerate(flat):
        starts, ends = [0] * rank, list(x.shape)
        starts[axis], ends[axis] = i, i + 1
        piece_shape = list(x.shape)
        piece_shape[axis] = 1
        pieces.append(slice_(ctx, x, starts, ends, [1] * rank, piece_shape, f"{out.name}_{k}"))
    if len(pieces) > 1:
        shape = list(x.shape)
        shape[axis] = len(pieces)
        y = ctx.op("concat", pieces, shape, name=out.name + "_gathered", dim=axis)
    else:
        y = pieces[0]
    ctx.bind(out, _reshape(ctx, y, out.shape, out.name))


def _in_range(ctx, indices: np.ndarray, size: int, where: str) -> np.ndarray:
    """Constant indices, flattened, each in [-size, size - 1] (ONNX counts negative ones from the end); an
    index out of range is refused: taken modulo the size it would read another row."""
    flat = indices.reshape(-1).astype(np.int64)
    bad = flat[(flat < -size) | (flat >= size)]
    if bad.size:
        raise ConversionError(f"node {ctx.source!r}: index {int(bad[0])} is out of range for {where} of size "
                              f"{size} (valid: {-size} to {size - 1})")
    return flat


def _reshape(ctx, x: gs.Variable, shape, name: str) -> gs.Variable:
    shape = tuple(int(d) for d in shape) or (1,)
    return x if tuple(x.shape) == shape else ctx.op("reshape", [x], shape, name=name, shape=shape)


def _gather_runtime(ctx, node: gs.Node, axis: int) -> gs.Variable:
    """Gather with runtime indices as ttnn.embedding: the gathered axis moved first and the other dims
    flattened form the table [N, R]; rows come back as [indices..., R] and the axis goes back in place."""
    data, indices = node.inputs
    out = node.outputs[0]
    if np.dtype(data.dtype).kind != "f":
        raise ConversionError(f"node {ctx.source!r}: Gather with runtime indices needs float data "
                              f"(ttnn.embedding tables are float), got {np.dtype(data.dtype)}")
    x = ctx.value(data)
    shape = list(x.shape)
    rank = len(shape)
    axis %= rank
    rest = shape[:axis] + shape[axis + 1:]
    if axis:
        x = ctx.op("permute", [x], [shape[axis]] + rest, name=out.name + "_axis_first",
                   dims=(axis,) + tuple(d for d in range(rank) if d != axis))
    table = _reshape(ctx, x, (shape[axis], int(np.prod(rest, dtype=np.int64))), out.name + "_table")
    ids = _wrap_negative(ctx, indices, shape[axis], out.name)
    count = int(np.prod(ids.shape, dtype=np.int64))
    ids = _reshape(ctx, ids, (1, count), out.name + "_ids")
    rows = ctx.op("embedding", [ids, table], (1, count, table.shape[1]), name=out.name + "_rows")
    y = _reshape(ctx, rows, [count] + rest, out.name + "_picked")
    if axis:
        y = ctx.op("permute", [y], rest[:axis] + [count] + rest[axis:], name=out.name + "_axis_back",
                   dims=tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, rank)))
    return _reshape(ctx, y, out.shape, out.name)


def _read_only_as_indices(ctx, indices: gs.Tensor, rows: int) -> bool:
    """Whether the values behind `indices` (through casts and reshapes, up to a graph input) are read only as
    the row indices of Gathers lowered to ttnn.embedding on tables of `rows` rows: their upload may then be
    uint32 (the program wraps negative ones on the host, decompose-layouts `_index_rows`, which asks the same
    of the ttnn graph).  Any other reader (an Add, an Equal, a Gather along another axis or of another table
    height, a graph output) must see them as given, so the indices are wrapped on the device instead.  One walk
    per source (`ctx.index_reads`), whatever the number of Gathers sharing it."""
    source = indices
    while source.inputs and source.inputs[0].op in PASS_THROUGH and source.inputs[0].inputs:
        source = source.inputs[0].inputs[0]
    key = f"{source.name}@{rows}"
    if key not in ctx.index_reads:
        ctx.index_reads[key] = _only_embedding_rows(ctx, source, rows)
    return ctx.index_reads[key]


def _only_embedding_rows(ctx, source: gs.Tensor, rows: int) -> bool:
    pending = [source]
    while pending:
        value = pending.pop()
        if value.name in ctx.output_names:
            return False
        for consumer in value.outputs:
            if consumer.op in PASS_THROUGH and consumer.inputs[0] is value:
                pending.extend(consumer.outputs)
            elif consumer.op in ("Shape", "Size"):  # reads the shape, not the values
                continue
            elif not _embedding_of(ctx, consumer, value, rows):
                return False
    return True


def _embedding_of(ctx, node: gs.Node, indices: gs.Tensor, rows: int) -> bool:
    """Whether `node` is a Gather the rule above lowers to ttnn.embedding, with `indices` its indices and a
    table of `rows` rows."""
    if node.op != "Gather" or node.inputs[1] is not indices or node.inputs[0] is indices:
        return False
    table = ctx.constant(node.inputs[0])
    return (table is not None and table.ndim == 2 and int(node.attrs.get("axis", 0)) % 2 == 0
            and int(table.shape[0]) == rows)


def _wrap_negative(ctx, indices: gs.Tensor, size: int, name: str) -> gs.Variable:
    """Runtime indices as uint32 for ttnn.embedding, negative ones (ONNX counts them from the end) wrapped,
    `where(ids < 0, ids + size, ids)`, then typecast: signed indices (uploaded from the host or pinned to
    int32 by a Cast) are wrapped in int32, indices living on the device as floats (integers a float op
    computed, e.g. a Where over Sub results) in the float dtype.  Indices a ttnn op produced as uint32
    (argmax) are non-negative already."""
    ids = ctx.value(indices)
    producer = ids.inputs[0] if ids.inputs else None
    uploaded = producer is not None and producer.op == "from_torch" and np.dtype(indices.dtype).kind == "i"
    if ids.dtype.kind == "f":
        dtype, pinned = ids.dtype, {}
    elif uploaded or not device_uint32(ids):
        dtype, pinned = np.int32, {"_dtype": "i32"}
    else:
        return ids
    shape = list(ids.shape)
    negative = ctx.op("lt", [ids], shape, name=name + "_negative", dtype=dtype, input_tensor_b=0, **pinned)
    shifted = ctx.op("add", [ids], shape, name=name + "_from_end", dtype=dtype, input_tensor_b=int(size), **pinned)
    wrapped = ctx.op("where", [negative, shifted, ids], shape, name=name + "_wrapped", dtype=dtype, **pinned)
    return ctx.op("typecast", [wrapped], shape, name=name + "_ids_u32", dtype=np.int32, _dtype="u32")


@register("GatherND", versions=(11, 12, 13), ttnn=("reshape", "slice"),
          note="constant indices selecting a contiguous range")
def gather_nd(ctx: LoweringContext, node: gs.Node) -> None:
    """GatherND-11; 12: `batch_dims` (refused unless 0, the old behaviour); 13: bfloat16."""
    data, indices = node.inputs
    out = node.outputs[0]
    if int(node.attrs.get("batch_dims", 0)) != 0:
        raise ConversionError(f"node {ctx.source!r}: GatherND with batch_dims is not supported")
    idx = ctx.require_constant(indices, "GatherND indices")
    x = ctx.value(data)
    k = idx.shape[-1]
    lead, rest = tuple(x.shape[:k]), tuple(x.shape[k:])
    for j, size in enumerate(lead):
        _in_range(ctx, idx[..., j], int(size), f"dim {j}")
    flat = np.ravel_multi_index(tuple(np.moveaxis(idx.reshape(-1, k) % np.array(lead), 1, 0)), lead)
    start, count = int(flat[0]), int(flat.size)
    if not np.array_equal(flat, np.arange(start, start + count)):
        raise ConversionError(f"node {ctx.source!r}: GatherND is supported for indices selecting a contiguous "
                              "range only")
    rows = (int(np.prod(lead)),) + rest
    y = x if tuple(x.shape) == rows else ctx.op("reshape", [x], rows, name=out.name + "_rows", shape=rows)
    y = slice_(ctx, y, [start] + [0] * len(rest), [start + count] + list(rest), [1] * len(rows),
               (count,) + rest, out.name + "_picked")
    shape = tuple(int(d) for d in out.shape) or (1,)
    if tuple(y.shape) != shape:
        y = ctx.op("reshape", [y], shape, name=out.name, shape=shape)
    ctx.bind(out, y)
