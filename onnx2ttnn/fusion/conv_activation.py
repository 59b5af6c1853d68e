"""Conv followed by Relu or Clip(0, 6) -> ConvAct, a conv2d with the activation fused in its config."""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import FUSED_DOMAIN, FusionRule, Match, constant, is_op, replace_outputs, single_consumer


def _activation(node: gs.Node):
    if is_op(node, "Relu"):
        return "relu"
    if is_op(node, "Clip"):
        lo = constant(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1].name else node.attrs.get("min")
        hi = constant(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2].name else node.attrs.get("max")
        if lo is not None and hi is not None and float(lo) == 0.0 and float(hi) == 6.0:
            return "relu6"
    return None


def match(node: gs.Node):
    act_node = single_consumer(node.outputs[0])
    if act_node is None:
        return None
    act = _activation(act_node)
    if act is None:
        return None
    return Match(node, [node, act_node], {"act_node": act_node, "activation": act})


def rewrite(graph: gs.Graph, m: Match) -> None:
    conv, act_node = m.anchor, m.values["act_node"]
    fused = gs.Node("ConvAct", name=conv.name, domain=FUSED_DOMAIN,
                    attrs={**conv.attrs, "activation": m.values["activation"]}, inputs=list(conv.inputs))
    out = act_node.outputs[0]
    act_node.outputs.clear()
    conv.outputs.clear()
    replace_outputs(graph, out, fused)


RULE = FusionRule("conv-activation", "Conv", match, rewrite)
