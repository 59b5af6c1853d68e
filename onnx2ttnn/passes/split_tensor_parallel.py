"""split-tensor-parallel: Megatron pairs of a transformer split over the chips of the mesh's tp axis.

Reads: Module.tp (chips along mesh axis 1 sharing each layer, 1: nothing to do), the ttnn nodes after fusion
(fused attention from lowering/attention.py, linears with epilogues).  Writes: per-chip shapes and the note
`_tp` (each output's split along the tp axis: a dim, `partial`, or None) on the nodes it splits; the weights
keep their whole values (the upload's mesh mapper splits them: place-on-mesh, assign-memory-configs), except a
fused QKV weight and bias, whose columns are regrouped chip by chip (each chip's q, k and v heads side by
side), and a row-parallel bias, divided by the chips (each chip adds its share to its partial sum; exact for
a power-of-two chip count); padded weights are stored padded.  Must hold: fusion and epilogues done, layouts not yet assigned.
Pairs: attention (QKV linear column-parallel, heads split: num_heads / chips heads per chip through split /
SDPA / concatenate_heads, output projection row-parallel) and feed-forward (a linear whose result only
reshapes and a second linear read: the first column-parallel, the second row-parallel).  A row-parallel
linear gives partial sums: an `all_reduce(cluster_axis=1)` follows it, before the residual add.  Everything
else (norms, a pooler) is replicated; an embedding table whose width splits into whole tiles per chip is
split on its width, an `all_gather(dim=-1, cluster_axis=1)` after the lookup.  A vocab projection (an LM head
or a classifier wider than the model) is column-parallel over its output columns: the rule is a linear no pair
took, with a 2-D weight parameter [K, N], N > K and N >= chips x 32, whose result only the download of a graph
output reads; its columns padded with zero columns to whole tiles per chip, then `all_gather(dim=-1,
cluster_axis=1)` joins the logits and a `slice` drops the padding (BERT's and ViT's poolers, [768, 768], are
not vocab projections and stay whole).  Heads that do not divide by the chips are padded with
zero heads, feed-forward widths to whole tiles per chip with zero columns (and the matching zero rows of the
row-parallel weight): exact, at the cost of the padding's work.  A model without a pair, or an attention whose
heads reach other ops or whose mask has one row per head, is refused naming the node.
Before (2 chips): `y = linear(x, w[64, 256]); z = linear(y, v[256, 64])`; after: `y: [.., 128] _tp=(last,)`,
`z = linear(y, v[128, 64]) _tp=(partial,)`, `r = all_reduce(z, cluster_axis=1)` read where z was; a head
`logits = linear(h, u[64, 500])` read by a download becomes `linear(h, u[64, 256]) _tp=(last,)` (500 padded to
512), `all_gather(.., dim=-1, cluster_axis=1)` to 512 columns, `slice` to 500, read by the download.
"""
from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.ccl_cost import cheaper_reduction
from onnx2ttnn.ir.graph import Module, replace_uses, ttnn_node
from onnx2ttnn.ir.layout import PARTIAL, TILE, TP_AXIS
from onnx2ttnn.lowering.attention import CONCAT, SDPA, SOFTMAX, SPLIT
from onnx2ttnn.passes.base import Pass, PassContext

HEAD_OPS = frozenset({SDPA, SOFTMAX, "matmul", "softmax", "multiply", "isnan", "where"})  # per-head work
CCL = "all_reduce"


class SplitTensorParallel(Pass):
    name = "split-tensor-parallel"

    def run(self, module: Module, ctx: PassContext) -> None:
        tp = module.tp
        if tp == 1:
            return
        graph = module.graph
        params = {n.attrs["_param"] for n in graph.nodes if n.attrs.get("_param")}
        rows = [_attention(split, tp, graph, params) for split in list(graph.nodes) if split.op == SPLIT]
        done = {id(n) for n in rows}
        rows += [_feed_forward(node, tp, graph, params) for node in list(graph.nodes)
                 if node.op == "linear" and id(node) not in done and _pair(node) is not None]
        rows = [r for r in rows if r is not None]
        if not rows:
            raise ConversionError("tensor parallel (--parallel tp): the model has no attention or feed-forward "
                                  "pair of linears to split over the chips; use --parallel dp")
        for row in rows:
            _reduce(row, graph, tp, ctx.device)
        tables = [n for n in list(graph.nodes) if n.op == "embedding" and _table(n, tp) is not None]
        for node in tables:
            _embedding(node, tp, graph, params)
        heads = [n for n in list(graph.nodes) if _vocab_projection(n, tp)]
        for node in heads:
            _vocab_parallel(node, tp, graph, params)
        graph.toposort()
        module.notes[self.name] = {"chips": tp, "row_parallel": len(rows), "embeddings": len(tables),
                                   "vocab_parallel": len(heads)}


