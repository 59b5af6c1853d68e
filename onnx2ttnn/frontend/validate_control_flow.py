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
        sizes = None  # the element counts of the graph's values, when a Loop needs them
        for index, node in enumerate(current.node):
            check = _CONTROL_FLOW.get(node.op_type) if node.domain in ("", "ai.onnx") else None
            bodies = {a.name: a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH}
            reason = check(node, bodies, opset) if check is not None else None
            if not reason and node.op_type == "Loop" and node.domain in ("", "ai.onnx"):
                sizes = _element_counts(current) if sizes is None else sizes
                reason = _loop_scalars(node, sizes)
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


# (fuzz seed 61 case 1908)
def _element_counts(graph: onnx.GraphProto) -> dict[str, int]:
    """The element count of each value of `graph` whose shape is static (initializers, inputs, value_info)."""
    counts = {}
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        dims = info.type.tensor_type.shape.dim if info.type.HasField("tensor_type") else None
        if dims is not None and info.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            counts[info.name] = _product(d.dim_value for d in dims)
    counts.update({t.name: _product(t.dims) for t in graph.initializer})
    return counts


def _product(dims) -> int:
    count = 1
    for d in dims:
        count *= int(d)
    return count


def _loop_scalars(node, sizes: dict[str, int]) -> Optional[str]:
    """Loop's M and cond, when given, hold one element (onnxruntime: "'Loop' input 'M' should be a scalar
    tensor. Got shape of {2}", likewise for cond; a [1] or [1, 1] M runs).  The unroll plan refuses such an M,
    but a Loop no output reads was dropped before it, and the model converted."""
    for index, what in ((0, "trip count M"), (1, "condition cond")):
        name = node.input[index] if len(node.input) > index else ""
        if name and sizes.get(name, 1) != 1:
            return f"its {what} {name!r} has {sizes[name]} elements; it must be a scalar (one element)"
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


_CONTROL_FLOW: dict[str, Callable] = {"Loop": _check_loop, "Scan": _check_scan, "If": _check_if}
