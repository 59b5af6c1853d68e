"""MatMul by a constant 2-D weight followed by Add of a constant bias over the last axis -> Linear."""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import FUSED_DOMAIN, FusionRule, Match, constant, is_op, replace_outputs, single_consumer


def match(matmul: gs.Node):
    weight = constant(matmul.inputs[1])
    if weight is None or weight.ndim != 2:
        return None
    add = single_consumer(matmul.outputs[0])
    if not is_op(add, "Add"):
        return None
    bias_t = add.inputs[1] if add.inputs[0] is matmul.outputs[0] else add.inputs[0]
    bias = constant(bias_t)
    if bias is None:
        return "the added value is not constant"
    if bias.size != weight.shape[1] or any(d != 1 for d in bias.shape[:-1]):
        return f"bias of shape {bias.shape} does not broadcast over the last axis only"
    return Match(matmul, [matmul, add], {"add": add, "bias": bias_t})


def rewrite(graph: gs.Graph, m: Match) -> None:
    matmul, add = m.anchor, m.values["add"]
    fused = gs.Node("Linear", name=matmul.name, domain=FUSED_DOMAIN,
                    inputs=[matmul.inputs[0], matmul.inputs[1], m.values["bias"]])
    out = add.outputs[0]
    add.outputs.clear()
    matmul.outputs.clear()
    replace_outputs(graph, out, fused)


RULE = FusionRule("matmul-add", "MatMul", match, rewrite)
