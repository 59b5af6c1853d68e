"""Validation of quantization parameters: what strict inference lets pass but onnxruntime refuses when it runs
the node (a QuantizeLinear -> DequantizeLinear pair is fused before lowering, so the lowering's own checks never
see it).
- QuantizeLinear / DequantizeLinear: the axis is within the rank, the scale is per tensor or per axis (or per
  block), the zero point has the scale's shape, QuantizeLinear's precision is 0, FLOAT or FLOAT16;
- QLinearConv: the weight's scale and zero point are per tensor or one per output channel, its bias one value
  per output channel (called by frontend/validate_windows.py, which checks QLinearConv's window);
- QLinearMatMul: a's and y's scale and zero point hold one element, b's are per tensor or per column;
- ConvInteger's x_zero_point and MatMulInteger's a_zero_point hold one element, ConvInteger's w_zero_point one
  or one per output channel (called for ConvInteger by frontend/validate_windows.py);
- QuantizeLinear / DequantizeLinear's block_size is not negative, and a positive one has a scale of the
  input's rank.

Before: `DequantizeLinear(x[5, 2, 5], s[5])` (axis 1) converts, scaling by the first two values; after: "the
scale has 5 values but axis 1 of the input (shape [5, 2, 5]) has 2 elements".
"""
from __future__ import annotations

from typing import Callable, Optional

import onnx

from onnx2ttnn.frontend.validate_graph import GraphFacts, node_input

# QuantizeLinear's `precision` (opset 23): the scale's type (0), or a type onnxruntime divides in ("CPU
# QuantizeLinear only supports precision 0 (use scale type), FLOAT, and FLOAT16")
_PRECISIONS = (0, onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16)


def _one_value(*shapes) -> bool:
    """Every shape holds exactly one element: per tensor, whether written [] or [1] (onnxruntime takes both)."""
    return all(all(d == 1 for d in shape) for shape in shapes)


def _check_quantize_axis(graph: GraphFacts, node, attrs) -> Optional[str]:
    """QuantizeLinear / DequantizeLinear: the axis is within the input's rank, per tensor too (onnxruntime: "axis
    16 is not in valid range [-1,0]"; a QuantizeLinear -> DequantizeLinear pair fused before lowering was
    never checked); the zero point has the scale's shape; QuantizeLinear's precision is one onnxruntime
    divides in."""
    data, scale = graph.shape(node_input(node, 0)), graph.shape(node_input(node, 1))
    zero = graph.shape(node_input(node, 2)) if node_input(node, 2) else None
    axis = int(attrs.get("axis", 1))
    if scale is not None and zero is not None and zero != scale and not _one_value(zero, scale):  # (seed 53: 114, 986)
        return f"the zero point has shape {list(zero)} but the scale {list(scale)}; they must have one shape"
    if int(attrs.get("block_size", 0)) < 0:  # (fuzz seed 61 case 1680: "'block_size' must be non-negative.")
        return f"block_size {attrs['block_size']} must not be negative"
    if attrs.get("precision", 0) not in _PRECISIONS:  # (seed 47 case 322: an int16 precision)
        return (f"precision {attrs['precision']} is not a type onnxruntime divides in "
                f"({', '.join(onnx.TensorProto.DataType.Name(p) for p in _PRECISIONS[1:])})")
    if data is not None and "axis" in attrs and not -max(len(data), 1) <= axis < max(len(data), 1):
        return f"axis {axis} is out of range for an input of rank {len(data)}"
    if int(attrs.get("block_size", 0)) > 0 and data is not None and scale is not None and len(scale) != len(data):
        # (onnxruntime: "quant_block_size" in PrepareForQDQ; fuzz seed 71 cases 228, 1026: a scalar scale)
        return f"block_size {attrs['block_size']} needs a scale of the input's rank {len(data)}, not {list(scale)}"
    if data is None or scale is None or len(scale) == 0 or scale == (1,) or any(d < 0 for d in scale):
        return None
    if not -len(data) <= axis < len(data):  # (seed 79 case 1156: the default axis 1, a rank-1 input, an [8] scale)
        return (f"a per-axis scale (shape {list(scale)}) along axis {axis}, out of range for an input of rank "
                f"{len(data)}")
    if len(scale) > 1 and not attrs.get("block_size", 0):  # (seed 47 case 1092: a [5, 3, 2] scale)
        return f"the scale has shape {list(scale)}; it must be a scalar or 1-D (one value per element of axis)"
    if len(scale) == 1 and -len(data) <= axis < len(data) and data[axis] >= 0 and scale[0] != data[axis]:
        return (f"the scale has {scale[0]} values but axis {axis} of the input (shape {list(data)}) has "
                f"{data[axis]} elements")  # (seed 47 case 1186)
    return None


