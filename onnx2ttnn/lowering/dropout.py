"""Dropout at inference: the identity, and its optional mask output all true (no ttnn op for the data).

remove-identities already drops Dropout nodes whose output can be rewired; this rule covers the rest (the
output is a graph output, or the mask is read).  Training mode with a non-zero ratio is random and refused;
training mode with ratio 0 is the identity too.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register


def _input(node: gs.Node, index: int):
    return node.inputs[index] if len(node.inputs) > index and node.inputs[index].name else None


def _training(ctx: LoweringContext, node: gs.Node) -> bool:
    """Whether the node drops values at random (training mode with a non-zero ratio)."""
    if "is_test" in node.attrs:  # opsets 1 and 6
        training = not node.attrs["is_test"]
        ratio = float(node.attrs.get("ratio", 0.5))
    else:
        flag = _input(node, 2)
        training = flag is not None and bool(ctx.require_constant(flag, "Dropout training_mode").reshape(-1)[0])
        ratio_input = _input(node, 1)
        if not training:
            return False
        ratio = 0.5 if ratio_input is None else float(ctx.require_constant(ratio_input, "Dropout ratio").reshape(-1)[0])
    return training and ratio != 0.0


@register("Dropout", 1, ttnn=(), note="inference: identity, mask all true; training mode refused")
def dropout(ctx: LoweringContext, node: gs.Node) -> None:
    if _training(ctx, node):
        raise ConversionError(f"node {ctx.source!r}: Dropout in training mode (training_mode=1 / is_test=0 with "
                              "a non-zero ratio) is random and not supported")
    ctx.bind(node.outputs[0], *ctx.value_with_form(node.inputs[0]))
    if len(node.outputs) > 1 and node.outputs[1].name:
        mask = node.outputs[1]
        shape = [int(d) for d in node.inputs[0].shape]
        ctx.bind(mask, ctx.float_param(np.ones(shape, np.float32), mask.name + "_all_true",
                                       key=(mask.name, "mask")))
