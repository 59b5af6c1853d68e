"""Validation of the windowed ops, Conv, ConvTranspose and the pools: the weight W agrees with the input and
the attributes (W's rank is the input's, kernel_shape is W's spatial dims, the input channels are W's, times
`group` for Conv, and a bias has one value per output channel); a known auto_pad, no dilation with SAME
padding, one value per spatial dim in the window attributes, an input of rank >= 3, an output of at least one
element per spatial dim, a Conv (ConvInteger, QLinearConv) window that fits its padded input, no ConvTranspose
with SAME padding and output_padding, a pool's pads smaller than its kernel, and before opset 22 no ceil_mode
window that starts past the input (onnx and onnxruntime disagree on both sizes).

Before: `Conv<kernel_shape=[5, 5]>(x[1, 2, 5, 5], W[4, 2, 3, 3])` converts with a kernel W does not have;
after: "kernel_shape [5, 5] contradicts the weight's spatial dims [3, 3] (W shape [4, 2, 3, 3])".
"""
from __future__ import annotations

import math
from typing import Callable, Optional

from onnx2ttnn.frontend.validate_graph import GraphFacts, node_input
from onnx2ttnn.frontend.validate_quantize import check_integer_zero_points, check_qlinear_conv_weight

# ---- Conv ----------------------------------------------------------------------------------------------

def _check_conv(graph: GraphFacts, node, attrs) -> Optional[str]:
    """kernel_shape, input channels and bias length agree with the weight."""
    weight, data = graph.shape(node_input(node, 1)), graph.shape(node_input(node, 0))
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
    bias = graph.shape(node_input(node, 2)) if node_input(node, 2) else None
    if bias is not None and len(bias) != 1:
        return f"the bias has shape {list(bias)}; it must be 1-D, one value per output channel"
    if bias is not None and bias[0] >= 0 and bias[0] != outputs:
        return f"the bias has {bias[0]} values but the convolution has {outputs} output channels"
    return None


def _check_integer_conv_groups(graph: GraphFacts, node, attrs) -> Optional[str]:
    """ConvInteger, QLinearConv: kernel_shape is the weight's spatial dims (onnxruntime: "kernel_shape is not
    compatible with W shape"; fuzz seed 73 case 288), group >= 1 divides the weight's output channels and the
    input has `weight[1] * group` channels (onnxruntime: "Input channels C is not equal to kernel channels *
    group. C: 1 kernel channels: 1 group: 0"; fuzz seed 71 case 824, group 0, converted)."""
    weight = graph.shape(node_input(node, _CONVS[node.op_type]))
    data = graph.shape(node_input(node, 0))
    group = int(attrs.get("group", 1))
    if group < 1:
        return f"group {group} must be at least 1"
    if weight is None or len(weight) < 3 or any(d < 0 for d in weight):
        return None
    kernel = attrs.get("kernel_shape")
    if kernel is not None and list(kernel) != list(weight[2:]):
        return (f"kernel_shape {list(kernel)} contradicts the weight's spatial dims {list(weight[2:])} "
                f"(W shape {list(weight)})")
    if weight[0] % group:
        return f"group {group} does not divide the weight's {weight[0]} output channels (W shape {list(weight)})"
    if data is not None and len(data) == len(weight) and data[1] >= 0 and data[1] != weight[1] * group:
        return (f"the input has {data[1]} channels but the weight (shape {list(weight)}, group {group}) "
                f"takes {weight[1] * group}")
    return None


# ---- windows: Conv, ConvTranspose and the pools -------------------------------------------------------------

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
_CONVS = {"Conv": 1, "ConvInteger": 1, "QLinearConv": 3}  # the convolutions (not transposed): their weight input


