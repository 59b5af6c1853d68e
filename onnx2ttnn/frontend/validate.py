"""Model validation after shape inference: refuse, naming the node, what strict inference lets pass but
onnxruntime refuses when it runs the model, and what would otherwise convert into a wrong program.

Strict shape and type inference (frontend/shapes.py) already refuses incompatible broadcasts, negative pads or
strides, parameters of the wrong length, dimension mismatches, mixed element types and declared shapes that
contradict the graph.  This module checks, on the inferred ModelProto's main graph:
- constant indices are in range: Gather, GatherElements, ScatterElements (each index in [-s, s-1] for an
  axis of size s) and GatherND, ScatterND (each index tuple within the dims it addresses).  An index out of
  range is a run-time error in onnxruntime; ttnn reads whatever lies there.
- Reshape keeps the element count: a constant target (0 copies the input dim unless allowzero, one -1 is
  inferred) or a static inferred output shape must hold as many elements as the static input.
- Conv and ConvTranspose agree with their weight W: kernel_shape is W's spatial dims, the input channels are
  W's (times `group` for Conv) and a bias has one value per output channel.
- Control flow, in the main graph and every subgraph: a Loop body takes the iteration number (int64) and
  the condition (bool) before the loop-carried values and returns the condition (bool) first; a Scan body
  takes one value per state and scan input and returns one per output; If's branches return one value per
  output.  (Inference checks counts only partly; the unroller relies on them.)

Before: `y = Gather<axis=0>(x[4, 3], [50])` converts into a slice of row 2; after: "node 'g' (Gather):
index 50 is out of range for axis 0 of size 4 (valid: -4 to 3)".
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import onnx
from onnx import numpy_helper

from onnx2ttnn.errors import ConversionError

Shape = Optional[tuple[int, ...]]  # None when unknown, a dim of -1 when symbolic


class _Graph:
    """What the checks read of the main graph: static shapes and the values of constant tensors."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self._shapes: dict[str, Shape] = {}
        for info in list(graph.input) + list(graph.value_info) + list(graph.output):
            if info.type.HasField("tensor_type") and info.type.tensor_type.HasField("shape"):
                dims = info.type.tensor_type.shape.dim
                self._shapes[info.name] = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in dims)
        self._tensors: dict[str, onnx.TensorProto] = {t.name: t for t in graph.initializer}
        for t in graph.initializer:
            self._shapes[t.name] = tuple(t.dims)
        for node in graph.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
                value = next((a.t for a in node.attribute if a.name == "value"), None)
                if value is not None:
                    self._tensors[node.output[0]] = value

    def shape(self, name: str) -> Shape:
        return self._shapes.get(name)

    def static_shape(self, name: str) -> Shape:
        """The shape when every dim is known, else None."""
        shape = self.shape(name)
        return shape if shape is not None and all(d >= 0 for d in shape) else None

    def value(self, name: str) -> Optional[np.ndarray]:
        """The value of a constant tensor (initializer or Constant node) whose data is in the model, else None."""
        tensor = self._tensors.get(name)
        if tensor is None or tensor.data_location == onnx.TensorProto.EXTERNAL:
            return None
        return numpy_helper.to_array(tensor)


def validate_model(model: onnx.ModelProto) -> None:
    """Raise ConversionError naming the first node of `model` (inferred shapes in it) that a check refuses."""
    _validate_control_flow(model.graph, _opset(model))
    graph = _Graph(model.graph)
    for index, node in enumerate(model.graph.node):
        check = _CHECKS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if check is None:
            continue
        reason = check(graph, node, {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute})
        if reason:
            name = node.name or f"{node.op_type}_{index}"
            raise ConversionError(f"invalid model: node {name!r} ({node.op_type}): {reason}")


def _opset(model: onnx.ModelProto) -> int:
    return next((e.version for e in model.opset_import if e.domain in ("", "ai.onnx")), 0)


def _validate_control_flow(graph: onnx.GraphProto, opset: int) -> None:
    """The structure of every If, Loop and Scan body, in `graph` and its subgraphs (iteratively)."""
    stack = [graph]
    while stack:
        for index, node in enumerate(stack.pop().node):
            check = _CONTROL_FLOW.get(node.op_type) if node.domain in ("", "ai.onnx") else None
            bodies = {a.name: a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH}
            reason = check(node, bodies, opset) if check is not None else None
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


def _input(node: onnx.NodeProto, index: int) -> str:
    return node.input[index] if len(node.input) > index else ""


# ---- indices -------------------------------------------------------------------------------------------

def _check_axis_indices(graph: _Graph, node, attrs, indices_input: int = 1) -> Optional[str]:
    """Gather, GatherElements, ScatterElements: every constant index within the axis."""
    indices, data = graph.value(_input(node, indices_input)), graph.shape(_input(node, 0))
    if indices is None or data is None or indices.size == 0:
        return None
    axis = int(attrs.get("axis", 0))
    if not -len(data) <= axis < len(data):
        return None  # strict inference refuses it
    size = data[axis]
    if size < 0:
        return None
    return _out_of_range(indices, size, f"axis {axis % len(data)}")


