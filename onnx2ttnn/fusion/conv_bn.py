"""Conv followed by inference BatchNormalization -> one Conv with the normalisation folded into its weights."""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import FusionRule, Match, constant, is_op, replace_outputs, single_consumer


def match(node: gs.Node):
    bn = single_consumer(node.outputs[0])
    if not is_op(bn, "BatchNormalization"):
        return None
    if bn.attrs.get("training_mode", 0) or len([o for o in bn.outputs if o.outputs or o.name]) > 1 and any(
            o.outputs for o in bn.outputs[1:]):
        return "BatchNormalization in training mode"
    params = [constant(t) for t in bn.inputs[1:5]]
    if any(p is None for p in params) or constant(node.inputs[1]) is None:
        return "BatchNormalization or Conv parameters are not constant"
    if len(node.inputs) > 2 and node.inputs[2].name and constant(node.inputs[2]) is None:
        return "Conv bias is not constant"
    return Match(node, [node, bn], {"bn": bn, "params": params})


def rewrite(graph: gs.Graph, m: Match) -> None:
    conv, bn = m.anchor, m.values["bn"]
    gamma, beta, mean, var = (p.astype(np.float64) for p in m.values["params"])
    scale = gamma / np.sqrt(var + float(bn.attrs.get("epsilon", 1e-5)))
    weight = constant(conv.inputs[1]).astype(np.float64)
    bias = constant(conv.inputs[2]).astype(np.float64) if len(conv.inputs) > 2 and conv.inputs[2].name else 0.0
    scale_w = scale.reshape((-1,) + (1,) * (weight.ndim - 1))  # one per output channel, any spatial rank
    new_w = gs.Constant(conv.inputs[1].name + "_bn", (weight * scale_w).astype(np.float32))
    new_b = gs.Constant(conv.name + "_bn_bias", ((bias - mean) * scale + beta).astype(np.float32))
    fused = gs.Node("Conv", name=conv.name, attrs=dict(conv.attrs), inputs=[conv.inputs[0], new_w, new_b])
    out = bn.outputs[0]
    bn.outputs.clear()
    conv.outputs.clear()
    replace_outputs(graph, out, fused)


RULE = FusionRule("conv-batchnorm", "Conv", match, rewrite)
