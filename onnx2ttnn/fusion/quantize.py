"""An activation QuantizeLinear -> DequantizeLinear pair (QDQ models) -> one QuantizeDequantize node.

    DequantizeLinear(QuantizeLinear(x, s, z), s, z) = clamp(round(x / s), qmin - z, qmax - z) * s

(exact: every step before the last multiply is on integers): the zero point's add and subtract cancel, and
lowering/quantize.py makes it two ttnn calls (divide; multiply with round and clamp as its input activations) where
the op by op chain is six.  Matched when the QuantizeLinear's only reader is the DequantizeLinear, both have
the same constant one-element scale and zero point, and no block size, output_dtype other than the zero
point's type or division precision other than float32 is asked.  What is left unmatched is lowered op by op (lowering/quantize.py), to the same values.

A pair whose input is already on its grid is dropped: x comes, through data movement only (Reshape,
Transpose, Squeeze, Unsqueeze, Flatten), from a DequantizeLinear (or a pair fused here) of the same scale,
zero point and type, so x = (k - z) * s for integers k in range and the pair gives x back exactly (in float32,
x / s is within a few 2^-24 relative steps of the integer k - z: round, add and clip change nothing).
quantize_static writes such pairs after every Reshape and Transpose of a quantized tensor: a third of a QDQ
BERT's, half a ViT's.
Before: `r = Reshape(DQ(q, s, z)); y = DQ(Q(r, s, z), s, z)`; after: `y` is `r`.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import (FUSED_DOMAIN, FusionRule, Match, constant, is_op, producer, replace_outputs,
                              single_consumer)

MOVES = ("Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten")  # ops that only move values
MAX_MOVES = 8  # how far back through moves a pair looks (dropped pairs join chains: a bound keeps the pass linear)
# the largest integer magnitude every float compute dtype holds exactly (bfloat16's 8 significant bits; TF32 holds
# 11): the codes of an 8-bit quantizer less its zero point lie within it
EXACT_CODES = 256


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
    if q.attrs.get("precision", 0) not in (0, onnx.TensorProto.FLOAT):
        return "a division in another precision than float32"
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
    values = {"x": q.inputs[0], "scale": q.inputs[1], "zero": zeros[0], "out": dq.outputs[0]}
    if _on_grid(q.inputs[0], float(scales[0].reshape(-1)[0]), _bounds(zeros[0])):
        values["note"] = "already on its grid"
    return Match(q, [q, dq], values)


def _bounds(zero: np.ndarray) -> tuple[float, float]:
    """The codes' range less the zero point: the clamp of the fused form."""
    info, z = np.iinfo(zero.dtype), int(zero.reshape(-1)[0])
    return float(int(info.min) - z), float(int(info.max) - z)


def _on_grid(x: gs.Tensor, scale: float, bounds: tuple[float, float]) -> bool:
    """x is, through data movement only, the output of a dequantization to the same grid (scale, zero point
    and type), fused here already or not."""
    node, moves = producer(x), 0
    while node is not None and any(is_op(node, op) for op in MOVES) and moves < MAX_MOVES:
        node, moves = producer(node.inputs[0]), moves + 1
    if node is None:
        return False
    if node.op == "QuantizeDequantize" and node.domain == FUSED_DOMAIN:
        grid = constant(node.inputs[1])
        return grid is not None and float(grid.reshape(-1)[0]) == scale and \
            (node.attrs["low"], node.attrs["high"]) == bounds
    if not is_op(node, "DequantizeLinear") or node.attrs.get("block_size", 0) or len(node.inputs) < 3:
        return False
    grid, zero = (constant(t) for t in node.inputs[1:3])
    return (grid is not None and zero is not None and grid.size == 1 and zero.size == 1
            and float(grid.reshape(-1)[0]) == scale and zero.dtype.name in ("int8", "uint8", "int16", "uint16")
            and _bounds(zero) == bounds)


def rewrite(graph: gs.Graph, m: Match) -> None:
    out = m.values["out"]
    if m.values.get("note") and all(t is not out for t in graph.outputs):  # the pair gives x back: readers take x
        for node in list(out.outputs):
            for position, t in enumerate(node.inputs):
                if t is out:
                    node.inputs[position] = m.values["x"]
        for node in m.nodes:
            node.outputs.clear()
        return
    low, high = _bounds(m.values["zero"])
    fused = gs.Node("QuantizeDequantize", name=m.anchor.name, domain=FUSED_DOMAIN,
                    inputs=[m.values["x"], m.values["scale"]], attrs={"low": low, "high": high})
    for node in m.nodes:
        node.outputs.clear()
    replace_outputs(graph, out, fused)


RULE = FusionRule("quantize-dequantize", "QuantizeLinear", match, rewrite)
