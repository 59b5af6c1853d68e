"""Validation of control flow, in the main graph and every subgraph: a Loop body takes the iteration number
(int64) and the condition (bool) before the loop-carried values and returns the condition (bool) first; a Scan
body takes one value per state and scan input and returns one per output, and its direction and axis lists hold
one entry per scan input or scan output (directions 0 or 1); If's branches return one value per
output; a Loop's trip count and condition hold one element.  (Inference checks counts only partly; the
unroller, frontend/control_flow.py, relies on them.)

Before: a Loop whose body returns its condition as a float converts into a wrong unrolled program; after:
"node 'the_loop' (Loop): its body's condition output 'c2' is float, not bool".
"""
from __future__ import annotations

from typing import Callable, Optional

import onnx

from onnx2ttnn.errors import ConversionError


def validate_control_flow(graph: onnx.GraphProto, opset: int) -> None:
    """The structure of every If, Loop and Scan body, in `graph` and its subgraphs (iteratively)."""
    stack = [graph]
    while stack:
        current = stack.pop()
        shapes = None  # the declared shapes of `current`'s values, made at its first Loop or Scan
        for index, node in enumerate(current.node):
            check = _CONTROL_FLOW.get(node.op_type) if node.domain in ("", "ai.onnx") else None
            bodies = {a.name: a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH}
            reason = check(node, bodies, opset) if check is not None else None
            if not reason and node.op_type in _CARRIED and "body" in bodies:
                shapes = _declared_shapes(current) if shapes is None else shapes
                reason = _carried_shapes(node, bodies["body"], current, shapes, opset)
            if not reason and node.op_type == "Loop" and node.domain in ("", "ai.onnx"):
                shapes = _declared_shapes(current) if shapes is None else shapes
                reason = _loop_scalars(node, shapes)
            if reason:
                name = node.name or f"{node.op_type}_{index}"
                raise ConversionError(f"invalid model: node {name!r} ({node.op_type}): {reason}")
            stack.extend(bodies.values())
            stack.extend(g for a in node.attribute for g in a.graphs)


def _elem_type(info: onnx.ValueInfoProto) -> int:
    """The declared element type of a tensor value (0: not declared or not a tensor)."""
    return info.type.tensor_type.elem_type if info.type.HasField("tensor_type") else 0


def _type_name(elem_type: int) -> str:
    return onnx.TensorProto.DataType.Name(elem_type).lower()


def _check_loop(node, bodies, opset) -> Optional[str]:
    body = bodies.get("body")
    if body is None:
        return "it has no body graph"
    carried = len(node.input) - 2
    if carried < 0 or len(body.input) != len(node.input):
        return (f"its body takes {len(body.input)} inputs, but a Loop with {max(carried, 0)} loop-carried "
                f"value(s) passes {max(carried, 0) + 2} (iteration number, condition, the values)")
    if len(body.output) < 1 + carried or len(node.output) != len(body.output) - 1:
        return (f"its body returns {len(body.output)} outputs, but the node has {len(node.output)}: the body "
                "must return the condition, then one value per node output")
    for info, want, role in ((body.input[0], onnx.TensorProto.INT64, "iteration number input"),
                             (body.input[1], onnx.TensorProto.BOOL, "condition input"),
                             (body.output[0], onnx.TensorProto.BOOL, "condition output")):
        got = _elem_type(info)
        if got and got != want:
            return f"its body's {role} {info.name!r} is {_type_name(got)}, not {_type_name(want)}"
    return None


def _check_scan(node, bodies, opset) -> Optional[str]:
    body = bodies.get("body")
    if body is None:
        return "it has no body graph"
    count = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
    first = 1 if opset < 9 else 0  # Scan-8 takes sequence_lens first
    states = len(node.input) - first - count
    if count < 1 or states < 0:
        return f"num_scan_inputs {count} does not fit its {len(node.input)} inputs"
    if len(body.input) != states + count:
        return (f"its body takes {len(body.input)} inputs, but the node passes {states} state(s) and {count} "
                "scan input(s)")
    if len(body.output) != len(node.output) or len(body.output) < states:
        return (f"its body returns {len(body.output)} outputs, but the node has {len(node.output)} "
                f"({states} state(s) first)")
    outputs = len(node.output) - states
    for name, want in (("scan_input_directions", count), ("scan_input_axes", count),
                       ("scan_output_directions", outputs), ("scan_output_axes", outputs)):
        given = next((list(a.ints) for a in node.attribute if a.name == name), None)
        if given is None:
            continue
        if len(given) != want:  # onnxruntime: "Number of entries in 'scan_input_directions' was 2 but expected 1"
            return f"{name} has {len(given)} entries; it needs one per scan {name.split('_')[1]} ({want})"
        if name.endswith("directions") and any(d not in (0, 1) for d in given):
            return f"{name} {given}: each direction must be 0 (forward) or 1 (reverse)"
    return None


def _check_if(node, bodies, opset) -> Optional[str]:
    for branch in ("then_branch", "else_branch"):
        body = bodies.get(branch)
        if body is None:
            return f"it has no {branch} graph"
        if len(body.output) != len(node.output):
            return f"its {branch} returns {len(body.output)} outputs, but the node has {len(node.output)}"
    return None


