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
- Conv and ConvTranspose agree with their weight W: W's rank is the input's, kernel_shape is W's spatial dims,
  the input channels are W's (times `group` for Conv) and a bias has one value per output channel.
- Conv, ConvTranspose and the pools: a known auto_pad, no dilation with SAME padding, one value per spatial dim
  in their window attributes, an input of rank >= 3, an output of at least one element per spatial dim, and
  before opset 22 no ceil_mode window that starts past the input (onnx and onnxruntime disagree on its size).
- Gemm's C broadcasts to the [M, N] product.
- No inferred shape has a negative dim.
- Control flow, in the main graph and every subgraph: a Loop body takes the iteration number (int64) and
  the condition (bool) before the loop-carried values and returns the condition (bool) first; a Scan body
  takes one value per state and scan input and returns one per output; If's branches return one value per
  output.  (Inference checks counts only partly; the unroller relies on them.)

Before: `y = Gather<axis=0>(x[4, 3], [50])` converts into a slice of row 2; after: "node 'g' (Gather):
index 50 is out of range for axis 0 of size 4 (valid: -4 to 3)".
"""
from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np
import onnx
from onnx import numpy_helper

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.messages import escape_name

Shape = Optional[tuple[int, ...]]  # None when unknown, a dim of -1 when symbolic


class _Graph:
    """What the checks read of the main graph: static shapes and the values of constant tensors."""

    def __init__(self, graph: onnx.GraphProto, opset: int = 0) -> None:
        self.opset = opset
        self.negative: dict[str, list] = {}  # values whose inferred shape has a negative dim (always invalid)
        self._shapes: dict[str, Shape] = {}
        self._types: dict[str, int] = {t.name: t.data_type for t in graph.initializer}
        for info in list(graph.input) + list(graph.value_info) + list(graph.output):
            if info.type.HasField("tensor_type"):
                self._types.setdefault(info.name, info.type.tensor_type.elem_type)
            if info.type.HasField("tensor_type") and info.type.tensor_type.HasField("shape"):
                dims = info.type.tensor_type.shape.dim
                self._shapes[info.name] = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in dims)
                if any(d.HasField("dim_value") and d.dim_value < 0 for d in dims):
                    self.negative[info.name] = [d.dim_value if d.HasField("dim_value") else "?" for d in dims]
        self._tensors: dict[str, onnx.TensorProto] = {t.name: t for t in graph.initializer}
        for t in graph.initializer:
            self._shapes[t.name] = tuple(t.dims)
        for node in graph.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
                value = next((a.t for a in node.attribute if a.name == "value"), None)
                if value is not None:
                    self._tensors[node.output[0]] = value

    def schema_version(self, node: onnx.NodeProto) -> int:
        """The since-version of the node's schema at the model's opset (0 when onnx does not know it)."""
        try:
            return onnx.defs.get_schema(node.op_type, self.opset, node.domain).since_version
        except Exception:  # onnx.defs.SchemaError: an op or an opset onnx does not know (refused elsewhere)
            return 0

    def shape(self, name: str) -> Shape:
        return self._shapes.get(name)

    def dtype(self, name: str) -> int:
        """The element type of a value (0 when unknown)."""
        return self._types.get(name, 0)

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
    opset = _opset(model)
    _validate_control_flow(model.graph, opset)
    graph = _Graph(model.graph, opset)
    for index, node in enumerate(model.graph.node):
        check = _CHECKS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        negative = next((o for o in node.output if o in graph.negative), None)
        if check is None and negative is None:
            continue
        reason = check(graph, node, {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}) \
            if check is not None else None
        if not reason and negative is not None:
            reason = f"its output {escape_name(negative)} would have shape {graph.negative[negative]} (a negative dim)"
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
    if weight is not None and data is not None and len(weight) != len(data):
        return f"the weight has rank {len(weight)} (shape {list(weight)}) but the input has rank {len(data)}"
    reason = _check_window_attrs(graph, node, attrs)
    if reason:
        return reason
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
    if bias is not None and len(bias) != 1:
        return f"the bias has shape {list(bias)}; it must be 1-D, one value per output channel"
    if bias is not None and bias[0] >= 0 and bias[0] != outputs:
        return f"the bias has {bias[0]} values but the convolution has {outputs} output channels"
    return None


# ---- Gemm ----------------------------------------------------------------------------------------------

def _check_gemm(graph: _Graph, node, attrs) -> Optional[str]:
    """C broadcasts unidirectionally to the [M, N] product (strict inference does not check it)."""
    a, b = graph.static_shape(_input(node, 0)), graph.static_shape(_input(node, 1))
    c = graph.static_shape(_input(node, 2)) if _input(node, 2) else None
    if a is None or b is None or c is None or len(a) != 2 or len(b) != 2:
        return None
    m = a[1] if attrs.get("transA", 0) else a[0]
    n = b[0] if attrs.get("transB", 0) else b[1]
    if len(c) > 2 or any(d not in (1, want) for d, want in zip(reversed(c), (n, m))):
        return f"C of shape {list(c)} does not broadcast to the product's shape {[m, n]}"
    return None


# ---- windows: Conv, ConvTranspose and the pools -------------------------------------------------------------

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def _check_window_attrs(graph: _Graph, node, attrs) -> Optional[str]:
    """auto_pad is one of AUTO_PADS (onnxruntime refuses any other), SAME padding has no dilation (onnxruntime
    refuses it), kernel_shape, strides and dilations have one value per spatial dim, pads two, and every
    spatial dim of the output is at least 1."""
    auto_pad = attrs.get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode("utf-8", "replace") if isinstance(auto_pad, bytes) else str(auto_pad)
    if auto_pad not in AUTO_PADS:
        return f"auto_pad {auto_pad!r} is not one of {', '.join(AUTO_PADS)}"
    if auto_pad != "NOTSET" and any(attrs.get("pads", [])):
        return f"auto_pad {auto_pad} and pads {list(attrs['pads'])} are both set (the spec allows one or the other)"
    dilations = attrs.get("dilations")
    if node.op_type == "Conv" and auto_pad.startswith("SAME") and any(d != 1 for d in dilations or ()):
        return f"auto_pad {auto_pad} with dilations {list(dilations)} (onnxruntime supports SAME padding only " \
               "without dilation)"
    data = graph.shape(_input(node, 0))
    if data is None:
        return None
    if len(data) < 3:
        return f"the input has rank {len(data)}; it needs a batch, a channel and at least one spatial dim"
    spatial = len(data) - 2
    for name, per_dim in (("kernel_shape", 1), ("strides", 1), ("dilations", 1), ("pads", 2),
                          ("output_padding", 1)):
        values = attrs.get(name)
        if values is not None and len(values) != per_dim * spatial:
            return f"{name} {list(values)} has {len(values)} values for {spatial} spatial dims " \
                   f"(input shape {list(data)}; {per_dim * spatial} expected)"
    out = graph.shape(node.output[0]) if node.output else None
    if out is not None and len(out) == len(data) and 0 in out[2:]:  # -1: unknown
        return f"the output would have shape {list(out)}: the window does not fit the input (shape {list(data)})"
    return _check_window_fits(graph, node, attrs, data, auto_pad) if node.op_type == "Conv" else None


def _check_ceil_output(node, attrs, data: tuple) -> Optional[str]:
    """A ceil_mode pool has at least one output element per spatial dim as onnxruntime counts them,
    ceil((size + pads - window) / stride + 1) in floats: a window far larger than its input still gives one
    (EfficientNet's 320 x 320 AvgPool over 2 x 2), one that overhangs by a whole stride none."""
    auto_pad = _auto_pad(attrs)
    kernel = attrs.get("kernel_shape")
    spatial = len(data) - 2
    if auto_pad.startswith("SAME") or kernel is None or len(kernel) != spatial:
        return None
    strides = list(attrs.get("strides", [1] * spatial))
    dilations = list(attrs.get("dilations", [1] * spatial))
    pads = [0] * 2 * spatial if auto_pad == "VALID" else list(attrs.get("pads", [0] * 2 * spatial))
    for i in range(spatial):
        size, extent = data[2 + i], (kernel[i] - 1) * dilations[i] + 1
        if size < 0 or strides[i] < 1:
            continue
        if math.ceil((size + pads[i] + pads[spatial + i] - extent) / strides[i] + 1) < 1:
            return (f"with ceil_mode, onnxruntime computes an empty output: the window ({extent} elements in "
                    f"spatial dim {i}, stride {strides[i]}) overhangs the padded input ({size} + pads {pads[i]} "
                    f"and {pads[spatial + i]}; input shape {list(data)}) by a whole stride")
    return None


def _auto_pad(attrs) -> str:
    value = attrs.get("auto_pad", b"NOTSET")
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _check_window_fits(graph: _Graph, node, attrs, data: tuple, auto_pad: str, why: str = "") -> Optional[str]:
    """Conv, and the pools with ceil_mode: the dilated kernel fits the padded input in every spatial dim
    (onnxruntime: "Invalid input shape", or an empty pool output; onnx's inference rounds the negative quotient
    toward zero and says one output element).  Without ceil_mode onnxruntime's pools truncate the quotient as
    onnx does, and run such a window."""
    if node.op_type == "ConvTranspose" or auto_pad.startswith("SAME"):
        return None
        return None
    spatial = len(data) - 2
    kernel = attrs.get("kernel_shape")
    if kernel is None and node.op_type == "Conv":
        weight = graph.shape(_input(node, 1))
        kernel = weight[2:] if weight is not None and len(weight) == len(data) else None
    if kernel is None or len(kernel) != spatial:
        return None
    dilations = list(attrs.get("dilations", [1] * spatial))
    pads = [0] * 2 * spatial if auto_pad == "VALID" else list(attrs.get("pads", [0] * 2 * spatial))
    for i in range(spatial):
        size, extent = data[2 + i], (kernel[i] - 1) * dilations[i] + 1
        if size >= 0 and extent > size + pads[i] + pads[spatial + i]:
            return (f"{why}the window ({extent} elements in spatial dim {i}, kernel {list(kernel)}, dilations "
                    f"{dilations}) is larger than the padded input ({size} + pads {pads[i]} and "
                    f"{pads[spatial + i]}; input shape {list(data)})")
    return None


def _check_pool(graph: _Graph, node, attrs) -> Optional[str]:
    """The window attributes (_check_window_attrs); Global pools need rank >= 3; with ceil_mode, no window
    may start past the input and its begin padding before opset 22 (onnx's shape inference counts such a
    window until AveragePool-22 / MaxPool-22, onnxruntime never does: the output shapes would disagree)."""
    data = graph.shape(_input(node, 0))
    if node.op_type.startswith("Global"):
        if data is not None and len(data) < 3:
            return f"the input has rank {len(data)}; it needs a batch, a channel and at least one spatial dim"
        return None
    reason = _check_window_attrs(graph, node, attrs)
    if reason or not attrs.get("ceil_mode", 0):
        return reason
    if data is not None and len(data) >= 3:
        reason = _check_ceil_output(node, attrs, data)
        if reason:
            return reason
    if graph.schema_version(node) >= 22:
        return None
    out = graph.shape(node.output[0]) if node.output else None
    if data is None or out is None or len(out) != len(data) or len(data) < 3:
        return None
    spatial = len(data) - 2
    strides = list(attrs.get("strides", [1] * spatial))
    pads = list(attrs.get("pads", [0] * 2 * spatial))
    for i in range(spatial):
        size, o = data[2 + i], out[2 + i]
        if size < 0 or o < 1:
            continue
        if (o - 1) * strides[i] >= size + pads[i]:
            return (f"with ceil_mode, the last window of spatial dim {i} starts past the input (size {size}, begin "
                    f"pad {pads[i]}, stride {strides[i]}): onnx's shape inference before opset 22 counts it "
                    f"(output {list(out)}), onnxruntime does not; export with opset 22 or without ceil_mode")
    return None


# ---- operands and attributes onnxruntime checks when it runs the node ---------------------------------------

# input index -> what onnxruntime requires of its shape: "scalar" (0-D or one element in 1-D), "1-D"
_SCALAR_OPERANDS = {"CumSum": {1: "scalar"}, "Trilu": {1: "scalar"}, "Clip": {1: "scalar", 2: "scalar"},
                    "Reshape": {1: "1-D"}, "Expand": {1: "1-D"}, "Tile": {1: "1-D"}, "TopK": {1: "1-D"},
                    "Pad": {1: "1-D", 2: "scalar"}}
_REDUCE = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
           "ReduceLogSumExp", "ReduceSumSquare")
