"""RMS normalization as exporters write it (LLaMA, T5) -> one RMSNorm node (ttnn.rms_norm).

    x * reciprocal(sqrt(mean(x^2, last axis) + eps)) [* weight]     (Reciprocal∘Sqrt, or Div(1, Sqrt))

Anchored at Pow(x, 2); the mean must be over the last axis with keepdims, eps a scalar constant, and the
optional weight a constant vector over the last axis. Every intermediate must have a single reader.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import FUSED_DOMAIN, FusionRule, Match, constant, is_op, other_input, producer, \
    replace_outputs, scalar, single_consumer


def _mean_over_last_axis(node: gs.Node, rank: int) -> bool:
    axes = node.attrs.get("axes")
    if axes is None and len(node.inputs) > 1:
        axes = constant(node.inputs[1])
    if axes is None or not node.attrs.get("keepdims", 1):
        return False
    axes = [int(a) % rank for a in np.asarray(axes).reshape(-1)]
    return axes == [rank - 1]


def _inverse_sqrt(node: gs.Node):
    """(the node producing 1/sqrt(v), [its nodes]) when `node` reads v: Sqrt -> Reciprocal or Div(1, .)."""
    if not is_op(node, "Sqrt"):
        return None, []
    inv = single_consumer(node.outputs[0])
    if is_op(inv, "Reciprocal") or (is_op(inv, "Div") and inv.inputs[1] is node.outputs[0]
                                    and scalar(inv.inputs[0]) == 1.0):
        return inv, [node, inv]
    return None, []


def match(pow_node: gs.Node):
    x = pow_node.inputs[0]
    if scalar(pow_node.inputs[1]) != 2.0 or x.shape is None:
        return None
    mean = single_consumer(pow_node.outputs[0])
    if not is_op(mean, "ReduceMean") or not _mean_over_last_axis(mean, len(x.shape)):
        return "x^2 is not averaged over the last axis with keepdims"
    add = single_consumer(mean.outputs[0])
    eps = scalar(other_input(add, mean.outputs[0])) if is_op(add, "Add") else None
    if eps is None:
        return "the mean square gets no scalar epsilon"
    inv, inv_nodes = _inverse_sqrt(single_consumer(add.outputs[0]))
    if inv is None:
        return "no 1/sqrt of the mean square"
    scale = single_consumer(inv.outputs[0])
    if not is_op(scale, "Mul") or other_input(scale, inv.outputs[0]) is not x:
        return "1/sqrt(.) does not multiply x"
    if any(len(n.outputs[0].outputs) != 1 for n in [pow_node, mean, add] + inv_nodes):
        return "an intermediate has other readers"
    nodes, last, weight = [pow_node, mean, add, *inv_nodes, scale], scale, None
    after = single_consumer(scale.outputs[0])
    if is_op(after, "Mul"):
        w = constant(other_input(after, scale.outputs[0]))
        if w is not None and w.ndim >= 1 and w.shape[-1] == x.shape[-1] and w.size == x.shape[-1]:
            weight, last = other_input(after, scale.outputs[0]), after
            nodes.append(after)
    return Match(pow_node, nodes, {"x": x, "eps": eps, "weight": weight, "out": last.outputs[0]})


def rewrite(graph: gs.Graph, m: Match) -> None:
    x = m.values["x"]
    weight = m.values["weight"]
    if weight is None:
        weight = gs.Constant(f"{m.anchor.name}_unit_weight", np.ones(x.shape[-1], np.float32))
    fused = gs.Node("RMSNorm", name=m.anchor.name, domain=FUSED_DOMAIN, inputs=[x, weight],
                    attrs={"epsilon": m.values["eps"]})
    out = m.values["out"]
    for node in m.nodes:
        node.outputs.clear()
    replace_outputs(graph, out, fused)


RULE = FusionRule("rms-norm", "Pow", match, rewrite)
