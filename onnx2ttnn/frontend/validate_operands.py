"""Validation of the data ops' operands: what strict inference lets pass but onnxruntime refuses when it runs
the node, or what would convert into a wrong program.
- Reshape keeps the element count: a constant target (0 copies the input dim unless allowzero, one -1 is
  inferred) or a static inferred output shape must hold as many elements as the static input.
- Gemm's C broadcasts to the [M, N] product, PRelu's slope to X.
- scalar and 1-D operands have that shape (Clip's bounds, Reshape's shape, Slice's starts, ...), string modes
  and 0/1 flags are known values (Cast's saturate too), DepthToSpace's channels divide by blocksize^2,
  SpaceToDepth's height and width by blocksize, CumSum's constant axis and MeanVarianceNormalization's axes too, an Einsum term has one label per dim
  and a label one size (or 1 across operands), LRN's size is odd and alpha and beta are positive,
  BatchNormalization's and InstanceNormalization's parameters hold one value per channel, Concat's axis is
  within the rank.
- LayerNormalization's axis is within the rank (fuzz seed 67 case 32), LpNormalization's too (fuzz seed 61).
(Indices: frontend/validate_indices.py; quantization parameters: frontend/validate_quantize.py.)

Before: `y = Reshape(x[2, 3], [4, 2])` converts; after: "the target shape [4, 2] holds 8 elements but the
input [2, 3] holds 6".
"""
from __future__ import annotations

import math

from typing import Callable, Optional

import numpy as np

from onnx2ttnn.frontend import validate_indices
from onnx2ttnn.frontend.validate_graph import GraphFacts, node_input

# ---- Reshape -------------------------------------------------------------------------------------------

def _check_reshape(graph: GraphFacts, node, attrs) -> Optional[str]:
    """The target keeps the static input's element count."""
    data = graph.static_shape(node_input(node, 0))
    if data is None:
        return None
    count = _elements(data)
    target = graph.value(node_input(node, 1))
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


# ---- Gemm ----------------------------------------------------------------------------------------------

def _check_gemm(graph: GraphFacts, node, attrs) -> Optional[str]:
    """A's and B's inner dims agree (Gemm-7's inference does not check them: fuzz seed 79 case 720, a [1, 512]
    A against a [10, 32] B^T, converted in bf16 and was an internal error in fp32; onnxruntime "GEMM: Dimension
    mismatch"), and C broadcasts unidirectionally to the [M, N] product (strict inference does not check it)."""
    a, b = graph.static_shape(node_input(node, 0)), graph.static_shape(node_input(node, 1))
    c = graph.static_shape(node_input(node, 2)) if node_input(node, 2) else None
    if a is None or b is None or len(a) != 2 or len(b) != 2:
        return None
    m, k = (a[1], a[0]) if attrs.get("transA", 0) else (a[0], a[1])
    n, kb = (b[0], b[1]) if attrs.get("transB", 0) else (b[1], b[0])
    if k != kb:
        return (f"A of shape {list(a)} and B of shape {list(b)} (transA {attrs.get('transA', 0)}, transB "
                f"{attrs.get('transB', 0)}) have inner dims {k} and {kb}")
    if c is None:
        return None
    if len(c) > 2 or any(d not in (1, want) for d, want in zip(reversed(c), (n, m))):
        return f"C of shape {list(c)} does not broadcast to the product's shape {[m, n]}"
    return None


def _check_prelu(graph: GraphFacts, node, attrs) -> Optional[str]:
    """The slope broadcasts unidirectionally to X (strict inference broadcasts both ways: a slope [3] beside
    X [3, 1] made a [3, 3] product where the output is [3, 1])."""
    x, slope = graph.static_shape(node_input(node, 0)), graph.static_shape(node_input(node, 1))
    if x is None or slope is None or graph.schema_version(node) < 7:
        return None
    if len(slope) > len(x) or any(d not in (1, want) for d, want in zip(reversed(slope), reversed(x))):
        return f"the slope of shape {list(slope)} does not broadcast to the input's shape {list(x)}"
    return None


# ---- operands and attributes onnxruntime checks when it runs the node ---------------------------------------