def _check_window_attrs(graph: GraphFacts, node, attrs) -> Optional[str]:
    """auto_pad is one of AUTO_PADS (onnxruntime refuses any other), SAME padding has no dilation (onnxruntime
    refuses it) and, in a ConvTranspose, no output_padding (onnx and onnxruntime disagree on the size),
    kernel_shape, strides and dilations have one value per spatial dim, pads two, and every spatial dim of the
    output is at least 1."""
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
    padding = attrs.get("output_padding")
    if node.op_type == "ConvTranspose" and auto_pad.startswith("SAME") and any(padding or ()):
        # (fuzz seed 53 cases 1, 673: onnx adds output_padding to input * stride, onnxruntime does not)
        return f"auto_pad {auto_pad} with output_padding {list(padding)}: onnx's shape inference and onnxruntime " \
               "disagree on the output size"
    data = graph.shape(node_input(node, 0))
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
    return _check_window_fits(graph, node, attrs, data, auto_pad) if node.op_type in _CONVS else None


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


def _check_window_fits(graph: GraphFacts, node, attrs, data: tuple, auto_pad: str, why: str = "") -> Optional[str]:
    """Conv, and the pools with ceil_mode: the dilated kernel fits the padded input in every spatial dim
    (onnxruntime: "Invalid input shape", or an empty pool output; onnx's inference rounds the negative quotient
    toward zero and says one output element).  Without ceil_mode onnxruntime's pools truncate the quotient as
    onnx does, and run such a window."""
    if node.op_type == "ConvTranspose" or auto_pad.startswith("SAME"):
        return None
        return None
    spatial = len(data) - 2
    kernel = attrs.get("kernel_shape")
    if kernel is None and node.op_type in _CONVS:
        weight = graph.shape(node_input(node, _CONVS[node.op_type]))
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


def _check_pads_within_kernel(attrs) -> Optional[str]:
    """A pool's pads are smaller than its kernel in each spatial dim (onnxruntime: "Pad should be smaller than
    kernel"; fuzz seed 173 case 112: a MaxPool with kernel [1] and pads [0, 7] converted): a window could
    otherwise hold padding only, whose maximum or average the spec leaves undefined (the average divides by a
    count of 0)."""
    kernel, pads = list(attrs.get("kernel_shape", [])), list(attrs.get("pads", []))
    if len(pads) != 2 * len(kernel):
        return None
    for i, k in enumerate(kernel):
        if max(pads[i], pads[len(kernel) + i]) >= k:
            return (f"pads {pads} are not smaller than kernel_shape {kernel} in spatial dim {i} (a window could "
                    "hold padding only)")
    return None


def _check_pool(graph: GraphFacts, node, attrs) -> Optional[str]:
    """The window attributes (_check_window_attrs), pads smaller than the kernel; Global pools need rank >= 3;
    with ceil_mode, no window
    may start past the input and its begin padding before opset 22 (onnx's shape inference counts such a
    window until AveragePool-22 / MaxPool-22, onnxruntime never does: the output shapes would disagree)."""
    data = graph.shape(node_input(node, 0))
    if node.op_type.startswith("Global"):
        if data is not None and len(data) < 3:
            return f"the input has rank {len(data)}; it needs a batch, a channel and at least one spatial dim"
        return None
    reason = _check_window_attrs(graph, node, attrs) or _check_pads_within_kernel(attrs)
    # (onnxruntime: "storage_order == 0 || storage_order == 1 was false"; fuzz seed 97 case 1608)
    if not reason and attrs.get("storage_order", 0) not in (0, 1):
        reason = f"storage_order {attrs['storage_order']} must be 0 or 1"
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


CHECKS: dict[str, Callable] = {
    "Conv": _check_conv,
    "ConvTranspose": _check_conv,
    # fuzz seed 99 of the new recipes: a kernel wider than the input was an internal error (onnxruntime "Invalid
    # input shape"); QLinearConv's weight scale: seed 53 case 1040
    "ConvInteger": lambda graph, node, attrs: (_check_window_attrs(graph, node, attrs)
                                               or _check_integer_conv_groups(graph, node, attrs)
                                               or check_integer_zero_points(graph, node, attrs)),
    "QLinearConv": lambda graph, node, attrs: (_check_window_attrs(graph, node, attrs)
                                               or _check_integer_conv_groups(graph, node, attrs)
                                               or check_qlinear_conv_weight(graph, node, attrs)),
    "MaxPool": _check_pool,
    "AveragePool": _check_pool,
    "LpPool": _check_pool,
    "GlobalAveragePool": _check_pool,
    "GlobalMaxPool": _check_pool,
    "GlobalLpPool": _check_pool,
}
