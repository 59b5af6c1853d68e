"""Whether a float model normalizes by the minimum of a logarithm, which bf16 cannot compute (settle-dtype's rule).

A dB spectrogram normalized to its own range (Spotify's basic-pitch: `10 log10(|X|^2 + 1e-10)`, then
`(v - min v) / max(v - min v)`) takes its minimum at the smallest magnitude of the whole spectrogram: the log turns
that magnitude's relative error into the minimum's absolute error, and the normalization carries it into every
value.  A bf16 program's magnitudes carry an absolute error of about 2^-8 of their typical size (the transform's
sums of products rounded to bf16), so its smallest one, 1300 times below the typical on basic-pitch's verify
inputs, came out 11 times too large: the minimum was -44 dB where onnxruntime's is -61.5, and every output moved
(PCC 0.968; float32: 1.00000).  onnxruntime with bf16 values (lowering/bf16_activations.py) does not see it: it
rounds each value once, not the transform's arithmetic (loss 0.001).  So the rule is structural: the minimum of a
logarithm (a ReduceMin of values computed from a Log by scalings, shifts and moves that keep its order, or a
ReduceMax of ones that reverse it: -10 log x) makes `--dtype auto` take float32.  The maximum of a log picks the
largest magnitude, which bf16 holds to its relative error: no rule.
"""
from __future__ import annotations

from typing import Optional

import onnx_graphsurgeon as gs

_HOPS = 8  # a dB conversion is two or three scalings from its Log
# ops that carry a value on, keeping or reversing its order: the value's own position decides (a - b reverses b)
_SCALINGS = frozenset({"Mul", "Div", "Add", "Sub", "Neg"})
_MOVES = frozenset({"Reshape", "Transpose", "Identity", "Cast", "Squeeze", "Unsqueeze", "Flatten", "Max", "Min",
                    "Clip"})  # (Max / Min / Clip with a bound: a dB floor keeps the order of what it does not clip)


def log_minimum(graph: gs.Graph) -> Optional[str]:
    """The reduction that takes the minimum of a logarithm (a ReduceMin of an order-keeping function of it, or a
    ReduceMax of an order-reversing one) and makes auto take float32 (its description), else None."""
    for node in graph.nodes:
        if node.op in ("ReduceMin", "ReduceMax") and node.inputs:
            order = _order_from_log(node.inputs[0])
            if order == (1 if node.op == "ReduceMin" else -1):
                return f"{node.op} {node.name!r} takes the minimum of a logarithm"
    return None


def _order_from_log(tensor: gs.Tensor) -> int:
    """+1 when `tensor` is an increasing function of a Log's output, -1 a decreasing one, 0 when it is neither or
    no Log is within _HOPS scalings and moves of one computed operand each."""
    order = 1
    for _ in range(_HOPS):
        if not tensor.inputs:
            return 0
        producer = tensor.inputs[0]
        if producer.op == "Log":
            return order
        computed = [i for i, t in enumerate(producer.inputs) if not isinstance(t, gs.Constant) and t.name]
        if len(computed) != 1 or producer.op not in _SCALINGS | _MOVES:
            return 0
        index = computed[0]
        if producer.op == "Neg" or (producer.op == "Sub" and index == 1) or (producer.op == "Div" and index == 1):
            order = -order  # (c / x for x > 0 reverses too)
        elif producer.op in ("Mul", "Div"):
            factor = producer.inputs[1 - index].values if len(producer.inputs) > 1 else None
            if factor is None or factor.size != 1 or float(factor.reshape(-1)[0]) == 0:
                return 0
            order = order if float(factor.reshape(-1)[0]) > 0 else -order
        tensor = producer.inputs[index]
    return 0
