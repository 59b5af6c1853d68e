"""Loop and Scan unrolled into the nodes of their iterations, as planned by frontend/unroll_plan.py (which
says when a node unrolls, into how many iterations, and keeps the budget).

fold-constants calls `Unroller.run` in each of its rounds (beside inlining constant-condition Ifs), so a
trip count that only folds to a constant in an earlier round (Cast(Ceil(Div(limit - start, delta)))) is
seen, and the unrolled iterations fold in the next.  How a node is unrolled:
- Loop: each iteration is a copy of the body: the iteration number and the condition are constants, the
  loop-carried values of one iteration feed the next, and each scan output is the per-iteration values
  stacked along a new axis 0 (Unsqueeze, Concat).
- Scan (opset 9 on): iteration t reads element t (or N-1-t for a reverse direction) of each scan input with a
  constant Gather, and each scan output stacks its values along `scan_output_axes` in its direction.  Scan-8
  runs the same for every batch entry, stacked.
Every copied node and tensor gets a name unique in the graph (iteration-prefixed), outer-scope tensors the
body reads stay shared, and subgraphs inside the body (an If, a nested Loop) are copied with their own
references to the iteration's tensors; a nested Loop or Scan is unrolled when its turn comes.  The budget is
drawn on across rounds: a loop over what is left stays a Loop, and lower-to-ttnn declines it with the reason
(lowering/control_flow.py), so it is reported or, with host regions, run on the host.
Before: `y, s = Loop(3, "", x) body(i, c, v) { w = Add(v, v) } -> (c, w, w)`;
after: `w0 = Add(x, x); w1 = Add(w0, w0); w2 = Add(w1, w1); y = Identity(w2); s = Concat(Unsqueeze(w0), ...)`.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.frontend.unroll_plan import UNROLL_BUDGET, Plan, attr_ints, plan_unroll
from onnx2ttnn.ir.names import GraphNames


def _all_names(graph: gs.Graph) -> set[str]:
    """Tensor and node names of `graph` and of every subgraph inside it."""
    names, stack = set(), [graph]
    while stack:
        g = stack.pop()
        names.update(t.name for t in list(g.inputs) + list(g.outputs) if t.name)
        for node in g.nodes:
            if node.name:
                names.add(node.name)
            names.update(t.name for t in list(node.inputs) + list(node.outputs) if t.name)
            stack.extend(v for v in node.attrs.values() if isinstance(v, gs.Graph))
    return names


class Unroller:
    """Unrolls the Loop and Scan nodes of a graph that can be, keeping count of the budget across rounds."""

    def __init__(self, opset: int, budget: int = UNROLL_BUDGET) -> None:
        self.opset = opset
        self.remaining = budget
        self.unrolled = 0

    def run(self, graph: gs.Graph) -> bool:
        """Unroll every Loop and Scan of `graph` (those the copies bring in too); True when any was."""
        names: Optional[GraphNames] = None
        any_changed, changed = False, True
        while changed:
            changed = False
            nodes = []
            for node in graph.nodes:
                plan = plan_unroll(node, self.opset)
                if not isinstance(plan, Plan) or plan.cost > self.remaining:
                    nodes.append(node)
                    continue
                names = names or GraphNames(_all_names(graph))
                self.remaining -= plan.cost
                self.unrolled += 1
                copier = _Copier(names, self.opset, node.name or names.fresh(node.op))  # (derived names are fresh)
                nodes += copier.loop(node, plan.iterations) if node.op == "Loop" else copier.scan(node)
                changed = any_changed = True
            graph.nodes = nodes
        return any_changed


class _Copier:
    """Makes the iterations of one node: copies of its body with fresh names, and the nodes that wire them."""

    def __init__(self, names: GraphNames, opset: int, prefix: str) -> None:
        self.names, self.opset, self.prefix = names, opset, prefix
        self.nodes: list[gs.Node] = []

    # ---- building blocks ----------------------------------------------------------------------------------
    def const(self, value: np.ndarray, label: str) -> gs.Constant:
        return gs.Constant(self.names.fresh(f"{self.prefix}_{label}"), np.asarray(value))

    def add(self, op: str, inputs: list, label: str, dtype=None, **attrs) -> gs.Variable:
        out = gs.Variable(self.names.fresh(f"{self.prefix}_{label}"), dtype=dtype)
        self.nodes.append(gs.Node(op, self.names.fresh(f"{self.prefix}_{label}_{op.lower()}"), attrs,
                                  inputs=inputs, outputs=[out]))
        return out

    def connect(self, op: str, inputs: list, out: gs.Tensor, **attrs) -> None:
        """A node computing the existing tensor `out` (an output of the node being unrolled)."""
        out.inputs.clear()
        self.nodes.append(gs.Node(op, self.names.fresh(f"{self.prefix}_{out.name}_{op.lower()}"), attrs,
                                  inputs=inputs, outputs=[out]))

    def unsqueeze(self, tensor: gs.Tensor, axis: int, label: str) -> gs.Variable:
        if self.opset < 13:
            return self.add("Unsqueeze", [tensor], label, tensor.dtype, axes=[axis])
        return self.add("Unsqueeze", [tensor, self.const(np.array([axis], np.int64), f"{label}_axes")], label,
                        tensor.dtype)

    def gather(self, tensor: gs.Tensor, index: int, axis: int, label: str) -> gs.Variable:
        """Element `index` of `tensor` along `axis` (the axis dropped; the shape kept when static)."""
        out = self.add("Gather", [tensor, self.const(np.array(index, np.int64), f"{label}_index")], label,
                       tensor.dtype, axis=axis)
        if tensor.shape is not None and all(isinstance(d, int) for d in tensor.shape):
            out.shape = list(tensor.shape[:axis]) + list(tensor.shape[axis + 1:])
        return out

    def stack(self, parts: list[gs.Tensor], axis: int, out: Optional[gs.Tensor], label: str):
        """`parts` stacked along a new `axis` (into `out` when given, else a new tensor)."""
        lifted = [self.unsqueeze(p, axis, f"{label}_{i}") for i, p in enumerate(parts)]
        if out is None:
            return self.add("Concat", lifted, label, parts[0].dtype, axis=axis)
        self.connect("Concat", lifted, out, axis=axis)
        return out

    def body(self, graph: gs.Graph, mapping: dict[int, gs.Tensor], label: str) -> list[gs.Tensor]:
        """One copy of `graph`'s nodes reading `mapping` for its inputs; the copy's outputs."""
        self.nodes += _copy_nodes(graph.nodes, mapping, self.names, f"{self.prefix}_{label}")
        return [mapping.get(id(t), t) for t in graph.outputs]

    # ---- Loop ---------------------------------------------------------------------------------------------
    def loop(self, node: gs.Node, iterations: int) -> list[gs.Node]:
        body = node.attrs["body"]
        current = list(node.inputs[2:])
        states = len(current)
        scans: list[list[gs.Tensor]] = [[] for _ in body.outputs[1 + states:]]
        true = self.const(np.array(True), "cond")
        for i in range(iterations):
            mapping = {id(body.inputs[0]): self.const(np.array(i, np.int64), f"iter{i}"), id(body.inputs[1]): true}
            mapping.update((id(t), v) for t, v in zip(body.inputs[2:], current))
            outs = self.body(body, mapping, f"it{i}")
            current = outs[1:1 + states]
            for parts, value in zip(scans, outs[1 + states:]):
                parts.append(value)
        outputs = list(node.outputs)
        node.inputs.clear()
        node.outputs.clear()
        for out, value in zip(outputs[:states], current):
            if not out.is_empty():
                self.connect("Identity", [value], out)
        for k, (out, parts) in enumerate(zip(outputs[states:], scans)):
            if not out.is_empty():
                self.stack(parts, 0, out, f"scan{k}")
        return self.nodes

    # ---- Scan ---------------------------------------------------------------------------------------------
    def scan(self, node: gs.Node) -> list[gs.Node]:
        count = int(node.attrs["num_scan_inputs"])
        if self.opset < 9:
            return self._scan8(node, count)
        states = len(node.inputs) - count
        outputs = list(node.outputs)
        initial, scan_inputs = list(node.inputs[:states]), list(node.inputs[states:])
        node.inputs.clear()
        node.outputs.clear()
        finals, stacked = self._scan_run(node, initial, scan_inputs, outputs[states:], "")
        for out, value in zip(outputs[:states], finals):
            if not out.is_empty():
                self.connect("Identity", [value], out)
        for out, value in zip(outputs[states:], stacked):
            if value is not None and not out.is_empty():
                self.connect("Identity", [value], out)
        return self.nodes

    def _scan_run(self, node: gs.Node, initial: list, scan_inputs: list, outs: list, label: str):
        """The iterations of a Scan-9 over `scan_inputs` from the states `initial`: (final states, stacked
        scan outputs: tensors, or None where the output is unused)."""
        body = node.attrs["body"]
        count, states = len(scan_inputs), len(initial)
        in_axes = [a % len(x.shape) for a, x in zip(attr_ints(node, "scan_input_axes", count), scan_inputs)]
        in_dirs = attr_ints(node, "scan_input_directions", count) if self.opset >= 9 else \
            attr_ints(node, "directions", count)
        n_out = len(body.outputs) - states
        out_axes = attr_ints(node, "scan_output_axes", n_out)
        out_dirs = attr_ints(node, "scan_output_directions", n_out)
        length = scan_inputs[0].shape[in_axes[0]]
        current, parts = list(initial), [[] for _ in range(n_out)]
        for t in range(length):
            mapping = dict((id(b), v) for b, v in zip(body.inputs[:states], current))
            for j, (x, axis, reverse) in enumerate(zip(scan_inputs, in_axes, in_dirs)):
                index = length - 1 - t if reverse else t
                mapping[id(body.inputs[states + j])] = self.gather(x, index, axis, f"{label}x{j}_t{t}")
            outs_t = self.body(body, mapping, f"{label}t{t}")
            current = outs_t[:states]
            for k, value in enumerate(outs_t[states:]):
                parts[k].append(value)
        stacked = []
        for k, (values, axis, reverse) in enumerate(zip(parts, out_axes, out_dirs)):
            if outs is not None and k < len(outs) and outs[k].is_empty():
                stacked.append(None)
                continue
            if axis < 0:
                axis += len(outs[k].shape)
            stacked.append(self.stack(values[::-1] if reverse else values, axis, None, f"{label}y{k}"))
        return current, stacked

    def _scan8(self, node: gs.Node, count: int) -> list[gs.Node]:
        """Scan-8: every input has a batch axis 0; each batch entry is a Scan-9 over axis 1, all stacked."""
        states = len(node.inputs) - 1 - count
        outputs = list(node.outputs)
        initial, scan_inputs = list(node.inputs[1:1 + states]), list(node.inputs[1 + states:])
        batch = scan_inputs[0].shape[0]
        node.inputs.clear()
        node.outputs.clear()
        finals: list[list] = [[] for _ in range(states)]
        stacked: list[list] = [[] for _ in outputs[states:]]
        for b in range(batch):
            init_b = [self.gather(s, b, 0, f"s{j}_b{b}") for j, s in enumerate(initial)]
            xs_b = [self.gather(x, b, 0, f"x{j}_b{b}") for j, x in enumerate(scan_inputs)]
            final_b, stacked_b = self._scan_run(node, init_b, xs_b, None, f"b{b}")
            for j, value in enumerate(final_b):
                finals[j].append(value)
            for k, value in enumerate(stacked_b):
                stacked[k].append(value)
        for out, values in zip(outputs, finals + stacked):
            if not out.is_empty():
                self.stack(values, 0, out, f"{out.name}_batch")
        return self.nodes


def _copy_nodes(nodes, mapping: dict[int, gs.Tensor], names: GraphNames, prefix: str) -> list[gs.Node]:
    """Copies of `nodes` (in order) whose inputs read `mapping` (id of a tensor -> its stand-in; tensors not
    in it, from an outer scope or constants, are shared); every output is a new tensor with a fresh name
    (dtype kept, shape left to inference), recorded in `mapping` for the nodes after it."""
    copies = []
    for node in nodes:
        inputs = [mapping.get(id(t), t) for t in node.inputs]
        outputs = []
        for t in node.outputs:
            if t.is_empty():
                outputs.append(gs.Variable.empty())
                continue
            new = gs.Variable(names.fresh(f"{prefix}_{t.name}"), dtype=t.dtype)
            mapping[id(t)] = new
            outputs.append(new)
        attrs = {key: _copy_graph(value, mapping, names, prefix) if isinstance(value, gs.Graph) else value
                 for key, value in node.attrs.items()}
        copies.append(gs.Node(node.op, names.fresh(f"{prefix}_{node.name or node.op}"), attrs, inputs, outputs,
                              domain=node.domain))
    return copies


def _copy_graph(graph: gs.Graph, mapping: dict[int, gs.Tensor], names: GraphNames, prefix: str) -> gs.Graph:
    """A copy of a subgraph (an If branch, a nested body) reading the copy's tensors from `mapping`."""
    inputs = []
    for t in graph.inputs:
        new = gs.Variable(names.fresh(f"{prefix}_{t.name}"), dtype=t.dtype, shape=t.shape)
        mapping[id(t)] = new
        inputs.append(new)
    nodes = _copy_nodes(graph.nodes, mapping, names, prefix)
    outputs = []
    for t in graph.outputs:
        value = mapping.get(id(t), t)
        if isinstance(value, gs.Variable) and value.dtype is None:
            value.dtype = t.dtype
        outputs.append(value)
    return gs.Graph(nodes=nodes, inputs=inputs, outputs=outputs, name=names.fresh(f"{prefix}_{graph.name}"),
                    opset=graph.opset, import_domains=graph.import_domains)
