"""fuse-epilogues: fold activations and residual adds into the ttnn call before or after them (fusion/epilogues.py).

Reads: ttnn nodes from lowering (reshapes simplified).  Writes: `activation=` on a linear / matmul whose result
only an activation reads (relu, gelu, silu, sigmoid), `activations=[UnaryWithParam(RELU)]` on an add / subtract /
multiply whose result only a relu reads, and `residual_input_tensor=` on a layer_norm / rms_norm whose input is
a same-shape add read by nothing else; the nodes folded in are gone.  The reasons near-matches were rejected
(e.g. a pre-norm transformer's residual sum, which the next residual add reads too) go to the pass notes.
Before: `s = ttnn.add(x, y); z = ttnn.layer_norm(s, weight=g, bias=b)`;
after: `z = ttnn.layer_norm(x, weight=g, bias=b, residual_input_tensor=y)`.
"""
from __future__ import annotations

from collections import Counter

from onnx2ttnn.fusion import Match
from onnx2ttnn.fusion.epilogues import RULES
from onnx2ttnn.ir.graph import Module
from onnx2ttnn.passes.base import Pass, PassContext


class FuseEpilogues(Pass):
    name = "fuse-epilogues"

    def run(self, module: Module, ctx: PassContext) -> None:
        graph = module.graph
        outputs = frozenset(map(id, graph.outputs))
        applied, rejected = Counter(), Counter()
        gone: set[int] = set()
        for rule in RULES:
            for node in [n for n in graph.nodes if n.op in rule.anchor_ops]:
                if id(node) in gone:  # folded away by an earlier match
                    continue
                result = rule.match(node, outputs)
                if isinstance(result, Match):
                    gone.add(id(rule.rewrite(result)))
                    applied[rule.name] += 1
                elif isinstance(result, str):
                    rejected[f"{rule.name}: {result}"] += 1
        graph.nodes = [n for n in graph.nodes if id(n) not in gone]
        module.notes[self.name] = {"applied": dict(applied), "rejected": dict(rejected)}
