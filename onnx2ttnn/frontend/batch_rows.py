"""Whether a GatherND that reads batch rows picks each chip's own rows (frontend/batch_split.py).

Exporters write `x[arange(batch)[:, None], j]` (BERT's extended attention mask) as GatherND(x, indices) whose
indices are built from the input shapes alone: a Range to the batch size, Expand, Concat.  On one chip of a
data-parallel program the Range runs to the per-chip batch, so indices[i, ..., 0] == i keeps chip c's row
i as row i: the split is safe exactly when that holds.  The indices are computed here, at the per-chip
shapes, by onnx's reference evaluator on the nodes they come from; indices that depend on input values (not
only on shapes) cannot be checked and are refused.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from onnx2ttnn.errors import ConversionError

_SHAPE_READERS = ("Shape", "Size")
_NUMPY = {onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32, onnx.TensorProto.FLOAT: np.float32,
          onnx.TensorProto.BOOL: np.bool_}


def gather_indices(proto: onnx.ModelProto, inputs: dict) -> dict:
    """{GatherND node's output name: its indices at these input shapes} for every GatherND whose indices depend on the
    input shapes only (others are left out: check_local_rows refuses them when they read batch rows)."""
    found = {}
    producers = {out: n for n in proto.graph.node for out in n.output}
    for node in proto.graph.node:
        if node.op_type == "GatherND" and len(node.input) > 1:
            try:
                found[node.output[0]] = _evaluate(proto, node.input[1], inputs, node, producers)
            except ConversionError:
                continue
    return found


def check_local_rows(node: onnx.NodeProto, indices, dim: int) -> None:
    """Refuse `node` (a GatherND on batch rows) unless its indices (per chip; None: not computable) select
    every chip's own rows."""
    if dim != 0 or any(a.name == "batch_dims" and a.i != 0 for a in node.attribute):
        raise _refuse(node, "reads the batch rows of its data in a way this check does not follow")
    if indices is None:
        raise _refuse(node, "reads batch rows at indices that depend on input values, which cannot be checked")
    rows = np.arange(indices.shape[0]).reshape((-1,) + (1,) * (indices.ndim - 2))
    if indices.ndim < 2 or not np.array_equal(indices[..., 0], np.broadcast_to(rows, indices.shape[:-1])):
        raise _refuse(node, "picks batch rows other than each chip's own")


def _refuse(node: onnx.NodeProto, why: str) -> ConversionError:
    where = f"node {node.name!r} ({node.op_type})" if node.name else f"a {node.op_type} node (unnamed)"
    return ConversionError(f"data parallel: the batch cannot be split over the chips: {where} {why}")


def _evaluate(proto: onnx.ModelProto, name: str, per_chip: dict, gather: onnx.NodeProto,
              producers: dict) -> np.ndarray:
    """The value of `name` at the per-chip input shapes (it must depend on the inputs' shapes only: they are
    fed zeros)."""
    initializers = {t.name for t in proto.graph.initializer}
    needed, stack, seen, taken = [], [(name, False)], set(), set()
    while stack:  # (tensor, read only through a Shape or Size)
        tensor, shape_only = stack.pop()
        if (tensor, shape_only) in seen or tensor in initializers or not tensor:
            continue
        seen.add((tensor, shape_only))
        if tensor in per_chip:
            if not shape_only:
                raise _refuse(gather, "takes indices computed from the input values, not only their shapes")
            continue
        node = producers.get(tensor)
        if node is None:
            raise _refuse(gather, f"takes indices from {tensor!r}, which cannot be evaluated")
        if id(node) not in taken:
            taken.add(id(node))
            needed.append(node)
        stack.extend((inp, shape_only or node.op_type in _SHAPE_READERS) for inp in node.input)
    order = {out: k for k, n in enumerate(proto.graph.node) for out in n.output}
    needed.sort(key=lambda n: order[n.output[0]])
    used = {i for n in needed for i in n.input}
    graph = onnx.helper.make_graph(
        needed, "indices", [v for v in proto.graph.input if v.name in per_chip and v.name in used],
        [onnx.helper.make_value_info(name, onnx.TypeProto())],
        [t for t in proto.graph.initializer if t.name in used])
    model = onnx.helper.make_model(graph, opset_imports=proto.opset_import, ir_version=proto.ir_version)
    feeds = {v.name: np.zeros(per_chip[v.name], _NUMPY.get(v.type.tensor_type.elem_type, np.float32))
             for v in graph.input}
    try:
        return np.asarray(ReferenceEvaluator(model).run(None, feeds)[0])
    except Exception as exc:  # noqa: BLE001 (the evaluator's failures are many; the check cannot conclude)
        raise _refuse(gather, f"takes indices that cannot be computed here ({type(exc).__name__}: {exc})") from None
