"""Conv or ConvTranspose followed by Add of a constant per-channel bias -> one conv with that bias.

Some exporters (paddle2onnx's ConvTranspose, PP-OCR's DB head) write a conv's bias as a separate Add of a
constant of shape [1, C, 1, 1] (or [C, 1, 1], or one value).  As its own node the Add runs as a second device
op after the conv, and when a Sigmoid or Exp follows at the output tail it hides the conv from
lowering/accuracy.py, which then cannot have the conv write the float32 logit the far tail needs
(docs/design.md §6.28).  The bias is added to the conv's own (constant) bias, or becomes it.
Before: `c = ConvTranspose(x, W); y = Add(c, b[1, C, 1, 1])`; after: `y = ConvTranspose(x, W, b.reshape(C))`.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import FusionRule, Match, constant, is_op, other_input, replace_outputs, single_consumer


def _channels(conv: gs.Node) -> Optional[int]:
    """The conv's output channels (from its static output shape), or None."""
    shape = conv.outputs[0].shape
    return shape[1] if shape is not None and len(shape) >= 3 and isinstance(shape[1], int) else None


def _per_channel(value: np.ndarray, channels: int, rank: int) -> Optional[np.ndarray]:
    """`value` as one bias per channel when it broadcasts along the channel dim of a rank-`rank` output only."""
    if value.size == 1:
        return np.full(channels, value.reshape(-1)[0], np.float64)
    dims = list(value.shape)
    if len(dims) > rank or value.size != channels:
        return None
    dims = [1] * (rank - len(dims)) + dims
    return value.reshape(-1).astype(np.float64) if dims[1] == channels and dims[0] == 1 else None


def match(node: gs.Node):
    add = single_consumer(node.outputs[0])
    if not is_op(add, "Add") or len(add.inputs) != 2:
        return None
    channels = _channels(node)
    value = constant(other_input(add, node.outputs[0]))
    if channels is None or value is None or not np.issubdtype(value.dtype, np.floating):
        return "the Add's other input is not a float constant" if channels is not None else None
    bias = _per_channel(value, channels, len(node.outputs[0].shape))
    if bias is None:
        return f"the Add's constant of shape {list(value.shape)} is not one value per output channel"
    if len(node.inputs) > 2 and node.inputs[2].name and constant(node.inputs[2]) is None:
        return f"{node.op} bias is not constant"
    return Match(node, [node, add], {"add": add, "bias": bias, "out": add.outputs[0]})


def rewrite(graph: gs.Graph, m: Match) -> None:
    conv, add = m.anchor, m.values["add"]
    own = constant(conv.inputs[2]).astype(np.float64) if len(conv.inputs) > 2 and conv.inputs[2].name else 0.0
    bias = gs.Constant(conv.name + "_add_bias", (own + m.values["bias"]).astype(np.float32))
    fused = gs.Node(conv.op, name=conv.name, attrs=dict(conv.attrs), inputs=[conv.inputs[0], conv.inputs[1], bias])
    out = add.outputs[0]
    add.outputs.clear()
    conv.outputs.clear()
    replace_outputs(graph, out, fused)


RULES = [FusionRule("conv-bias", "Conv", match, rewrite),
         FusionRule("conv-transpose-bias", "ConvTranspose", match, rewrite)]