def _fail(node: gs.Node, why: str) -> None:
    raise ConversionError(f"tensor parallel (--parallel tp): ttnn.{node.op} (from "
                          f"{node.attrs.get('_source', '')!r}) {why}")


def _upload(tensor: gs.Tensor):
    """The parameter upload producing `tensor` (None if it is not a parameter)."""
    producer = tensor.inputs[0] if tensor.inputs else None
    return producer if producer is not None and producer.attrs.get("_param") else None


def _own_upload(tensor: gs.Tensor, reader: gs.Node, graph: gs.Graph, params: set, tag: str) -> gs.Node:
    """`reader`'s parameter upload of `tensor`, copied when others read it too (their placement differs)."""
    upload = _upload(tensor)
    if upload is None:
        _fail(reader, "reads a weight that is not a parameter")
    if len(tensor.outputs) == 1:
        return upload
    name = f"{upload.attrs['_param']}_{tag}"
    while name in params:
        name += "_"
    params.add(name)
    out = gs.Variable(tensor.name + f"_{tag}", dtype=tensor.dtype, shape=list(tensor.shape))
    attrs = {k: v for k, v in upload.attrs.items() if k != "_param"}
    copy = gs.Node(op=upload.op, name="", domain=upload.domain, attrs=dict(attrs, _param=name),
                   inputs=list(upload.inputs), outputs=[out])
    graph.nodes.append(copy)
    reader.inputs[list(reader.inputs).index(tensor)] = out
    return copy