def check_qlinear_conv_weight(graph: GraphFacts, node, attrs) -> Optional[str]:
    """QLinearConv's w_scale and w_zero_point: a scalar or one value per output channel (onnxruntime: "QLinearConv
    : filter scale shape invalid"; seed 53 case 1040: a [4, 1] scale); its bias B one value per output channel
    (onnxruntime at run time: "bias shape invalid. bias must be a 1D tensor of size output_channels"; seed 163
    case 1696: 8 values for 2 channels, an internal error in lowering)."""
    weight = graph.shape(node_input(node, 3))
    for index, what in ((4, "weight scale"), (5, "weight zero point")):
        shape = graph.shape(node_input(node, index)) if node_input(node, index) else None
        if shape is None or weight is None or not weight or weight[0] < 0 or any(d < 0 for d in shape):
            continue
        if shape not in ((), (1,), (weight[0],)):
            return (f"the {what} has shape {list(shape)}; it must be a scalar or hold one value per output "
                    f"channel ({weight[0]})")
    bias = graph.shape(node_input(node, 8)) if node_input(node, 8) else None
    if bias is not None and weight and weight[0] >= 0 and all(d >= 0 for d in bias) and bias != (weight[0],):
        return f"the bias has shape {list(bias)}; it must be 1-D, one value per output channel ({weight[0]})"
    return None


def check_integer_zero_points(graph: GraphFacts, node, attrs) -> Optional[str]:
    """ConvInteger's x_zero_point and MatMulInteger's a_zero_point hold one element, 0-D or 1-D (onnxruntime:
    "IsScalarOr1ElementVector(X_Zero_Point) was false"; fuzz seed 127 case 762: a [4, 2, 3, 3] x_zero_point of an
    unused ConvInteger converted, the node removed before its lowering saw it; MatMulInteger's per-row form, which
    the spec allows, onnxruntime refuses and the lowering does not take); ConvInteger's w_zero_point is a scalar
    or one value per output channel (the spec; onnxruntime runs the scalar only)."""
    first = graph.shape(node_input(node, 2)) if node_input(node, 2) else None
    if first is not None and all(d >= 0 for d in first) and not (len(first) <= 1 and _one_value(first)):
        what = "x_zero_point" if node.op_type == "ConvInteger" else "a_zero_point"
        return f"{what} has shape {list(first)}; it must be a scalar (0-D or one element)"
    weight = graph.shape(node_input(node, 1))
    zero = graph.shape(node_input(node, 3)) if node.op_type == "ConvInteger" and node_input(node, 3) else None
    if zero is None or weight is None or not weight or weight[0] < 0 or any(d < 0 for d in zero):
        return None
    if zero not in ((), (1,), (weight[0],)):
        return (f"w_zero_point has shape {list(zero)}; it must be a scalar or hold one value per output channel "
                f"({weight[0]})")
    return None


# ---- QLinearMatMul (fuzz seed 61) ------------------------------------------------------------------------

def _check_qlinear_matmul(graph: GraphFacts, node, attrs) -> Optional[str]:
    """QLinearMatMul: a's and y's scale and zero point hold one element, 0-D or 1-D (onnxruntime:
    "IsScalarOr1ElementVector(a_scale) was false"; fuzz seed 61 case 382: a [2, 4] a_scale); b's are a scalar,
    one element, b's columns for a 2-D b, or b's shape with 1 in the second-to-last dim (onnxruntime:
    "weight zero point must be a scalar, 1D tensor of size 1, or last to second dimension is 1")."""
    b = graph.shape(node_input(node, 3))
    for index, what in ((1, "a_scale"), (2, "a_zero_point"), (6, "y_scale"), (7, "y_zero_point"),
                        (4, "b_scale"), (5, "b_zero_point")):
        shape = graph.shape(node_input(node, index)) if node_input(node, index) else None
        if shape is None or any(d < 0 for d in shape) or (len(shape) <= 1 and _one_value(shape)):
            continue
        if index not in (4, 5):
            return f"{what} has shape {list(shape)}; it must be a scalar (0-D or one element)"
        if b is None or any(d < 0 for d in b):
            continue
        per_column = len(shape) == 1 and len(b) == 2 and shape[0] == b[1]
        stacked = len(shape) == len(b) >= 2 and shape[-2] == 1 and shape[:-2] + shape[-1:] == b[:-2] + b[-1:]
        if not (per_column or stacked):
            return (f"{what} has shape {list(shape)}; for b of shape {list(b)} it must be a scalar, one value per "
                    "column, or b's shape with 1 in the second-to-last dim")
    return None


CHECKS: dict[str, Callable] = {
    "QuantizeLinear": _check_quantize_axis,
    "DequantizeLinear": _check_quantize_axis,
    "QLinearMatMul": _check_qlinear_matmul,  # (fuzz seed 61)
    "MatMulInteger": check_integer_zero_points,  # (fuzz seed 127; ConvInteger's: frontend/validate_windows.py)
}