def _check_nd_indices(graph: _Graph, node, attrs) -> Optional[str]:
    """GatherND, ScatterND: every constant index tuple within the data dims it addresses."""
    indices, data = graph.value(_input(node, 1)), graph.shape(_input(node, 0))
    if indices is None or data is None or indices.size == 0 or indices.ndim == 0:
        return None
    batch = int(attrs.get("batch_dims", 0))
    depth = indices.shape[-1]
    if batch + depth > len(data):
        return None  # strict inference refuses it
    for j in range(depth):
        size = data[batch + j]
        if size >= 0:
            reason = _out_of_range(indices[..., j], size, f"dim {batch + j}")
            if reason:
                return reason
    return None


def _out_of_range(indices: np.ndarray, size: int, where: str) -> Optional[str]:
    values = indices.astype(np.int64, copy=False)
    bad = values[(values < -size) | (values >= size)]
    if bad.size == 0:
        return None
    return f"index {int(bad.flat[0])} is out of range for {where} of size {size} (valid: {-size} to {size - 1})"


# ---- Reshape -------------------------------------------------------------------------------------------

def _check_reshape(graph: _Graph, node, attrs) -> Optional[str]:
    """The target keeps the static input's element count."""
    data = graph.static_shape(_input(node, 0))
    if data is None:
        return None
    count = _elements(data)
    target = graph.value(_input(node, 1))
    if target is not None:
        return _reshape_target(data, count, [int(d) for d in target.reshape(-1)], bool(attrs.get("allowzero", 0)))
    out = graph.static_shape(node.output[0]) if node.output else None
    if out is not None and _elements(out) != count:
        return f"cannot reshape {count} elements (shape {list(data)}) to {list(out)} ({_elements(out)} elements)"
    return None


def _reshape_target(data: tuple[int, ...], count: int, target: list[int], allowzero: bool) -> Optional[str]:
    """Why constant `target` cannot reshape `data` (`count` elements), or None."""
    shown = f"cannot reshape {count} elements (shape {list(data)}) to {target}"
    dims = []
    for i, d in enumerate(target):
        if d == 0 and not allowzero:
            if i >= len(data):
                return f"{shown}: dim {i} is 0 (copy the input's dim) but the input has rank {len(data)}"
            d = data[i]
        elif d < -1:
            return f"{shown}: dim {i} is {d}"
        dims.append(d)
    if dims.count(-1) > 1:
        return f"{shown}: more than one -1"
    known = _elements(d for d in dims if d != -1)
    if -1 in dims:
        if known == 0 or count % known:
            return f"{shown}: the -1 dim cannot be inferred"
        return None
    if known != count:
        return f"{shown} ({known} elements)"
    return None


# ---- Conv ----------------------------------------------------------------------------------------------

def _check_conv(graph: _Graph, node, attrs) -> Optional[str]:
    """kernel_shape, input channels and bias length agree with the weight."""
    weight, data = graph.shape(_input(node, 1)), graph.shape(_input(node, 0))
    if weight is None or len(weight) < 3 or any(d < 0 for d in weight):
        return None
    kernel = attrs.get("kernel_shape")
    if kernel is not None and list(kernel) != list(weight[2:]):
        return f"kernel_shape {list(kernel)} contradicts the weight's spatial dims {list(weight[2:])} (W shape {list(weight)})"
    group = int(attrs.get("group", 1))
    if group < 1 or (not node.op_type == "ConvTranspose" and weight[0] % group):
        return f"group {group} does not divide the weight's {weight[0]} output channels (W shape {list(weight)})"
    transposed = node.op_type == "ConvTranspose"
    channels = weight[0] if transposed else weight[1] * group
    if data is not None and len(data) == len(weight) and data[1] >= 0 and data[1] != channels:
        return (f"the input has {data[1]} channels but the weight (shape {list(weight)}, group {group}) "
                f"takes {channels}")
    outputs = weight[1] * group if transposed else weight[0]
    bias = graph.shape(_input(node, 2)) if _input(node, 2) else None
    if bias is not None and len(bias) == 1 and bias[0] >= 0 and bias[0] != outputs:
        return f"the bias has {bias[0]} values but the convolution has {outputs} output channels"
    return None


def _elements(dims) -> int:
    count = 1
    for d in dims:
        count *= int(d)
    return count


_CHECKS: dict[str, Callable] = {
    "Gather": _check_axis_indices,
    "GatherElements": _check_axis_indices,
    "ScatterElements": _check_axis_indices,
    "GatherND": _check_nd_indices,
    "ScatterND": _check_nd_indices,
    "Reshape": _check_reshape,
    "Conv": _check_conv,
    "ConvTranspose": _check_conv,
}