# input index -> what onnxruntime requires of its shape: "scalar" (0-D or one element in 1-D), "one element" (of
# any rank: If's condition, [1, 1] in openWakeWord's hey_jarvis model, which onnxruntime runs), "1-D", "0-D or 1-D"
_SCALAR_OPERANDS = {"CumSum": {1: "scalar"}, "Trilu": {1: "scalar"}, "Clip": {1: "scalar", 2: "scalar"},
                    "Reshape": {1: "1-D"}, "Expand": {1: "1-D"}, "Tile": {1: "1-D"}, "TopK": {1: "1-D"},
                    "Pad": {1: "1-D", 2: "scalar"}, "Slice": {1: "1-D", 2: "1-D", 3: "1-D", 4: "1-D"},
                    "Split": {1: "1-D"}, "Squeeze": {1: "1-D"}, "If": {0: "one element"},
                    "Unsqueeze": {1: "0-D or 1-D"},  # (fuzz seed 181 case 450: a [1, 1] axes converted)
                    "Resize": {1: "1-D", 2: "1-D", 3: "1-D"}}  # (Resize: fuzz seed 149 case 436, a 4-D scales)
_REDUCE = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
           "ReduceLogSumExp", "ReduceSumSquare")
# op -> (string attribute, its known values), ...: onnxruntime refuses another value even where the op's other
# attributes make it irrelevant (Resize's nearest_mode in linear mode)
_MODES = {"DepthToSpace": (("mode", ("DCR", "CRD")),), "Pad": (("mode", ("constant", "reflect", "edge", "wrap")),),
          "Gelu": (("approximate", ("none", "tanh")),),
          # (onnxruntime runs ScatterElements with another reduction as "none"; the spec lists these: fuzz seed 71
          # case 828, reduction "nearest", crashed the simulator)
          "ScatterElements": (("reduction", ("none", "add", "mul", "max", "min")),),
          "Resize": (("mode", ("nearest", "linear", "cubic")),
                     ("coordinate_transformation_mode", ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                                         "align_corners", "asymmetric", "tf_crop_and_resize",
                                                         "tf_half_pixel_for_nn")),
                     ("nearest_mode", ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")),
                     ("keep_aspect_ratio_policy", ("stretch", "not_larger", "not_smaller")))}
# onnxruntime: 2 is neither (TopK's largest=2 is false; Cast's saturate=2 made NaN of an int64 4)
_FLAGS = {"CumSum": ("exclusive", "reverse"), "TopK": ("largest", "sorted"), "Cast": ("saturate",),
          "CastLike": ("saturate",), "Mod": ("fmod",),  # (Mod: fuzz seed 53 case 314)
          "Resize": ("exclude_outside", "antialias")}  # (fuzz seed 167 case 166: an unused one's exclude_outside -2)


def _check_operands(graph: GraphFacts, node, attrs) -> Optional[str]:
    """Scalar and 1-D operands have that shape, string modes and 0/1 flags are known values."""
    wants = dict(_SCALAR_OPERANDS.get(node.op_type, {}))
    if node.op_type in _REDUCE:
        wants[1] = "1-D"
    for index, want in wants.items():
        shape = graph.shape(node_input(node, index)) if node_input(node, index) else None
        if shape is None or any(d < 0 for d in shape):
            continue
        if want == "scalar" and not (len(shape) == 0 or (len(shape) == 1 and shape[0] == 1)):
            return f"input {index} has shape {list(shape)}; it must be a scalar (0-D or one element)"
        if want == "one element" and math.prod(shape) != 1:
            return f"input {index} has shape {list(shape)}; it must hold one element"
        if want == "1-D" and len(shape) != 1:
            return f"input {index} has shape {list(shape)}; it must be 1-D"
        if want == "0-D or 1-D" and len(shape) > 1:
            return f"input {index} has shape {list(shape)}; it must be 0-D or 1-D"
    for name, known in _MODES.get(node.op_type, ()):
        value = attrs.get(name)
        value = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        if value is not None and value not in known:
            return f"{name} {value!r} is not one of {', '.join(known)}"
    for flag in _FLAGS.get(node.op_type, ()):
        if attrs.get(flag, 0) not in (0, 1):
            return f"{flag} is {attrs[flag]}; it must be 0 or 1"
    return None


