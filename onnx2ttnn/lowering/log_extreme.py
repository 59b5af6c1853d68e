"""Whether a float model normalizes by the minimum of a logarithm, which bf16 cannot compute (settle-dtype's rule).

A dB spectrogram normalized to its own range (Spotify's basic-pitch: `10 log10(|X|^2 + 1e-10)`, then
`(v - min v) / max(v - min v)`) takes its minimum at the smallest magnitude of the whole spectrogram: the log turns
that magnitude's relative error into the minimum's absolute error, and the normalization carries it into every
value.  A bf16 program's magnitudes carry an absolute error of about 2^-8 of their typical size (the transform's
sums of products rounded to bf16), so its smallest one, 1300 times below the typical on basic-pitch's verify
inputs, came out 11 times too large: the minimum was -44 dB where onnxruntime's is -61.5, and every output moved
(PCC 0.968; float32: 1.00000).  onnxruntime with bf16 values (lowering/bf16_activations.py) does not see it: it
rounds each value once, not the transform's arithmetic (loss 0.001).  So the rule is structural: a ReduceMin of
values computed from a Log by scalings and shifts (which keep the minimum where it was) makes `--dtype auto`
take float32.  A ReduceMax of a log picks the largest magnitude, which bf16 holds to its relative error: no rule.
"""
from __future__ import annotations

from typing import Optional

import onnx_graphsurgeon as gs

# ops between a Log and the ReduceMin that keep which element is smallest (one varying operand each)
_KEEP_ORDER = frozenset({"Mul", "Div", "Add", "Sub", "Reshape", "Transpose", "Identity", "Cast", "Squeeze",
                         "Unsqueeze", "Flatten"})
_HOPS = 8  # a dB conversion is two or three scalings from its Log


def log_minimum(graph: gs.Graph) -> Optional[str]:
    """The ReduceMin of a logarithm that makes auto take float32 (its description), else None."""
    for node in graph.nodes:
        if node.op == "ReduceMin" and node.inputs and _from_log(node.inputs[0]):
            return f"ReduceMin {node.name!r} takes the minimum of a logarithm"
    return None


def _from_log(tensor: gs.Tensor) -> bool:
    """Whether `tensor` is a Log's output, through at most _HOPS order-keeping ops of one computed operand."""
    for _ in range(_HOPS):
        if not tensor.inputs:
            return False
        producer = tensor.inputs[0]
        if producer.op == "Log":
            return True
        computed = [t for t in producer.inputs if not isinstance(t, gs.Constant)]
        if producer.op not in _KEEP_ORDER or not computed:
            return False
        tensor = computed[0]
    return False
