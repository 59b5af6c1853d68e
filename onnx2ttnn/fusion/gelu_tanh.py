"""The tanh GELU as exporters write it (GPT-2's gelu_new), 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))
in any operand order -> Gelu(approximate="tanh") (ttnn.gelu(variant=GeluVariant.Tanh), one float32 kernel)."""
from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import FusionRule, Match, is_op, other_input, producer, scalar
from onnx2ttnn.fusion.gelu import replace_with_gelu, times_half_x

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
    outer = times_half_x(tanh, x, "Tanh")
    if isinstance(outer, str):
        return outer
    nodes, last = outer
    if any(len(out.outputs) != 1 for n in found for out in n.outputs):
        return "a term of the tanh's argument is read elsewhere"
    return Match(tanh, nodes + found, {"x": x, "out": last.outputs[0]})


def rewrite(graph: gs.Graph, m: Match) -> None:
    replace_with_gelu(graph, m, approximate="tanh")


RULE = FusionRule("gelu-tanh", "Tanh", match, rewrite)
