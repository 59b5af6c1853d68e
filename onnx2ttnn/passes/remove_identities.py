"""remove-identities: drop Identity and inference-mode Dropout nodes, wiring consumers to their input.

Reads: folded graph.  Writes: the same graph without no-op nodes.  A node whose output is a graph output
is kept when removing it would rename that output.  A Dropout is dropped only where it is the identity for
sure: from schema 7 on (Dropout-1 and 6 default to training through `is_test`), with no `training_mode`
input or a constant false one (or a constant zero ratio); any other Dropout is left to its lowering rule,
which refuses training mode.  Before: `y = Identity(x); z = Relu(y)`; after:
`z = Relu(x)`.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

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
            if node.op == "Dropout" and not _inference_dropout(node, module.opset):
                continue  # training mode, an unknown mode or a read mask: the Dropout rule decides
            src, out = node.inputs[0], node.outputs[0]
            if out.name in outputs:
                continue
            replace_uses(out, src)
            node.outputs.clear()
            removed += 1
        graph.cleanup(remove_unused_graph_inputs=False).toposort()
        module.notes[self.name] = {"removed": removed}


def _inference_dropout(node: gs.Node, opset: int) -> bool:
    """The Dropout computes the identity and its mask (if any) is not read."""
    if len(node.outputs) > 1 and node.outputs[1].outputs:
        return False  # the mask is used (the Dropout lowering supplies an all-true mask)
    try:
        version = onnx.defs.get_schema("Dropout", max_inclusive_version=opset, domain="").since_version
    except onnx.defs.SchemaError:
        return False
    if version < 7:
        return False
    flag = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2].name else None
    if flag is None:
        return True
    if not isinstance(flag, gs.Constant):
        return False
    if not bool(np.asarray(flag.values).reshape(-1)[0]):
        return True
    ratio = node.inputs[1] if len(node.inputs) > 1 and node.inputs[1].name else None
    return isinstance(ratio, gs.Constant) and float(np.asarray(ratio.values).reshape(-1)[0]) == 0.0
