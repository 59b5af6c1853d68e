"""Validation of the recurrent ops' operands (LSTM, GRU, RNN): what strict inference lets pass but onnxruntime
refuses when it runs the node.
- the direction is forward, reverse or bidirectional, hidden_size is given and positive, and constant
  sequence_lens lie within [0, the sequence length];
- W, R, B, sequence_lens, initial_h (and LSTM's initial_c and P) have the shapes the spec gives them for
  hidden_size, the direction's count and X: W [D, G * H, I], R [D, G * H, H], B [D, 2 * G * H],
  sequence_lens [batch], initial_h / initial_c [D, batch, H] ([batch, D, H] with layout 1), P [D, 3 * H],
  with G gates (LSTM 4, GRU 3, RNN 1) and D directions (2 when bidirectional).  Strict inference reads only
  hidden_size and X's dims for the outputs, so a W of shape [5] converted (fuzz seed 67 case 1806,
  onnxruntime: "Input W must have shape {1,15,3}. Actual:{5}") and an initial_h of shape [1, 2, 3, 5] was an
  internal error of the lowering (case 1894: "Input initial_h must have shape {1,3,5}. Actual:{1,2,3,5}").

Before: `GRU(X[4, 3, 1], W[5], R[1, 15, 5])` (hidden_size 5) converts; after: "W has shape [5]; it must be
[1, 15, 1] (hidden_size 5)".
"""
from __future__ import annotations

from typing import Callable, Optional

from onnx2ttnn.frontend.validate_graph import GraphFacts, node_input

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
DIRECTIONS = ("forward", "reverse", "bidirectional")


def _check_recurrent(graph: GraphFacts, node, attrs) -> Optional[str]:
    """The direction, then every operand of a known shape against the shape the spec gives it."""
    direction = attrs.get("direction", b"forward")
    direction = direction.decode("utf-8", "replace") if isinstance(direction, bytes) else str(direction)
    if direction not in DIRECTIONS:
        return f"direction {direction!r} is not one of {', '.join(DIRECTIONS)}"
    if "hidden_size" not in attrs:  # (seed 179 case 1108: an internal error in a host region after it)
        return ("hidden_size is not given: shape inference leaves the outputs' last dim unknown without it, "
                "and onnxruntime requires it")
    hidden = int(attrs["hidden_size"])
    if hidden <= 0:  # (seed 79 case 1950: -2147483648; seed 89 case 588: 0)
        return f"hidden_size {hidden} must be positive"
    x = graph.shape(node_input(node, 0))
    if hidden <= 0 or x is None or len(x) != 3:
        return None
    directions = 2 if direction == "bidirectional" else 1
    batch_first = int(attrs.get("layout", 0)) == 1
    batch, width = (x[0] if batch_first else x[1]), x[2]
    gates = GATES[node.op_type]
    state = [batch, directions, hidden] if batch_first else [directions, batch, hidden]
    wants = {1: ("W", [directions, gates * hidden, width]), 2: ("R", [directions, gates * hidden, hidden]),
             3: ("B", [directions, 2 * gates * hidden]), 4: ("sequence_lens", [batch]), 5: ("initial_h", state)}
    if node.op_type == "LSTM":
        wants.update({6: ("initial_c", state), 7: ("P", [directions, 3 * hidden])})
    for index, (what, want) in wants.items():
        shape = graph.shape(node_input(node, index)) if node_input(node, index) else None
        if shape is not None and not _fits(shape, want):
            shown = ", ".join("?" if d < 0 else str(d) for d in want)
            return f"{what} has shape {list(shape)}; it must be [{shown}] (hidden_size {hidden})"
    lens = graph.value(node_input(node, 4)) if node_input(node, 4) else None
    steps = x[1] if batch_first else x[0]
    if lens is not None and lens.size and steps >= 0 and (lens.min() < 0 or lens.max() > steps):
        # (onnxruntime: "All values must be >= 0 and <= seq_length"; seed 89 case 480)
        return f"sequence_lens holds {int(lens.min() if lens.min() < 0 else lens.max())}, outside [0, {steps}]"
    return None


def _fits(shape: tuple[int, ...], want: list[int]) -> bool:
    """Whether `shape` can be `want` (a symbolic dim, -1, on either side matches any size)."""
    return len(shape) == len(want) and all(d < 0 or w < 0 or d == w for d, w in zip(shape, want))


CHECKS: dict[str, Callable] = {op: _check_recurrent for op in GATES}