def _declared_shapes(graph: onnx.GraphProto) -> dict[str, tuple]:
    """{value name: shape (-1 for an unknown dim)} of the values `graph` declares a shape for."""
    shapes = {}
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        if info.type.HasField("tensor_type") and info.type.tensor_type.HasField("shape"):
            shapes[info.name] = _dims(info)
    shapes.update((t.name, tuple(t.dims)) for t in graph.initializer)
    return shapes


def _declared_types(graph: onnx.GraphProto) -> dict[str, onnx.TypeProto]:
    """{value name: its declared type} in `graph` (initializers as tensors of their dims)."""
    types = {info.name: info.type for info in list(graph.input) + list(graph.value_info) + list(graph.output)}
    for t in graph.initializer:
        types[t.name] = onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims))
    return types


def _dims(info: onnx.ValueInfoProto) -> tuple:
    return tuple(d.dim_value if d.HasField("dim_value") else -1 for d in info.type.tensor_type.shape.dim)


def _carried_shapes(node, body: onnx.GraphProto, graph: onnx.GraphProto, shapes: dict,
                    opset: int) -> Optional[str]:
    """Where the initial loop-carried values (Loop) or states (Scan) have other shapes than the body declares,
    the body must still infer with the shapes it is given.  Declared shapes alone decide nothing: onnxruntime
    runs a body declaring [] given [1], or [2] given [1] when its ops broadcast (it only warns).  But fuzz seed
    79 case 1008 passed a [5, 5, 8, 3] value to a body adding an [8, 8] constant to it: onnxruntime fails in
    the body, and the converter removed the unused Loop and converted the rest."""
    if node.op_type == "Loop":
        pairs = list(enumerate(zip(node.input[2:], body.input[2:]), 2))
    else:
        first = 1 if opset < 9 else 0
        count = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
        pairs = list(enumerate(zip(node.input[first:len(node.input) - count], body.input)))
    given, names = {}, {}
    for index, (name, info) in pairs:
        outer = shapes.get(name)
        if not name or outer is None or not info.type.tensor_type.HasField("shape"):
            continue
        if node.op_type == "Scan" and opset < 9:
            outer = outer[1:]  # Scan-8's states carry the batch axis first; its body sees one entry
        declared = _dims(info)
        if len(declared) != len(outer) or any(a >= 0 and b >= 0 and a != b for a, b in zip(declared, outer)):
            given[index], names[index] = outer, name
    if not given:
        return None
    failure = _body_inference_failure(body, given, _declared_types(graph), opset)
    if failure is None:
        return None
    index = next(iter(given))
    return (f"its body, given {names[index]!r} of shape {list(given[index])} (it declares "
            f"{list(_dims(body.input[index]))}), fails shape inference: {failure}")


def _body_inference_failure(body: onnx.GraphProto, given: dict, outer_types: dict, opset: int) -> Optional[str]:
    """ONNX's strict inference's message for `body` with input i of shape given[i] (its outputs' shapes left to
    inference), or None when it infers, or when the body reads what cannot be typed here (a value of an outer
    scope without a declared type, an op of another domain, a nested body)."""
    if any(n.domain not in ("", "ai.onnx") or any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                                                   for a in n.attribute) for n in body.node):
        return None  # (a nested body may read outer values this copy does not declare)
    copy = onnx.GraphProto()
    copy.CopyFrom(body)
    for index, dims in given.items():
        elem = copy.input[index].type.tensor_type.elem_type
        copy.input[index].CopyFrom(onnx.helper.make_tensor_value_info(copy.input[index].name, elem, list(dims)))
    for out in copy.output:
        out.type.tensor_type.ClearField("shape")
    del copy.value_info[:]
    defined = {i.name for i in copy.input} | {t.name for t in copy.initializer} | {
        o for n in copy.node for o in n.output}
    for name in dict.fromkeys(i for n in copy.node for i in n.input if i and i not in defined):
        if name not in outer_types:
            return None
        copy.input.append(onnx.helper.make_value_info(name, outer_types[name]))
    model = onnx.helper.make_model(copy, opset_imports=[onnx.helper.make_opsetid("", opset)])
    try:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except (onnx.shape_inference.InferenceError, ValueError) as exc:
        return " ".join(str(exc).split())[:300]
    return None


# (fuzz seed 61 case 1908)
def _loop_scalars(node, shapes: dict) -> Optional[str]:
    """Loop's M and cond, when given, hold one element (onnxruntime: "'Loop' input 'M' should be a scalar
    tensor. Got shape of {2}", likewise for cond; a [1] or [1, 1] M runs).  The unroll plan refuses such an M,
    but a Loop no output reads was dropped before it, and the model converted."""
    for index, what in ((0, "trip count M"), (1, "condition cond")):
        name = node.input[index] if len(node.input) > index else ""
        shape = shapes.get(name) if name else None
        count = 1
        for d in shape or ():
            count *= d
        if shape is not None and all(d >= 0 for d in shape) and count != 1:
            return f"its {what} {name!r} has {count} elements; it must be a scalar (one element)"
    return None


_CARRIED = ("Loop", "Scan")
_CONTROL_FLOW: dict[str, Callable] = {"Loop": _check_loop, "Scan": _check_scan, "If": _check_if}
