"""Integer graph inputs the model uses as row indices, and how many rows they may pick.

A generated program's `random_inputs()` (and so `verify` without `--inputs`) must give token ids that look up
different rows, or a wrong gather, a lookup table split across chips or a batch split that mixes samples would
all pass unseen (every sample would read row 1).  An integer graph input that reaches the indices of a
`Gather` over a constant table — directly or through ops that only cast or reshape it — may take any value
below the table's row count along the gathered axis; with several tables, below the smallest.  Inputs that
reach no such Gather (attention masks, lengths) keep the value one, which is what masks mean.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

# ops whose first input's values pass through unchanged (cast or reshaped)
PASS_THROUGH = frozenset({"Cast", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity"})


def index_rows(graph: gs.Graph) -> dict[str, int]:
    """ONNX input name -> rows its values may index (exclusive bound), for integer inputs used as indices."""
    inputs = {t.name for t in graph.inputs if t.dtype is not None and np.issubdtype(np.dtype(t.dtype), np.integer)}
    rows: dict[str, int] = {}
    for node in graph.nodes:
        if node.op != "Gather" or len(node.inputs) < 2 or not isinstance(node.inputs[0], gs.Constant):
            continue
        shape = node.inputs[0].shape or ()
        axis = int(node.attrs.get("axis", 0))
        if not shape or not -len(shape) <= axis < len(shape) or int(shape[axis]) < 1:
            continue
        source = _source(node.inputs[1])
        if source is not None and source.name in inputs:
            rows[source.name] = min(rows.get(source.name, int(shape[axis])), int(shape[axis]))
    return rows


def _source(tensor: gs.Tensor):
    """The tensor whose values `tensor` carries through pass-through ops (a graph input ends the walk)."""
    while tensor.inputs:
        producer = tensor.inputs[0]
        if producer.op not in PASS_THROUGH or not producer.inputs:
            return None
        tensor = producer.inputs[0]
    return tensor
