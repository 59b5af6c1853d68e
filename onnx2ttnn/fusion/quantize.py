"""An activation QuantizeLinear -> DequantizeLinear pair (QDQ models) -> one QuantizeDequantize node.

    DequantizeLinear(QuantizeLinear(x, s, z), s, z) = clamp(round(x / s), qmin - z, qmax - z) * s

(exact: every step before the last multiply is on integers), four ttnn ops instead of six: the zero point's
add and subtract cancel.  Matched when the QuantizeLinear's only reader is the DequantizeLinear, both have
the same constant one-element scale and zero point, and no block size or output_dtype other than the zero
point's type is asked.  What is left unmatched is lowered op by op (lowering/quantize.py), to the same values.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import FUSED_DOMAIN, FusionRule, Match, constant, is_op, replace_outputs, single_consumer


def _param(node: gs.Node, index: int):
    if len(node.inputs) <= index or not node.inputs[index].name:
        return None
    return constant(node.inputs[index])


def match(q: gs.Node):
    dq = single_consumer(q.outputs[0])
    if not is_op(dq, "DequantizeLinear"):
        return "the quantized value is not only dequantized"
    if q.attrs.get("block_size", 0) or dq.attrs.get("block_size", 0) or q.attrs.get("output_dtype", 0):
        return "blocked, or an output_dtype"
    scales = [_param(n, 1) for n in (q, dq)]
    if any(s is None or s.size != 1 for s in scales) or scales[0].reshape(-1)[0] != scales[1].reshape(-1)[0]:
        return "not one shared constant per-tensor scale"
    zeros = [_param(n, 2) for n in (q, dq)]
    if any((z is None) != (len(n.inputs) <= 2 or not n.inputs[2].name) for z, n in zip(zeros, (q, dq))):
        return "a runtime zero point"
    if zeros[0] is None or zeros[1] is None:
        if zeros[0] is not None or zeros[1] is not None:
            return "a zero point on one side only"
        zeros = [np.zeros(1, np.uint8)] * 2
    if zeros[0].size != 1 or zeros[0].dtype != zeros[1].dtype or zeros[0].reshape(-1)[0] != zeros[1].reshape(-1)[0]:
        return "not one shared constant per-tensor zero point"
    if zeros[0].dtype.name not in ("int8", "uint8", "int16", "uint16"):
        return f"a {zeros[0].dtype.name} zero point"
    return Match(q, [q, dq], {"x": q.inputs[0], "scale": q.inputs[1], "zero": zeros[0], "out": dq.outputs[0]})


def rewrite(graph: gs.Graph, m: Match) -> None:
    zero = m.values["zero"]
    info = np.iinfo(zero.dtype)
    z = int(zero.reshape(-1)[0])
    fused = gs.Node("QuantizeDequantize", name=m.anchor.name, domain=FUSED_DOMAIN,
                    inputs=[m.values["x"], m.values["scale"]],
                    attrs={"low": float(int(info.min) - z), "high": float(int(info.max) - z)})
    for node in m.nodes:
        node.outputs.clear()
    replace_outputs(graph, m.values["out"], fused)


RULE = FusionRule("quantize-dequantize", "QuantizeLinear", match, rewrite)
