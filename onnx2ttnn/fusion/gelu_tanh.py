"""The tanh GELU as exporters write it (GPT-2's gelu_new), 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))
in any operand order -> Gelu(approximate="tanh") (ttnn.gelu(variant=GeluVariant.Tanh), one float32 kernel)."""
from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import FUSED_DOMAIN, FusionRule, Match, is_op, other_input, producer, \
    replace_outputs, scalar, single_consumer
from onnx2ttnn.fusion.gelu import _is_half_of

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _scaled_by(node, value: float):
    """(t, node) when node computes t * value (either order), else (None, None)."""
    if is_op(node, "Mul"):
        for t in node.inputs:
            s = scalar(t)
            if s is not None and math.isclose(s, value, rel_tol=1e-3):
                return other_input(node, t), node
    return None, None


def _inner(tanh: gs.Node):
    """(x, the nodes computing sqrt(2/pi) * (x + 0.044715 * x**3)) for the Tanh's input, or (None, reason)."""
    inner, scale = _scaled_by(producer(tanh.inputs[0]), _SQRT_2_OVER_PI)
    add = producer(inner) if inner is not None else None
    if not is_op(add, "Add"):
        return None, "tanh's input is not sqrt(2/pi) * (x + ...)"
    for x in add.inputs:
        cube, cubic = _scaled_by(producer(other_input(add, x)), 0.044715)
        power = producer(cube) if cube is not None else None
        if is_op(power, "Pow") and power.inputs[0] is x and scalar(power.inputs[1]) == 3.0:
            return x, [scale, add, cubic, power]
    return None, "the sum is not x + 0.044715 * x**3"


def match(tanh: gs.Node):
    x, found = _inner(tanh)
    if x is None:
        return found if is_op(producer(tanh.inputs[0]), "Mul") else None
    add = single_consumer(tanh.outputs[0])
    if not is_op(add, "Add") or scalar(other_input(add, tanh.outputs[0])) != 1.0:
        return "tanh is not followed by + 1"
    first = single_consumer(add.outputs[0])
    if not is_op(first, "Mul"):
        return "1 + tanh(.) is not multiplied"
    other = other_input(first, add.outputs[0])
    nodes = [tanh, add, first]
    if _is_half_of(producer(other), x) and len(other.outputs) == 1:  # (x * 0.5) * (1 + tanh)
        nodes.append(producer(other))
        last = first
    else:
        second = single_consumer(first.outputs[0])
        rest = other_input(second, first.outputs[0]) if is_op(second, "Mul") else None
        if rest is None or not ((other is x and scalar(rest) == 0.5) or (scalar(other) == 0.5 and rest is x)):
            return "the factors are not x and 0.5"
        nodes.append(second)
        last = second
    inner = [n for n in found if all(len(out.outputs) == 1 for out in n.outputs)]
    if len(inner) != len(found):
        return "a term of the tanh's argument is read elsewhere"
    return Match(tanh, nodes + inner, {"x": x, "out": last.outputs[0]})


def rewrite(graph: gs.Graph, m: Match) -> None:
    fused = gs.Node("Gelu", name=m.anchor.name, domain=FUSED_DOMAIN, attrs={"approximate": "tanh"},
                    inputs=[m.values["x"]])
    out = m.values["out"]
    for node in m.nodes:
        node.outputs.clear()
    replace_outputs(graph, out, fused)


RULE = FusionRule("gelu-tanh", "Tanh", match, rewrite)