_MODES = {"DepthToSpace": ("mode", ("DCR", "CRD")), "Pad": ("mode", ("constant", "reflect", "edge", "wrap"))}
_FLAGS = {"CumSum": ("exclusive", "reverse"), "TopK": ("largest", "sorted")}  # onnxruntime: 2 is neither


def _check_operands(graph: _Graph, node, attrs) -> Optional[str]:
    """Scalar and 1-D operands have that shape, string modes and 0/1 flags are known values."""
    wants = dict(_SCALAR_OPERANDS.get(node.op_type, {}))
    if node.op_type in _REDUCE:
        wants[1] = "1-D"
    for index, want in wants.items():
        shape = graph.shape(_input(node, index)) if _input(node, index) else None
        if shape is None or any(d < 0 for d in shape):
            continue
        if want == "scalar" and not (len(shape) == 0 or (len(shape) == 1 and shape[0] == 1)):
            return f"input {index} has shape {list(shape)}; it must be a scalar (0-D or one element)"
        if want == "1-D" and len(shape) != 1:
            return f"input {index} has shape {list(shape)}; it must be 1-D"
    if node.op_type in _MODES:
        name, known = _MODES[node.op_type]
        value = attrs.get(name)
        value = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        if value is not None and value not in known:
            return f"{name} {value!r} is not one of {', '.join(known)}"
    for flag in _FLAGS.get(node.op_type, ()):
        if attrs.get(flag, 0) not in (0, 1):
            return f"{flag} is {attrs[flag]}; it must be 0 or 1"
    return None


