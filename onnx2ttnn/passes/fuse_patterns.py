"""fuse-patterns: apply the fusion rule set (fusion/): conv+bias, conv+batchnorm, conv+activation, erf-gelu, rms-norm, attention, matmul+add.

Reads: a folded ONNX graph.  Writes: fused nodes (domain `onnx2ttnn`: ConvAct, Gelu, RMSNorm, Attention, Linear,
QuantizeDequantize for an activation's QuantizeLinear -> DequantizeLinear pair; a folded Conv) in place of the
patterns; the reasons rules rejected near-matches go to the pass notes.
Before: `y = Add(MatMul(x, W), b)`; after: `y = onnx2ttnn.Linear(x, W, b)`.
"""
from __future__ import annotations

from collections import Counter

from onnx2ttnn.fusion import Match, rule_set
from onnx2ttnn.ir.graph import Module, onnx_domain
from onnx2ttnn.passes.base import Pass, PassContext


class FusePatterns(Pass):
    name = "fuse-patterns"

    def run(self, module: Module, ctx: PassContext) -> None:
        graph = module.graph
        applied, rejected = Counter(), Counter()
        for rule in rule_set():
            if module.compute_dtype not in rule.dtypes:
                continue
            for node in list(graph.nodes):
                if node.op != rule.anchor_op or onnx_domain(node) != "" or not node.outputs:
                    continue
                result = rule.match(node)
                if isinstance(result, Match) and _hides_a_graph_output(graph, result):
                    result = "an intermediate of the pattern is a graph output"
                if isinstance(result, Match):
                    rule.rewrite(graph, result)
                    note = result.values.get("note")  # how this match was fused, when a rule says
                    applied[f"{rule.name} ({note})" if note else rule.name] += 1
                elif isinstance(result, str):
                    rejected[f"{rule.name}: {result}"] += 1
            graph.cleanup(remove_unused_graph_inputs=False).toposort()
        module.notes[self.name] = {"applied": dict(applied), "rejected": dict(rejected)}


def _hides_a_graph_output(graph, match: Match) -> bool:
    """A match that names its result (`out`) would consume a graph output among its other tensors; one that
    does not, among the tensors its nodes pass each other (matmul-add: a MatMul result that is also a graph
    output was fused away, fuzz case of the Loop recipe)."""
    out = match.values.get("out")
    if out is None:
        produced = {id(t) for node in match.nodes for t in node.outputs}
        inner = {id(t) for node in match.nodes for t in node.inputs if id(t) in produced}
        return any(id(t) in inner for t in graph.outputs)
    outputs = {id(t) for t in graph.outputs} - {id(out)}
    return any(id(t) in outputs for node in match.nodes for t in node.outputs)
