"""fold-constants: evaluate every subgraph whose inputs are constants, including shape arithmetic.

Reads: a graph with static input shapes.  Writes: constant tensors in place of foldable nodes
(Shape -> Gather -> Concat -> Reshape chains become a constant shape), dead nodes removed, nodes in
topological order.  Before: `Reshape(x, Concat(Gather(Shape(x), 0), [-1]))`; after: `Reshape(x, [2, -1])`.
"""
from __future__ import annotations

import contextlib
import io
import logging

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import Module, is_onnx_op
from onnx2ttnn.passes.base import Pass, PassContext


class FoldConstants(Pass):
    name = "fold-constants"

    def run(self, module: Module, ctx: PassContext) -> None:
        graph = module.graph
        before = len(graph.nodes)
        _constant_nodes_to_tensors(graph)
        logging.getLogger("G-LOGGER").setLevel(logging.ERROR)
        gs.logger.G_LOGGER.severity = gs.logger.G_LOGGER.ERROR
        with contextlib.redirect_stdout(io.StringIO()):
            graph.fold_constants(fold_shapes=True, error_ok=True)
        graph.cleanup(remove_unused_graph_inputs=False).toposort()
        module.notes[self.name] = {"nodes_before": before, "nodes_after": len(graph.nodes)}


def _constant_nodes_to_tensors(graph: gs.Graph) -> None:
    """ONNX Constant nodes become constant tensors, so folding and lowering see their values."""
    for node in graph.nodes:
        if is_onnx_op(node, "Constant") and "value" in node.attrs:
            value = node.attrs["value"]
            out = node.outputs[0]
            out.to_constant(value.values if isinstance(value, gs.Constant) else value)
            node.outputs.clear()
    graph.cleanup(remove_unused_graph_inputs=False)
