"""A MatMul of two activations' quantize-dequantize pairs, in a float32 program -> CodedMatMul: the integer
codes multiplied, both scales applied after.

    MatMul(QDQ(a; s_a), QDQ(b; s_b)) = (codes(a) @ codes(b)) * (s_a * s_b),  codes(x) = clamp(round(x / s), low, high)

The matrix engine reads a float32 operand as TF32, its low 13 mantissa bits dropped (docs/ttnn-facts.md §48):
a dequantized value c * s loses them, an integer code of at most 2^8 in magnitude goes through whole, and the
products' sum is then exact in a float32 dest while it stays below 2^24 (beyond, it rounds as onnxruntime's float32
sum does).  A QDQ transformer's attention reads two such pairs in each of its two matmuls (QK^T and the
probabilities times V): on the full ViT-B/16 QDQ, with TF32 reads modelled, they are one of the three places
where the float32 program's codes left onnxruntime's (the patch conv and the linears' inputs are the others:
docs/design.md §6.40).  Matched when each pair's result reaches the
MatMul alone, directly or through data movement (Reshape, Transpose, ...: the K^T of attention; the moves then
read the pair's input, which commutes with them), and its codes are 8-bit; float32 programs only (a bf16 program's
matmul rounds the sum to 8 bits anyway).
Before: `y = MatMul(QDQ(a), QDQ(b))`; after: `y = onnx2ttnn.CodedMatMul(a, s_a, b, s_b)`.
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.fusion import FUSED_DOMAIN, FusionRule, Match, is_op, producer, replace_outputs, single_consumer
from onnx2ttnn.fusion.quantize import EXACT_CODES, MAX_MOVES, MOVES


def _pair(tensor: gs.Tensor):
    """(the pair whose value reaches `tensor` through data movement only, the moves from it in order), or None.
    Every tensor on the way has one reader (the next move, or the MatMul)."""
    moves, node = [], producer(tensor)
    while node is not None and any(is_op(node, op) for op in MOVES) and len(moves) < MAX_MOVES:
        if single_consumer(node.inputs[0]) is not node:
            return None
        moves.insert(0, node)
        node = producer(node.inputs[0])
    if node is None or node.op != "QuantizeDequantize" or node.domain != FUSED_DOMAIN:
        return None
    return node, moves


def match(matmul: gs.Node):
    found = [_pair(t) for t in matmul.inputs[:2]]
    if any(f is None for f in found):
        return None
    (a, moves_a), (b, moves_b) = found
    if a is b or any(single_consumer(p.outputs[0]) is not (moves[0] if moves else matmul)
                     for p, moves in found):
        return "a pair's value has other readers"
    if any(max(abs(p.attrs["low"]), abs(p.attrs["high"])) > EXACT_CODES for p in (a, b)):
        return "codes wider than 8 bits"
    return Match(matmul, [a, b, matmul], {"found": found, "out": matmul.outputs[0]})


def rewrite(graph: gs.Graph, m: Match) -> None:
    """The pairs' moves read the pairs' inputs instead (a pair commutes with data movement: it is elementwise
    with one scale); the fused node reads what the moves give, or the pair's input when there are none."""
    operands = []
    for pair, moves in m.values["found"]:
        if moves:
            moves[0].inputs[0] = pair.inputs[0]
            operands.append(moves[-1].outputs[0])
        else:
            operands.append(pair.inputs[0])
    (a, _), (b, _) = m.values["found"]
    fused = gs.Node("CodedMatMul", name=m.anchor.name, domain=FUSED_DOMAIN,
                    inputs=[operands[0], a.inputs[1], operands[1], b.inputs[1]],
                    attrs={"low_a": a.attrs["low"], "high_a": a.attrs["high"],
                           "low_b": b.attrs["low"], "high_b": b.attrs["high"]})
    out = m.values["out"]
    for node in m.nodes:
        node.outputs.clear()
    replace_outputs(graph, out, fused)


RULE = FusionRule("coded-matmul", "MatMul", match, rewrite, dtypes=("fp32",))
