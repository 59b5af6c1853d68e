"""Whether and how a Loop or Scan node unrolls: its iteration count and the nodes its copies would add, or
why it stays a Loop or Scan.  The unroller (frontend/control_flow.py) acts on these plans; the lowering rules
(lowering/control_flow.py) decline a node that stays with the reason `why_not_unrolled` gives.

What unrolls:
- Loop: the trip count M is a constant, the condition input is absent or a constant, and the body's
  condition output is provably constant: the body's condition input passed through (Identity chains) or a
  constant.  A true condition runs M iterations; a constant false output stops after the first.  A loop that
  runs no iteration unrolls only when it has no scan outputs (they would be empty tensors).
- Scan (opset 9 on): the scan inputs agree on a static sequence length along `scan_input_axes`, and a
  negative `scan_output_axes` has an output of known rank.  Scan-8 (batch axis 0, an optional
  `sequence_lens` that must be absent or all full length): its iterations are batch x sequence length.

UNROLL_BUDGET caps the nodes all unrolled copies of a model add together (each Loop or Scan costs its
iterations times its body's nodes, nested subgraphs counted): a loop over the budget stays a Loop, as does one
with a data-dependent exit or trip count.
Before: `Loop(M = 3, "", x)` whose body of 5 nodes passes its condition through; after: Plan(iterations=3,
cost=15).  With M a graph input: "its trip count M ('m') is not a constant".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import is_onnx_op

# The unrolled copies of one model together hold at most this many nodes.  Each copy is converted and emitted
# like any node: a Loop unrolled to 4000 nodes (800 iterations of a 5-node body) converts in 12 s (3.4 s for
# 1250 nodes: linear, fold-constants half of it) into a program of ~4000 ttnn calls.  It holds 17 copies of
# the 235-node Loop body of the table decoder in issue 13.
UNROLL_BUDGET = 4096


@dataclass
class Plan:
    """How to unroll one Loop or Scan node: its iteration count and the nodes the copies add."""

    iterations: int
    cost: int


def graph_size(graph: gs.Graph) -> int:
    """The nodes of `graph` and of every subgraph inside it (iteratively)."""
    count, stack = 0, [graph]
    while stack:
        g = stack.pop()
        count += len(g.nodes)
        for node in g.nodes:
            stack.extend(v for v in node.attrs.values() if isinstance(v, gs.Graph))
    return count


def _present(node: gs.Node, index: int) -> Optional[gs.Tensor]:
    """Input `index` of `node`, None when absent or empty (an omitted optional input)."""
    if index >= len(node.inputs) or node.inputs[index].is_empty():
        return None
    return node.inputs[index]


def _constant(tensor: Optional[gs.Tensor]) -> Optional[np.ndarray]:
    return np.asarray(tensor.values) if isinstance(tensor, gs.Constant) else None


def _body_constant(tensor: gs.Tensor, cond_in: gs.Tensor) -> Union[bool, None, str]:
    """What the body's condition output is: "input" when it is the condition input passed through, a bool
    when it is a constant, None when it is computed (it may depend on the data)."""
    seen = 0
    while seen < 10_000:
        seen += 1
        if tensor is cond_in:
            return "input"
        value = _constant(tensor)
        if value is not None:
            return bool(value.reshape(-1)[0]) if value.size == 1 else None
        if len(tensor.inputs) != 1:
            return None
        producer = tensor.inputs[0]
        if is_onnx_op(producer, "Identity"):
            tensor = producer.inputs[0]
        elif is_onnx_op(producer, "Constant") and isinstance(producer.attrs.get("value"), gs.Constant):
            value = np.asarray(producer.attrs["value"].values)
            return bool(value.reshape(-1)[0]) if value.size == 1 else None
        else:
            return None
    return None


def attr_ints(node: gs.Node, name: str, count: int, default: int = 0) -> list[int]:
    """The ints attribute `name` of `node`, padded with `default` to `count` values."""
    values = list(node.attrs.get(name) or [])
    return [int(v) for v in values] + [default] * (count - len(values))


def _loop_plan(node: gs.Node) -> Union[Plan, str]:
    """The plan for a Loop node, or why it stays a Loop."""
    body = node.attrs.get("body")
    if not isinstance(body, gs.Graph) or len(body.inputs) != len(node.inputs) \
            or len(body.outputs) < len(body.inputs) - 1:
        return "its body does not match the node's inputs and outputs"
    m, cond = _present(node, 0), _present(node, 1)
    if m is None:
        return "it has no trip count M: it runs until its condition turns false (a data-dependent exit)"
    trip = _constant(m)
    if trip is None or trip.size != 1:
        return f"its trip count M ({m.name!r}) is not a constant"
    iterations = max(int(trip.reshape(-1)[0]), 0)
    if cond is not None:
        start = _constant(cond)
        if start is None or start.size != 1:
            return f"its condition input ({cond.name!r}) is not a constant"
        if not bool(start.reshape(-1)[0]):
            iterations = 0
    exit_value = _body_constant(body.outputs[0], body.inputs[1])
    if exit_value is None:
        return "its body's condition output is computed in the body (a data-dependent exit)"
    if exit_value is False:
        iterations = min(iterations, 1)
    scans = len(body.outputs) - 1 - (len(body.inputs) - 2)
    if iterations == 0 and scans:
        return "it runs no iteration, so its scan outputs would be empty tensors"
    return Plan(iterations, iterations * graph_size(body))


def _scan_plan(node: gs.Node, opset: int) -> Union[Plan, str]:
    """The plan for a Scan node (the number of iterations over all batch entries), or why it stays a Scan."""
    body = node.attrs.get("body")
    count = int(node.attrs.get("num_scan_inputs", 0))
    first = 1 if opset < 9 else 0  # Scan-8: sequence_lens first
    states = len(node.inputs) - first - count
    if not isinstance(body, gs.Graph) or count < 1 or states < 0 or len(body.inputs) != states + count \
            or len(body.outputs) != len(node.outputs) or len(body.outputs) < states:
        return "its body does not match the node's inputs and outputs"
    scan_inputs = node.inputs[first + states:]
    shapes = [x.shape for x in scan_inputs]
    if any(s is None or not all(isinstance(d, int) for d in s) for s in shapes):
        return "a scan input has no static shape"
    if opset < 9:
        if any(len(s) < 2 for s in shapes) or len({s[0] for s in shapes}) != 1 or len({s[1] for s in shapes}) != 1:
            return "its scan inputs disagree on the batch or sequence length"
        batch, length = shapes[0][0], shapes[0][1]
        lens = _present(node, 0)
        if lens is not None:
            value = _constant(lens)
            if value is None or not np.all(value == length):
                return "its sequence_lens are not all the full sequence length (a constant)"
        return Plan(batch * length, batch * length * graph_size(body))
    axes = attr_ints(node, "scan_input_axes", count)
    lengths = set()
    for shape, axis in zip(shapes, axes):
        if not -len(shape) <= axis < len(shape):
            return f"scan_input_axes {axis} is out of range for a scan input of rank {len(shape)}"
        lengths.add(shape[axis])
    if len(lengths) != 1:
        return f"its scan inputs have different sequence lengths {sorted(lengths)}"
    outputs = len(node.outputs) - states
    for out, axis in zip(node.outputs[states:], attr_ints(node, "scan_output_axes", outputs)):
        if axis < 0 and (out.shape is None or not -len(out.shape) <= axis):
            return f"scan_output_axes {axis} needs the rank of output {out.name!r}, which is unknown"
    length = lengths.pop()
    if length == 0 and outputs:
        return "its sequence is empty, so its scan outputs would be empty tensors"
    return Plan(length, length * graph_size(body))


def plan_unroll(node: gs.Node, opset: int) -> Union[Plan, str, None]:
    """The plan for a Loop or Scan node, or why it stays one; None for any other node."""
    if is_onnx_op(node, "Loop"):
        return _loop_plan(node)
    if is_onnx_op(node, "Scan"):
        return _scan_plan(node, opset)
    return None


def why_not_unrolled(node: gs.Node, opset: int, remaining: int = UNROLL_BUDGET) -> Optional[str]:
    """Why a Loop or Scan node cannot be unrolled (None when it can, within `remaining` nodes)."""
    plan = plan_unroll(node, opset)
    if isinstance(plan, str):
        return plan
    if plan is not None and plan.cost > remaining:
        return (f"unrolling its {plan.iterations} iterations would add {plan.cost} nodes, over what is left of "
                f"the unroll budget ({remaining} of {UNROLL_BUDGET} nodes, frontend/unroll_plan.py)")
    return None
