"""memory-config: (the last pass) store each op's `memory_config`, derived from its output layout, and verify.

Reads: the TTNNLayout of every node output (the single source of truth).  Writes: the node attribute
`memory_config` of every ttnn node that produces a device tensor and takes the argument.  Then a verifier
checks that every stored attribute equals what the layout derives, and that none is missing.
Before: `y = relu(x)` with `y: tile<bf16> l1 interleaved`; after: `relu(x, memory_config=L1 interleaved)`.
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.errors import VerificationError
from onnx2ttnn.ir.graph import Module, layout_of
from onnx2ttnn.ir.layout import memory_config_of
from onnx2ttnn.ir.ttnn_ops import op_info
from onnx2ttnn.passes.base import Pass, PassContext


class MemoryConfigPass(Pass):
    name = "memory-config"

    def run(self, module: Module, ctx: PassContext) -> None:
        count = 0
        for node in module.graph.nodes:
            derived = _derived(node)
            if derived is not None:
                node.attrs["memory_config"] = derived
                count += 1
        verify_memory_configs(module.graph)
        module.notes[self.name] = {"memory_configs": count}


def _derived(node: gs.Node):
    """The memory config this node's output layout calls for (None if the op takes none)."""
    if not op_info(node.op).memory_config or not node.outputs:
        return None
    layout = layout_of(node.outputs[0])
    return memory_config_of(layout) if layout is not None else None


def verify_memory_configs(graph: gs.Graph) -> None:
    """Every device-producing node's `memory_config` attribute equals the one its layout derives."""
    for index, node in enumerate(graph.nodes):
        derived = _derived(node)
        stored = node.attrs.get("memory_config")
        if derived != stored:
            where = node.attrs.get("_source", "")
            raise VerificationError(
                f"node {index} ttnn.{node.op} (from {where!r}): memory_config {stored} does not match its "
                f"output layout {layout_of(node.outputs[0]) if node.outputs else None} (expects {derived})"
            )