def _check_depth_to_space(graph: GraphFacts, node, attrs) -> Optional[str]:
    reason = _check_operands(graph, node, attrs)
    data = graph.shape(node_input(node, 0))
    block = int(attrs.get("blocksize", 0))
    if reason or data is None or len(data) != 4 or data[1] < 0 or block < 1:
        return reason
    if data[1] % (block * block):
        return f"the input's {data[1]} channels are not a multiple of blocksize^2 = {block * block}"
    return None


def _check_space_to_depth(graph: GraphFacts, node, attrs) -> Optional[str]:
    """The height and width are multiples of blocksize (onnxruntime: "SpaceToDepth requires input height to be
    a multiple of block_size"; strict inference floors the quotient)."""
    data = graph.shape(node_input(node, 0))
    block = int(attrs.get("blocksize", 0))
    if data is None or len(data) != 4 or block < 1:
        return None
    for dim, size in (("height", data[2]), ("width", data[3])):
        if size >= 0 and size % block:
            return f"the input's {dim} {size} is not a multiple of blocksize {block}"
    return None


def _check_cumsum(graph: GraphFacts, node, attrs) -> Optional[str]:
    """The operands and flags, and a constant axis within the input's rank (onnxruntime: "axis 1 is not in
    valid range [-1,0]"; strict inference does not read the axis)."""
    reason = _check_operands(graph, node, attrs)
    data, axis = graph.shape(node_input(node, 0)), graph.value(node_input(node, 1))
    if reason or data is None or axis is None or axis.size != 1:
        return reason
    value = int(axis.reshape(-1)[0])
    if not -len(data) <= value < len(data):
        return f"axis {value} is out of range for an input of rank {len(data)}"
    return None


def _check_transpose(graph: GraphFacts, node, attrs) -> Optional[str]:
    """perm has one entry per dim (onnxruntime: "perm size: 1 does not match input rank: 2")."""
    data, perm = graph.shape(node_input(node, 0)), attrs.get("perm")
    if data is not None and perm is not None and len(perm) != len(data):
        return f"perm {list(perm)} has {len(perm)} entries for an input of rank {len(data)}"
    return None


def _check_layer_norm(graph: GraphFacts, node, attrs) -> Optional[str]:
    """LayerNormalization, RMSNormalization: the axis is within the input's rank (onnxruntime: "Unexpected axis
    value (16) rank of first input is 2"; strict inference lets it pass; fuzz seed 67 case 32), and the scale
    and bias broadcast to the normalised dims X.shape[axis:], each dim 1 or the input's (onnxruntime: "Scale
    and (optional) bias must match X.shape[axis:] or be NumPy-broadcastable to it"; fuzz seed 101 cases 18,
    506: a [5, 1] scale for [5, 2, 1], an unused node the converter then removed; seed 137 case 46: a [3, 3, 8,
    8] scale for [3, 3, 8, 1], which broadcasts both ways but not to the input)."""
    data = graph.shape(node_input(node, 0))
    axis = int(attrs.get("axis", -1))
    if data is None:
        return None
    if not -len(data) <= axis < len(data):
        return f"axis {axis} is out of range for an input of rank {len(data)}"
    normalised = data[axis % len(data):]
    for index, what in ((1, "scale"), (2, "bias")):
        shape = graph.shape(node_input(node, index)) if node_input(node, index) else None
        if shape is not None and any(a >= 0 and b >= 0 and a not in (1, b)
                                     for a, b in zip(reversed(shape), reversed(normalised))):
            return f"the {what} of shape {list(shape)} does not broadcast with the normalised dims {list(normalised)}"
    return None


def _check_mvn(graph: GraphFacts, node, attrs) -> Optional[str]:
    """MeanVarianceNormalization: at least one axis, each within the input's rank."""
    data = graph.shape(node_input(node, 0))
    axes = attrs.get("axes", [0, 2, 3])
    if not axes:
        return "axes is empty; it must name at least one axis"
    if data is not None and any(not -len(data) <= a < len(data) for a in axes):
        return f"axes {list(axes)} are out of range for an input of rank {len(data)}"
    return None


