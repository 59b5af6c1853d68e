"""The exact GELU as exporters write it, x * 0.5 * (1 + erf(x / sqrt(2))) in any operand order -> Gelu."""
from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import FUSED_DOMAIN, FusionRule, Match, is_op, other_input, producer, \
    replace_outputs, scalar, single_consumer


def _is_half_of(node, x) -> bool:
    """node computes x * 0.5 (or 0.5 * x)."""
    return is_op(node, "Mul") and x in node.inputs and scalar(other_input(node, x)) == 0.5


def _erf_input(erf: gs.Node):
    """x when the Erf reads x / sqrt(2) or x * (1 / sqrt(2)), with the scaling node."""
    scaled = producer(erf.inputs[0])
    if is_op(scaled, "Div") and scalar(scaled.inputs[1]) is not None and \
            math.isclose(scalar(scaled.inputs[1]), math.sqrt(2), rel_tol=1e-3):
        return scaled.inputs[0], scaled
    if is_op(scaled, "Mul"):
        for t in scaled.inputs:
            s = scalar(t)
            if s is not None and math.isclose(s, 1 / math.sqrt(2), rel_tol=1e-3):
                return other_input(scaled, t), scaled
    return None, None


def times_half_x(inner: gs.Node, x: gs.Tensor, what: str):
    """The nodes computing 0.5 * x * (1 + t) from `inner`'s output t (in any operand order) and the last one, or
    the reason the pattern is not there."""
    add = single_consumer(inner.outputs[0])
    if not is_op(add, "Add") or scalar(other_input(add, inner.outputs[0])) != 1.0:
        return f"{what} is not followed by + 1"
    first = single_consumer(add.outputs[0])
    if not is_op(first, "Mul"):
        return f"1 + {what.lower()}(.) is not multiplied"
    other = other_input(first, add.outputs[0])
    nodes = [inner, add, first]
    if _is_half_of(producer(other), x) and len(other.outputs) == 1:  # (x * 0.5) * (1 + t)
        return nodes + [producer(other)], first
    second = single_consumer(first.outputs[0])
    if not is_op(second, "Mul"):
        return f"only one factor multiplies 1 + {what.lower()}(.)"
    rest = other_input(second, first.outputs[0])
    if not ((other is x and scalar(rest) == 0.5) or (scalar(other) == 0.5 and rest is x)):
        return "the factors are not x and 0.5"
    return nodes + [second], second


def match(erf: gs.Node):
    x, scaled = _erf_input(erf)
    if x is None:
        return None
    found = times_half_x(erf, x, "Erf")
    if isinstance(found, str):
        return found
    nodes, last = found
    if len(scaled.outputs[0].outputs) == 1:
        nodes.append(scaled)
    return Match(erf, nodes, {"x": x, "out": last.outputs[0]})


def replace_with_gelu(graph: gs.Graph, m: Match, **attrs) -> None:
    """A fused Gelu of m.values["x"] (with `attrs`) produces m.values["out"]; the matched nodes go."""
    fused = gs.Node("Gelu", name=m.anchor.name, domain=FUSED_DOMAIN, attrs=attrs, inputs=[m.values["x"]])
    out = m.values["out"]
    for node in m.nodes:
        node.outputs.clear()
    replace_outputs(graph, out, fused)


def rewrite(graph: gs.Graph, m: Match) -> None:
    replace_with_gelu(graph, m)


RULE = FusionRule("gelu-erf", "Erf", match, rewrite)
