"""Host fallbacks for the convolutions ttnn has no call for: Conv and ConvTranspose over 3 spatial
dimensions (ttnn's conv2d / conv_transpose2d rules take 1-D and 2-D and decline the rest); helpers in
host/conv.py.

The rules turn auto_pad / output_shape into explicit (begin, end) pads from the node's static shapes, so
the helpers only pad, convolve and crop.
"""
from __future__ import annotations

from onnx2ttnn.errors import NotLowerable
from onnx2ttnn.fallback.registry import fallback


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _geometry(node, kernel):
    """(strides, dilations) of a convolution node with `kernel` spatial sizes."""
    rank = len(kernel)
    strides = [int(s) for s in node.attrs.get("strides", [1] * rank)]
    dilations = [int(d) for d in node.attrs.get("dilations", [1] * rank)]
    return strides, dilations


def _static(node, tensor, what):
    if tensor.shape is None or any(not isinstance(d, int) for d in tensor.shape):
        raise NotLowerable(f"node {node.name!r}: {what} {tensor.name!r} has no static shape",
                           f"{what} without a static shape")
    return [int(d) for d in tensor.shape]


@fallback("Conv", versions=(1, 11, 22), helper="host_conv",
          note="any number of spatial dims (ttnn's rule takes 1-D and 2-D)")
def conv(node):
    """Conv-1; 11: SAME auto_pad spelled out as output = ceil(input / stride), as computed here; 22: bfloat16."""
    x_shape = _static(node, node.inputs[0], "input")
    kernel = _static(node, node.inputs[1], "weight")[2:]
    strides, dilations = _geometry(node, kernel)
    auto_pad = _text(node.attrs.get("auto_pad", "NOTSET"))
    rank = len(kernel)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begins, ends = [], []
        for size, k, s, d in zip(x_shape[2:], kernel, strides, dilations):
            total = max(0, (-(-size // s) - 1) * s + (k - 1) * d + 1 - size)
            small, big = total // 2, total - total // 2
            begins.append(big if auto_pad == "SAME_LOWER" else small)
            ends.append(small if auto_pad == "SAME_LOWER" else big)
        pads = begins + ends
    elif auto_pad == "VALID":
        pads = [0] * (2 * rank)
    elif auto_pad == "NOTSET":
        pads = [int(p) for p in node.attrs.get("pads", [0] * (2 * rank))]
    else:
        raise NotLowerable(f"node {node.name!r}: auto_pad {auto_pad!r}", f"auto_pad {auto_pad!r}")
    return {"strides": strides, "dilations": dilations, "pads": pads, "group": int(node.attrs.get("group", 1))}


@fallback("ConvTranspose", versions=(1, 11, 22), helper="host_conv_transpose",
          note="any number of spatial dims (ttnn's rule takes 1-D and 2-D)")
def conv_transpose(node):
    """ConvTranspose-1; 11: the SAME_UPPER pad split fixed in the text (as computed here); 22: bfloat16."""
    x_shape = _static(node, node.inputs[0], "input")
    kernel = _static(node, node.inputs[1], "weight")[2:]
    out_shape = _static(node, node.outputs[0], "output")
    strides, dilations = _geometry(node, kernel)
    rank = len(kernel)
    out_pad = [int(p) for p in node.attrs.get("output_padding", [0] * rank)]
    auto_pad = _text(node.attrs.get("auto_pad", "NOTSET"))
    if "output_shape" not in node.attrs and auto_pad in ("NOTSET", "VALID"):
        begins = [int(p) for p in node.attrs.get("pads", [0] * (2 * rank))][:rank] if auto_pad == "NOTSET" \
            else [0] * rank
    elif auto_pad in ("NOTSET", "SAME_UPPER", "SAME_LOWER"):
        begins = []
        for size, k, s, d, p, o in zip(x_shape[2:], kernel, strides, dilations, out_pad, out_shape[2:]):
            total = max(0, s * (size - 1) + p + (k - 1) * d + 1 - o)  # < 0: the extra comes from zeros at the end
            begins.append(total // 2 if auto_pad == "SAME_UPPER" else total - total // 2)
    else:
        raise NotLowerable(f"node {node.name!r}: auto_pad {auto_pad!r}", f"auto_pad {auto_pad!r}")
    return {"strides": strides, "dilations": dilations, "begins": begins, "out_spatial": out_shape[2:],
            "group": int(node.attrs.get("group", 1))}