def _split_param(upload: gs.Node, dim: int, tp: int, values: np.ndarray) -> None:
    """The upload's device tensor becomes one chip's piece (dim `dim` / tp) of `values`, the (padded) whole
    host values it now uploads."""
    out = upload.outputs[0]
    dim = dim % len(out.shape)
    whole = [int(d) for d in out.shape]
    whole[dim] = int(values.shape[dim - len(out.shape)])
    upload.inputs[0] = gs.Constant(upload.inputs[0].name + "_tp", np.ascontiguousarray(values))
    if tuple(values.shape) != tuple(whole):
        upload.attrs["_shape"] = tuple(whole)
    out.shape = [d // tp if k == dim else d for k, d in enumerate(whole)]
    upload.attrs["_tp"] = (dim,)


def _per_chip(node: gs.Node, sizes: tuple) -> None:
    """Each output's (dim, one chip's size) (None: left whole), recorded as its split."""
    for tensor, size in zip(node.outputs, sizes):
        if size is not None:
            shape = [int(d) for d in tensor.shape]
            shape[size[0]] = size[1]
            tensor.shape = shape
    node.attrs["_tp"] = tuple(None if size is None else size[0] for size in sizes)


def _pad(values: np.ndarray, axis: int, size: int) -> np.ndarray:
    """`values` with zeros appended on `axis` up to `size`: padded columns compute zeros that padded (zero)
    rows of the next weight drop, so the result is exact."""
    extra = size - values.shape[axis]
    if extra == 0:
        return values
    widths = [(0, 0)] * values.ndim
    widths[axis] = (0, extra)
    return np.pad(values, widths)


def _last(tensor: gs.Tensor) -> int:
    return len(tensor.shape) - 1


def _column(linear: gs.Node, tp: int, graph, params, width: int, regroup=None) -> None:
    """A column-parallel linear writing `width` columns (its own, zero-padded): weight and bias split on
    their last dim (padded, or regrouped when asked)."""
    for index in (1, 2):
        if len(linear.inputs) > index and linear.inputs[index].name:
            upload = _own_upload(linear.inputs[index], linear, graph, params, "tp_columns")
            values = np.asarray(upload.inputs[0].values)
            values = regroup(values) if regroup else _pad(values, -1, width)
            _split_param(upload, -1, tp, values)
    _per_chip(linear, ((_last(linear.outputs[0]), width // tp),))


def _row(linear: gs.Node, tp: int, graph, params, rows: int) -> gs.Node:
    """A row-parallel linear reading `rows` rows (zero-padded): weight split on its rows, bias divided by the
    chips; gives partial sums."""
    upload = _own_upload(linear.inputs[1], linear, graph, params, "tp_rows")
    _split_param(upload, 0, tp, _pad(np.asarray(upload.inputs[0].values), 0, rows))
    if len(linear.inputs) > 2 and linear.inputs[2].name:
        bias = _own_upload(linear.inputs[2], linear, graph, params, "tp_share")
        share = np.asarray(bias.inputs[0].values) / np.asarray(tp, dtype=np.asarray(bias.inputs[0].values).dtype)
        bias.inputs[0] = gs.Constant(bias.inputs[0].name + "_tp_share", share)
        bias.attrs["_tp"] = (None,)
    linear.attrs["_tp"] = (PARTIAL,)
    return linear


def _regroup_qkv(tp: int, width: int):
    """Columns [q | k | v] -> [q0 k0 v0 | q1 k1 v1 | ...]: chip c's heads of each side by side, each of q, k, v
    zero-padded to `width` columns first (whole heads: padded heads see zero queries and keys, and their
    zero values and zero output-projection rows add nothing)."""
    def regroup(values: np.ndarray) -> np.ndarray:
        parts = [_pad(p, -1, width) for p in np.split(values, 3, axis=-1)]
        return np.concatenate([np.split(p, tp, axis=-1)[c] for c in range(tp) for p in parts], axis=-1)
    return regroup


def _attention(split: gs.Node, tp: int, graph, params):
    """Split one fused attention; returns its output projection (row-parallel), or None when it has none."""
    qkv = split.inputs[0]
    linear = qkv.inputs[0] if qkv.inputs else None
    heads = int(split.attrs["num_heads"])
    if linear is None or linear.op != "linear" or len(qkv.outputs) != 1:
        _fail(split, "reads heads that no linear of its own computes")
    head = int(qkv.shape[-1]) // 3 // heads
    padded = -(-heads // tp) * tp  # heads padded with zero heads to a multiple of the chips
    _column(linear, tp, graph, params, 3 * padded * head, _regroup_qkv(tp, padded * head))
    split.attrs["num_heads"] = padded // tp
    _per_chip(split, ((1, padded // tp),) * 3)
    concat = _heads(split, padded // tp)
    _per_chip(concat, ((_last(concat.outputs[0]), padded // tp * head),))
    readers = list(concat.outputs[0].outputs)
    if len(readers) != 1 or readers[0].op != "linear" or _upload(readers[0].inputs[1]) is None:
        _fail(concat, "is not read by one output projection (a linear with a weight parameter)")
    return _row(readers[0], tp, graph, params, padded * head)


def _heads(split: gs.Node, heads: int) -> gs.Node:
    """Walk the per-head ops from the split to concatenate_heads, each output's heads dim one chip's `heads`."""
    seen, todo, concat = {id(split)}, list(split.outputs), None
    while todo:
        for reader in list(todo.pop().outputs):
            if id(reader) in seen:
                continue
            seen.add(id(reader))
            if reader.op == CONCAT:
                concat = reader
                continue
            if reader.op not in HEAD_OPS:
                _fail(reader, "reads attention heads; tensor parallel splits heads only through the attention ops")
            for tensor in reader.inputs:
                shape = tensor.shape or ()
                if len(shape) == 4 and int(shape[1]) not in (1,) and not _head_split(tensor, seen):
                    _fail(reader, "takes a mask with one row per head; it cannot be split over the chips")
            _per_chip(reader, tuple((1, heads) if len(t.shape or ()) == 4 else None for t in reader.outputs))
            todo += reader.outputs
    if concat is None:
        _fail(split, "has no concatenate_heads after its heads")
    return concat


def _head_split(tensor: gs.Tensor, seen: set) -> bool:
    return bool(tensor.inputs) and id(tensor.inputs[0]) in seen


def _pair(first: gs.Node):
    """(the reshapes between, the second linear) when `first`'s result reaches only a second linear, through
    reshapes keeping its last dim; both with weight parameters. None otherwise."""
    if len(first.inputs) < 2 or _upload(first.inputs[1]) is None or first.attrs.get("_tp"):
        return None
    width, chain, tensor = first.outputs[0].shape[-1], [], first.outputs[0]
    while len(tensor.outputs) == 1 and tensor.outputs[0].op == "reshape":
        reshape = tensor.outputs[0]
        if reshape.outputs[0].shape[-1] != width:
            return None
        chain.append(reshape)
        tensor = reshape.outputs[0]
    readers = tensor.outputs
    if (len(readers) != 1 or readers[0].op != "linear" or readers[0].inputs[0] is not tensor
            or _upload(readers[0].inputs[1]) is None or readers[0].attrs.get("_tp")):
        return None
    return chain, readers[0]


def _feed_forward(first: gs.Node, tp: int, graph, params):
    found = _pair(first)
    if found is None or first.attrs.get("_tp"):  # (taken by an earlier pair)
        return None
    chain, second = found
    width = -(-int(first.outputs[0].shape[-1]) // (tp * TILE)) * tp * TILE  # whole tiles on every chip
    _column(first, tp, graph, params, width)
    for reshape in chain:
        reshape.attrs["shape"] = tuple(reshape.attrs["shape"][:-1]) + (width // tp,)
        _per_chip(reshape, ((_last(reshape.outputs[0]), width // tp),))
    return _row(second, tp, graph, params, width)


def _table(node: gs.Node, tp: int):
    """An embedding's float table [rows, width] when its width splits into whole tiles per chip (else None)."""
    upload = _upload(node.inputs[1])
    shape = node.inputs[1].shape or ()
    if upload is None or len(shape) != 2 or int(shape[1]) % (tp * TILE) or node.outputs[0].shape[-1] != shape[1]:
        return None
    return upload


def _embedding(node: gs.Node, tp: int, graph, params) -> None:
    """An embedding table split on its width (each chip looks up its columns; the memory of a vocab-parallel
    table, without its masking), then `all_gather(dim=-1, cluster_axis=1)` joins the columns."""
    upload = _own_upload(node.inputs[1], node, graph, params, "tp_columns")
    _split_param(upload, -1, tp, np.asarray(upload.inputs[0].values))
    out = node.outputs[0]
    width = int(out.shape[-1])
    _per_chip(node, ((_last(out), width // tp),))
    _gather(node, width, graph, tp)


def _gather(node: gs.Node, width: int, graph, tp: int) -> gs.Variable:
    """`all_gather(dim=-1, cluster_axis=1)` of `node`'s column-split output into its `width` columns, read
    wherever the output was; returns the gathered tensor."""
    out = node.outputs[0]
    whole = gs.Variable(out.name + "_gathered", dtype=out.dtype, shape=[int(d) for d in out.shape[:-1]] + [width])
    replace_uses(out, whole)
    graph.outputs = [whole if t is out else t for t in graph.outputs]
    graph.nodes.append(ttnn_node("all_gather", [out], [whole], node.attrs.get("_source", ""), dim=-1,
                                 cluster_axis=TP_AXIS, _tp=(None,), _ccl_chips=tp))
    return whole


def _vocab_projection(node: gs.Node, tp: int) -> bool:
    """True for a linear no pair took whose weight is a 2-D parameter [K, N] widening the model (N > K) to at
    least a tile per chip, and whose result only the download of a graph output reads: an LM head (a pooler's
    square weight, or a linear feeding more layers, is not one)."""
    if node.op != "linear" or node.attrs.get("_tp") or node.attrs.get("transpose_b") or len(node.inputs) < 2:
        return False
    shape = node.inputs[1].shape or ()
    readers = node.outputs[0].outputs
    return (_upload(node.inputs[1]) is not None and len(shape) == 2 and int(shape[1]) > int(shape[0])
            and int(shape[1]) >= tp * TILE and len(readers) > 0
            and all(r.op == "to_torch" and r.attrs.get("_output") for r in readers))


def _vocab_parallel(node: gs.Node, tp: int, graph, params) -> None:
    """The vocab projection column-parallel: each chip computes its columns (the vocab padded with zero
    columns to whole tiles per chip), `all_gather` joins them, a `slice` drops the padding; verify's probes of
    the logits move to the whole value."""
    out = node.outputs[0]
    vocab = int(out.shape[-1])
    width = -(-vocab // (tp * TILE)) * tp * TILE
    _column(node, tp, graph, params, width)
    whole = _gather(node, width, graph, tp)
    probes = node.attrs.pop("_probes", None)
    last = whole.inputs[0]
    if width != vocab:
        cut = gs.Variable(out.name + "_vocab", dtype=out.dtype, shape=[int(d) for d in out.shape[:-1]] + [vocab])
        replace_uses(whole, cut)
        graph.outputs = [cut if t is whole else t for t in graph.outputs]
        rank = len(out.shape)
        last = ttnn_node("slice", [whole], [cut], node.attrs.get("_source", ""), slice_start=[0] * rank,
                         slice_end=[int(d) for d in cut.shape], slice_step=[1] * rank, _tp=(None,))
        graph.nodes.append(last)
    if probes:
        last.attrs["_probes"] = probes


def _reduce(linear: gs.Node, graph: gs.Graph, tp: int, device) -> None:
    """`all_reduce(cluster_axis=1)` of the row-parallel linear's partial sums, read wherever they were: the form
    the cost model prefers (ir/ccl_cost.py cheaper_reduction), which is all_reduce at every size (the pair sends the
    same bytes in one more call: docs/design.md §6.29); the pair is not emitted."""
    partial = linear.outputs[0]
    form = cheaper_reduction(math.prod(int(d) for d in partial.shape) * 2, tp, device)  # bf16 bytes per chip
    if form != (CCL,):
        raise AssertionError(f"the cost model prefers {' + '.join(form)} to {CCL}; emitting it is not built")
    whole = gs.Variable(partial.name + "_reduced", dtype=partial.dtype, shape=list(partial.shape))
    replace_uses(partial, whole)
    graph.outputs = [whole if t is partial else t for t in graph.outputs]
    graph.nodes.append(ttnn_node(CCL, [partial], [whole], linear.attrs.get("_source", ""),
                                 cluster_axis=TP_AXIS, _tp=(None,), _ccl_chips=tp))
