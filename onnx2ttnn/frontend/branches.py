"""Ifs whose condition the pinned input shapes decide, inlined before strict shape inference checks them.

Strict inference (frontend/shapes.py) checks both branches of every If against the shapes --input-shape pins.
A model that picks its branch from an input's size (an audio model's 8 kHz and 16 kHz paths) has one branch
that cannot fit: onnxruntime runs such a model, since it runs only the branch the condition takes.  When strict
inference fails inside an If of the main graph, `inline_decided_ifs` decides each main-graph If it can: its
condition computed from constants and the static shapes of a lenient inference (Shape and Size of a tensor
whose shape is static become constants), by onnx's reference evaluator over the condition's producers (at
most CONE_NODES of them; a graph input read for its values, a node with a subgraph or an unknown shape leaves
the If undecided).  A decided If is replaced by its taken branch's nodes (its initializers joined to the main
graph's, an Identity per output), so strict inference then checks the branch that runs, and a conflict in it
refuses the model naming the branch's node, as before no If was involved.  fold-constants would inline the
same Ifs later (lowering/control_flow.py); this only does it early enough for the check.
Before: `y = If(Equal(Shape(x)[1], 512)) {then: Add(x, b512)} {else: Mul(x, b256)}` at x [1, 256] is refused
("Incompatible dimensions" in the then branch); after: `y = Identity(Mul(x, b256))`, which infers.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx
from onnx import helper, numpy_helper

TAKEN = "_taken"  # the suffix of the name of each Identity that gives an inlined branch's output to the If's
CONE_NODES = 256  # an If's condition is decided from at most this many producer nodes


def inline_decided_ifs(model: onnx.ModelProto, inferred: onnx.ModelProto) -> list[str]:
    """Replace every main-graph If of `model` whose condition `inferred` (a leniently inferred copy) decides
    by its taken branch; the names (or op_index labels) of the Ifs inlined."""
    graph = model.graph
    shapes = _static_shapes(inferred.graph)
    producers = {out: (index, node) for index, node in enumerate(graph.node) for out in node.output if out}
    initializers = {t.name: t for t in graph.initializer}
    outer = set(producers) | set(initializers) | {i.name for i in graph.input}
    nodes, inlined = [], []
    for index, node in enumerate(graph.node):
        taken = None
        if node.op_type == "If" and node.domain in ("", "ai.onnx") and node.input:
            taken = _decide(node.input[0], producers, initializers, shapes, model.opset_import, model.ir_version)
        branch = None if taken is None else next(
            (a.g for a in node.attribute if a.name == ("then_branch" if taken else "else_branch")), None)
        if branch is None or len(branch.output) != len(node.output) or _collides(branch, outer):
            nodes.append(node)
            continue
        graph.initializer.extend(branch.initializer)
        nodes.extend(branch.node)
        nodes.extend(helper.make_node("Identity", [b.name], [o], name=f"{node.name or 'If'}_{o}{TAKEN}")
                     for b, o in zip(branch.output, node.output) if o)
        inlined.append(node.name or f"If_{index}")
    if inlined:
        del graph.node[:]
        graph.node.extend(nodes)
    return inlined


def _static_shapes(graph: onnx.GraphProto) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every value of `graph` whose inferred shape is static."""
    shapes = {t.name: tuple(t.dims) for t in graph.initializer}
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        tensor = info.type.tensor_type
        if info.type.HasField("tensor_type") and tensor.HasField("shape") \
                and all(d.HasField("dim_value") for d in tensor.shape.dim):
            shapes[info.name] = tuple(d.dim_value for d in tensor.shape.dim)
    return shapes


def _collides(branch: onnx.GraphProto, outer: set[str]) -> bool:
    """Whether a value the branch defines has the name of a main-graph value (inlining would redefine it)."""
    defined = [t.name for t in branch.initializer] + [o for n in branch.node for o in n.output if o]
    return any(name in outer for name in defined)


def _decide(cond: str, producers: dict, initializers: dict, shapes: dict, opsets, ir_version: int) \
        -> Optional[bool]:
    """The condition's value when constants and static shapes decide it, else None (`producers`: value name ->
    (index, node) of the main graph)."""
    cone, constants, stack, seen = [], {}, [cond], set()
    while stack:
        name = stack.pop()
        if not name or name in seen:
            continue
        seen.add(name)
        if name in initializers:
            constants[name] = initializers[name]
            continue
        index, node = producers.get(name, (0, None))
        if node is None or any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                               for a in node.attribute):
            return None  # a graph input read for its values, or control flow
        if node.op_type in ("Shape", "Size") and node.domain in ("", "ai.onnx") and node.input[0] in shapes:
            constants[name] = numpy_helper.from_array(_shape_value(node, shapes[node.input[0]]), name)
            continue
        cone.append((index, node))
        if len(cone) > CONE_NODES:
            return None
        stack.extend(node.input)
    cone = [node for _, node in sorted({id(n): (i, n) for i, n in cone}.values(), key=lambda pair: pair[0])]
    probe = helper.make_model(
        helper.make_graph(cone, "condition", [], [helper.make_empty_tensor_value_info(cond)],
                          initializer=list(constants.values())),
        opset_imports=list(opsets), ir_version=ir_version)
    try:
        from onnx.reference import ReferenceEvaluator

        value = np.asarray(ReferenceEvaluator(probe).run(None, {})[0])
    except Exception:  # noqa: BLE001 (an op the reference evaluator does not run: the If stays undecided)
        return None
    return bool(value.reshape(-1)[0]) if value.size == 1 else None


def _shape_value(node: onnx.NodeProto, shape: tuple[int, ...]) -> np.ndarray:
    """The value a Shape (with its start/end) or Size node gives for an input of `shape`."""
    if node.op_type == "Size":
        return np.array(int(np.prod(shape, dtype=np.int64)), np.int64)
    attrs = {a.name: a.i for a in node.attribute}
    return np.array(shape[slice(attrs.get("start", 0), attrs.get("end"))], np.int64)