def _check_einsum(graph: GraphFacts, node, attrs) -> Optional[str]:
    """Every operand term without an ellipsis has one label per dim of its input; a label repeated within a term
    stands for dims of one size, and across terms for dims of one size or 1 (onnxruntime: "Einsum operands could
    not be broadcast together"; fuzz seed 47 case 562: "edge" over [3, 4, 3, 5])."""
    equation = attrs.get("equation", b"")
    equation = equation.decode("utf-8", "replace") if isinstance(equation, bytes) else str(equation)
    terms = equation.replace(" ", "").split("->")[0].split(",")
    sizes: dict[str, tuple[int, int]] = {}  # label -> (a size other than 1, the operand it was seen in)
    for index, term in enumerate(terms):
        shape = graph.shape(node_input(node, index))
        if shape is None:
            continue
        if "..." not in term and len(term) != len(shape):
            return (f"equation {equation!r}: operand {index} has {len(term)} labels but its input has rank "
                    f"{len(shape)}")
        left, _, right = term.partition("...")
        if len(left) + len(right) > len(shape):
            continue
        dims = list(zip(left, shape)) + list(zip(right, shape[len(shape) - len(right):]))
        seen = {}
        for label, size in dims:
            if size < 0:
                continue
            if seen.setdefault(label, size) != size:
                return (f"equation {equation!r}: label {label!r} is repeated in operand {index} (shape "
                        f"{list(shape)}) over dims of sizes {seen[label]} and {size}")
            known = sizes.get(label)
            if size != 1 and known is not None and known[0] != size:
                return (f"equation {equation!r}: label {label!r} has size {known[0]} in operand {known[1]} and "
                        f"{size} in operand {index}")
            if size != 1:
                sizes.setdefault(label, (size, index))
    return None


def _check_lrn(graph: GraphFacts, node, attrs) -> Optional[str]:
    """LRN: an odd size > 0, alpha > 0 and beta > 0 (onnxruntime: "beta_ > 0.0f was false"; fuzz seed 47 case
    920: beta 0)."""
    size = int(attrs.get("size", 0))
    if size <= 0 or size % 2 == 0:
        return f"size {size} must be odd and positive"
    for name, default in (("alpha", 1e-4), ("beta", 0.75)):
        if not float(attrs.get(name, default)) > 0:
            return f"{name} {float(attrs.get(name, default))} must be positive"
    return None


def _check_batch_norm(graph: GraphFacts, node, attrs) -> Optional[str]:
    """scale, B, mean and var are 1-D with one value per channel (onnxruntime: "Invalid input var: 0th
    dimension != C"; fuzz seed 53 cases 466, 1480 were internal errors)."""
    if attrs.get("spatial", 1):  # (spatial=0: per element)
        return _per_channel(graph, node, ("scale", "B", "mean", "var"))
    return None


def _per_channel(graph: GraphFacts, node, names) -> Optional[str]:
    """Inputs 1, 2, ... (`names`) are [C], C the input's dim 1, where their shapes are known."""
    data = graph.shape(node_input(node, 0))
    if data is None or len(data) < 2 or data[1] < 0:
        return None
    for index, what in enumerate(names, 1):
        shape = graph.shape(node_input(node, index)) if node_input(node, index) else None
        if shape is not None and all(d >= 0 for d in shape) and shape != (data[1],):
            return f"{what} has shape {list(shape)}; it must be [{data[1]}], one value per channel"
    return None


def _check_concat(graph: GraphFacts, node, attrs) -> Optional[str]:
    """The axis is within the inputs' rank (onnxruntime: "axis 1099511627776 is not in valid range [-4,3]"; fuzz
    seed 53 case 1324)."""
    data = graph.shape(node_input(node, 0))
    axis = int(attrs.get("axis", 0))
    if data is not None and data and not -len(data) <= axis < len(data):
        return f"axis {axis} is out of range for inputs of rank {len(data)}"
    return None


