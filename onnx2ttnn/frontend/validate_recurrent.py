"""Validation of the recurrent ops (LSTM, GRU, RNN): what strict inference lets pass but onnxruntime refuses when
it runs the node.
- `direction` is forward, reverse or bidirectional;
- the weights have the shapes onnxruntime's shared check requires, with num_directions (2 when bidirectional,
  else 1), hidden_size and the gates per op (LSTM 4, GRU 3, RNN 1): W [num_directions, gates * hidden_size,
  input_size], R [num_directions, gates * hidden_size, hidden_size], B [num_directions, 2 * gates * hidden_size],
  LSTM's P [num_directions, 3 * hidden_size].  Strict inference takes hidden_size from the attribute and never
  compares it with W, so a W of another height was accepted.

Before: `GRU<hidden_size = 1>(x[8, 3, 1], W[1, 6, 1], R[1, 6, 2], B[1, 12])` converts (fuzz seed 61 case 1416);
after: "W has shape [1, 6, 1]; it must be [1, 3, 1] (num_directions, 3 * hidden_size, input_size)", as
onnxruntime's "Input W must have shape {1,3,1}. Actual:{1,6,1}".
"""
from __future__ import annotations

from typing import Callable, Optional

from onnx2ttnn.frontend.validate_graph import GraphFacts, node_input

_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_DIRECTIONS = ("forward", "reverse", "bidirectional")


def _check_recurrent(graph: GraphFacts, node, attrs) -> Optional[str]:
    """direction is known, and W, R, B (and LSTM's P) have onnxruntime's shapes for hidden_size."""
    direction = attrs.get("direction", b"forward")
    direction = direction.decode("utf-8", "replace") if isinstance(direction, bytes) else direction
    if direction not in _DIRECTIONS:
        return f"direction {direction!r} is not one of {', '.join(_DIRECTIONS)}"
    x, hidden = graph.shape(node_input(node, 0)), int(attrs.get("hidden_size", 0))
    if x is None or len(x) != 3 or hidden <= 0:
        return None
    gates, ways = _GATES[node.op_type], 2 if direction == "bidirectional" else 1
    wants = {1: ("W", [ways, gates * hidden, x[2]], "num_directions, {g} * hidden_size, input_size"),
             2: ("R", [ways, gates * hidden, hidden], "num_directions, {g} * hidden_size, hidden_size"),
             3: ("B", [ways, 2 * gates * hidden], "num_directions, 2 * {g} * hidden_size")}
    if node.op_type == "LSTM":
        wants[7] = ("P", [ways, 3 * hidden], "num_directions, 3 * hidden_size")
    for index, (what, want, dims) in wants.items():
        shape = graph.shape(node_input(node, index)) if node_input(node, index) else None
        if shape is None or any(d < 0 for d in shape) or any(d < 0 for d in want):
            continue
        if list(shape) != want:
            return f"{what} has shape {list(shape)}; it must be {want} ({dims.format(g=gates)})"
    return None


CHECKS: dict[str, Callable] = {op: _check_recurrent for op in _GATES}