def _check_depth_to_space(graph: _Graph, node, attrs) -> Optional[str]:
    reason = _check_operands(graph, node, attrs)
    data = graph.shape(_input(node, 0))
    block = int(attrs.get("blocksize", 0))
    if reason or data is None or len(data) != 4 or data[1] < 0 or block < 1:
        return reason
    if data[1] % (block * block):
        return f"the input's {data[1]} channels are not a multiple of blocksize^2 = {block * block}"
    return None


def _check_elements_axis(graph: _Graph, node, attrs) -> Optional[str]:
    """GatherElements, ScatterElements: the axis is within the data's rank, indices and updates have one shape,
    and every constant index is in range."""
    data = graph.shape(_input(node, 0))
    axis = int(attrs.get("axis", 0))
    if data is not None and not -len(data) <= axis < max(len(data), 1):
        return f"axis {axis} is out of range for an input of rank {len(data)}"
    if node.op_type in ("ScatterElements", "Scatter"):
        indices, updates = graph.shape(_input(node, 1)), graph.shape(_input(node, 2))
        if indices is not None and updates is not None and all(d >= 0 for d in indices + updates) \
                and indices != updates:
            return f"the indices (shape {list(indices)}) and the updates (shape {list(updates)}) differ in shape"
    return _check_axis_indices(graph, node, attrs)


