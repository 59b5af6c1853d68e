"""Integer graph inputs the model uses as row indices, and how many rows they may pick.

A generated program's `random_inputs()` (and so `verify` without `--inputs`) must give token ids that look up
different rows, or a wrong gather, a lookup table split across chips or a batch split that mixes samples would
all pass unseen (every sample would read row 1).  An integer graph input that reaches the indices of a
`Gather` — directly or through ops that only cast or reshape it — may take any value below the gathered
dim's size (ONNX makes a larger index an error, whatever the data: a constant table, a dequantized one, a
computed tensor); with several Gathers, below the smallest, and below what the input's own dtype holds.
Inputs that reach no Gather (attention masks, lengths) keep the value one, which is what masks mean.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

# ops whose first input's values pass through unchanged (cast or reshaped)
PASS_THROUGH = frozenset({"Cast", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity"})


def index_rows(graph: gs.Graph) -> dict[str, int]:
    """ONNX input name -> rows its values may index (exclusive bound), for integer inputs used as indices."""
    limits = {t.name: np.iinfo(t.dtype).max + 1 for t in graph.inputs if _integer(t.dtype)}
    rows: dict[str, int] = {}
    for node in graph.nodes:
        if node.op != "Gather" or len(node.inputs) < 2:
            continue
        shape = node.inputs[0].shape or ()
        axis = int(node.attrs.get("axis", 0))
        if not shape or not -len(shape) <= axis < len(shape) or not isinstance(shape[axis], int) or shape[axis] < 1:
            continue
        source = _source(node.inputs[1])
        if source is not None and source.name in limits:
            rows[source.name] = min(rows.get(source.name, limits[source.name]), int(shape[axis]))
    return rows


def _integer(dtype) -> bool:
    """`dtype` is a numpy integer type (graphsurgeon leaves types numpy lacks, bfloat16 or float8, as ONNX
    enum values)."""
    try:
        return dtype is not None and np.issubdtype(np.dtype(dtype), np.integer)
    except TypeError:
        return False


def _source(tensor: gs.Tensor):
    """The tensor whose values `tensor` carries through pass-through ops (a graph input ends the walk)."""
    while tensor.inputs:
        producer = tensor.inputs[0]
        if producer.op not in PASS_THROUGH or not producer.inputs:
            return None
        tensor = producer.inputs[0]
    return tensor