def _check_variadic(graph: GraphFacts, node, attrs) -> Optional[str]:
    """Max, Min, Sum, Mean before version 8 take inputs of one shape (broadcasting came with 8; onnxruntime runs
    version 6 only on equal shapes: fuzz seed 103 case 1786, a Min-6 of [2], [5, 2] and [1], converted)."""
    if graph.schema_version(node) >= 8:
        return None
    shapes = [graph.static_shape(name) for name in node.input if name]
    known = [s for s in shapes if s is not None]
    if len(known) == len(shapes) and len(set(known)) > 1:
        return (f"its inputs have shapes {', '.join(str(list(s)) for s in known)}; version "
                f"{graph.schema_version(node)} takes one shape (broadcasting came with version 8)")
    return None


def _check_instance_norm(graph: GraphFacts, node, attrs) -> Optional[str]:
    """The input has a batch, a channel and a spatial dim at least (onnxruntime: "Invalid input data: number of
    dimensions is less than 3"; fuzz seed 103 case 1060, a rank-1 input, was an internal error); scale and B
    are [C] (onnxruntime: "Invalid input scale: number of dimensions is not 1: 2"; fuzz seed 127 case 1476, a
    [4, 1] scale, converted)."""
    data = graph.shape(node_input(node, 0))
    if data is not None and len(data) < 3:
        return f"the input has rank {len(data)}; it needs a batch, a channel and at least one spatial dim"
    return _per_channel(graph, node, ("scale", "B"))


def _check_lp_norm(graph: GraphFacts, node, attrs) -> Optional[str]:
    """p is 1 or 2, the only orders the spec defines (onnxruntime: "p_ == 1 || p_ == 2 was false"; fuzz seed 59
    case 1816: p 3 was accepted); the axis is within the input's rank (onnxruntime: "axis 64 is not in valid
    range [-3,2]"; fuzz seed 61 case 756)."""
    p = int(attrs.get("p", 2))
    if p not in (1, 2):
        return f"p {p}: LpNormalization's order must be 1 or 2"
    data, axis = graph.shape(node_input(node, 0)), int(attrs.get("axis", -1))
    if data is not None and not -len(data) <= axis < max(len(data), 1):
        return f"axis {axis} is out of range for an input of rank {len(data)}"
    return None


def _check_split(graph: GraphFacts, node, attrs) -> Optional[str]:
    """The operands (above), and num_outputs, where given, equal to the node's outputs (onnxruntime: "Number of
    outputs (3) does not match num_outputs (64)"; fuzz seed 73 case 508)."""
    reason = _check_operands(graph, node, attrs)
    count = attrs.get("num_outputs")
    if reason is None and count is not None and int(count) != len(node.output):
        return f"num_outputs {int(count)} but the node has {len(node.output)} outputs"
    return reason


def _elements(dims) -> int:
    count = 1
    for d in dims:
        count *= int(d)
    return count


CHECKS: dict[str, Callable] = {
    "ScatterElements": lambda graph, node, attrs: (_check_operands(graph, node, attrs)
                                                   or validate_indices.check_elements_axis(graph, node, attrs)),
    "Reshape": lambda graph, node, attrs: _check_operands(graph, node, attrs) or _check_reshape(graph, node, attrs),
    "DepthToSpace": _check_depth_to_space,
    "SpaceToDepth": _check_space_to_depth,
    "CumSum": _check_cumsum,
    "PRelu": _check_prelu,
    "Transpose": _check_transpose,
    "Einsum": _check_einsum,
    "LRN": _check_lrn,
    "BatchNormalization": _check_batch_norm,
    "Concat": _check_concat,
    "MeanVarianceNormalization": _check_mvn,
    "LayerNormalization": _check_layer_norm,  # (fuzz seed 67 case 32)
    "RMSNormalization": _check_layer_norm,
    "LpNormalization": _check_lp_norm,
    "InstanceNormalization": _check_instance_norm,
    **{op: _check_variadic for op in ("Max", "Min", "Sum", "Mean")},
    **{op: _check_operands for op in ("Trilu", "Clip", "Expand", "Tile", "TopK", "Pad", "Slice", "Cast", "CastLike",
                                    "Gelu", "Resize", "Squeeze", "Unsqueeze", "If", "Mod")
       + _REDUCE},
    "Gemm": _check_gemm,
    "Split": _check_split,
}