def _check_mvn(graph: _Graph, node, attrs) -> Optional[str]:
    """MeanVarianceNormalization: at least one axis, each within the input's rank."""
    data = graph.shape(_input(node, 0))
    axes = attrs.get("axes", [0, 2, 3])
    if not axes:
        return "axes is empty; it must name at least one axis"
    if data is not None and any(not -len(data) <= a < len(data) for a in axes):
        return f"axes {list(axes)} are out of range for an input of rank {len(data)}"
    return None


def _check_einsum(graph: _Graph, node, attrs) -> Optional[str]:
    """Every operand term without an ellipsis has one label per dim of its input."""
    equation = attrs.get("equation", b"")
    equation = equation.decode("utf-8", "replace") if isinstance(equation, bytes) else str(equation)
    terms = equation.replace(" ", "").split("->")[0].split(",")
    for index, term in enumerate(terms):
        shape = graph.shape(_input(node, index))
        if shape is not None and "..." not in term and len(term) != len(shape):
            return (f"equation {equation!r}: operand {index} has {len(term)} labels but its input has rank "
                    f"{len(shape)}")
    return None


def _elements(dims) -> int:
    count = 1
    for d in dims:
        count *= int(d)
    return count


_CHECKS: dict[str, Callable] = {
    "Gather": _check_axis_indices,
    "GatherElements": _check_elements_axis,
    "ScatterElements": _check_elements_axis,
    "Scatter": _check_elements_axis,
    "GatherND": _check_nd_indices,
    "ScatterND": _check_nd_indices,
    "Reshape": lambda graph, node, attrs: _check_operands(graph, node, attrs) or _check_reshape(graph, node, attrs),
    "DepthToSpace": _check_depth_to_space,
    "Einsum": _check_einsum,
    "MeanVarianceNormalization": _check_mvn,
    **{op: _check_operands for op in ("CumSum", "Trilu", "Clip", "Expand", "Tile", "TopK", "Pad") + _REDUCE},
    "Conv": _check_conv,
    "ConvTranspose": _check_conv,
    "Gemm": _check_gemm,
    "MaxPool": _check_pool,
    "AveragePool": _check_pool,
    "LpPool": _check_pool,
    "GlobalAveragePool": _check_pool,
    "GlobalMaxPool": _check_pool,
    "GlobalLpPool": _check_pool,
}
