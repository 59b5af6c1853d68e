"""Validation of axis attributes and the operands sized by them: what strict inference lets pass but onnxruntime
refuses when it runs the node.
- ReverseSequence: time_axis and batch_axis are 0 or 1 and differ, sequence_lens is [batch] (fuzz seeds 71, 139);
- Flatten: the axis is within [-rank, rank] (fuzz seed 139).

Before: `Flatten<axis = 1099511627776>(x[1, 16, 1, 1])` converts; after: "axis 1099511627776 is out of range
for an input of rank 4 (Flatten takes -4 to 4)".
"""
from __future__ import annotations

from typing import Callable, Optional

from onnx2ttnn.frontend.validate_graph import GraphFacts, node_input


def _check_reverse_sequence(graph: GraphFacts, node, attrs) -> Optional[str]:
    """time_axis and batch_axis are 0 or 1 and differ (onnxruntime: "Invalid time_axis of 64. Must be 0 or 1",
    "time_axis and batch_axis must have different values but both are 1"; fuzz seed 71 cases 1428, 304);
    sequence_lens holds one length per batch entry (onnxruntime: "sequence_lens shape must be {batch_size}.
    Got:{8}. batch_size=5"; fuzz seed 139 case 318)."""
    time_axis, batch_axis = int(attrs.get("time_axis", 0)), int(attrs.get("batch_axis", 1))
    for name, value in (("time_axis", time_axis), ("batch_axis", batch_axis)):
        if value not in (0, 1):
            return f"{name} {value} must be 0 or 1"
    if time_axis == batch_axis:
        return f"time_axis and batch_axis are both {time_axis}; they must differ"
    data, lens = graph.shape(node_input(node, 0)), graph.shape(node_input(node, 1))
    if data is None or lens is None or len(data) <= batch_axis or data[batch_axis] < 0 or any(d < 0 for d in lens):
        return None
    if lens != (data[batch_axis],):
        return (f"sequence_lens has shape {list(lens)}; it must be [{data[batch_axis]}], one length per batch "
                f"entry (axis {batch_axis} of the input)")
    return None


def _check_flatten(graph: GraphFacts, node, attrs) -> Optional[str]:
    """The axis is within [-rank, rank] (onnxruntime: "X_shape.NumDimensions() >= axis was false"; fuzz seed 139
    case 1618: axis 1099511627776 converted)."""
    data, axis = graph.shape(node_input(node, 0)), int(attrs.get("axis", 1))
    if data is not None and not -len(data) <= axis <= len(data):
        return (f"axis {axis} is out of range for an input of rank {len(data)} (Flatten takes {-len(data)} to "
                f"{len(data)})")
    return None


CHECKS: dict[str, Callable] = {
    "ReverseSequence": _check_reverse_sequence,
    "Flatten": _check_flatten,
}
