"""remove-identities: drop Identity and inference-mode Dropout nodes, wiring consumers to their input.

Reads: folded graph.  Writes: the same graph without no-op nodes.  A node whose output is a graph output
is kept when removing it would rename that output.  Before: `y = Identity(x); z = Relu(y)`; after:
`z = Relu(x)`.
"""
from __future__ import annotations

from onnx2ttnn.ir.graph import Module, onnx_domain, replace_uses
from onnx2ttnn.passes.base import Pass, PassContext

NO_OPS = {"Identity", "Dropout"}


class RemoveIdentities(Pass):
    name = "remove-identities"

    def run(self, module: Module, ctx: PassContext) -> None:
        graph = module.graph
        outputs = {t.name for t in graph.outputs}
        removed = 0
        for node in list(graph.nodes):
            if node.op not in NO_OPS or onnx_domain(node) != "":
                continue
            if node.op == "Dropout" and len(node.outputs) > 1 and node.outputs[1].outputs:
                continue  # the mask is used: keep (the Dropout lowering supplies an all-true mask)
            src, out = node.inputs[0], node.outputs[0]
            if out.name in outputs:
                continue
            replace_uses(out, src)
            node.outputs.clear()
            removed += 1
        graph.cleanup(remove_unused_graph_inputs=False).toposort()
        module.notes[self.name] = {"removed": removed}
