"""Dropout at inference: the identity, and its optional mask output all true (no ttnn op for the data).

remove-identities already drops Dropout nodes whose output can be rewired; this rule covers the rest (the
output is a graph output, or the mask is read).  From opset 12 on, training mode with a non-zero ratio is
random and refused; training mode with ratio 0 is the identity too.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register


def _input(node: gs.Node, index: int):
    return node.inputs[index] if len(node.inputs) > index and node.inputs[index].name else None


def _inference(ctx: LoweringContext, node: gs.Node) -> None:
    """The identity, and the mask output (when read) all true."""
    ctx.bind(node.outputs[0], *ctx.value_with_form(node.inputs[0]))
    if len(node.outputs) > 1 and node.outputs[1].name:
        mask = node.outputs[1]
        shape = [int(d) for d in node.inputs[0].shape]
        ctx.bind(mask, ctx.float_param(np.ones(shape, np.float32), mask.name + "_all_true",
                                       key=(mask.name, "mask")))


@register("Dropout", versions=(7, 10), ttnn=(), note="inference: identity, mask all true")
def dropout_7(ctx: LoweringContext, node: gs.Node) -> None:
    """Dropout-7: `ratio` attribute, no training switch (an inference graph computes the identity); 10: the
    mask is bool (it was T).  Dropout-1 and 6 chose test mode by an `is_test` attribute defaulting to training,
    which neither onnxruntime nor the onnx reference runs: not claimed."""
    _inference(ctx, node)


@register("Dropout", versions=(12, 13, 22), ttnn=(), note="inference: identity, mask all true; training mode refused")
def dropout(ctx: LoweringContext, node: gs.Node) -> None:
    """Dropout-12: `ratio` and `training_mode` became optional inputs (the attribute is gone) and `seed`
    appeared; 13: bfloat16; 22: float8 types.  Training mode with a non-zero ratio is random: refused."""
    flag = _input(node, 2)
    training = flag is not None and bool(ctx.require_constant(flag, "Dropout training_mode").reshape(-1)[0])
    ratio_input = _input(node, 1)
    if training:
        ratio = 0.5 if ratio_input is None else float(ctx.require_constant(ratio_input, "Dropout ratio").reshape(-1)[0])
        if ratio != 0.0:
            raise ConversionError(f"node {ctx.source!r}: Dropout in training mode (training_mode=1 with a non-zero "
                                  "ratio) is random and not supported")
    _inference(ctx, node)
