"""insert-moves: a `to_memory_config` into L1 after each DRAM-only output the memory plan moves.

Reads: module.notes["place-memory"]["moves"] (memory/plan.py PlannedMove: a tensor its op always writes to
DRAM, the layout of its copy in L1 and why), decided by the auto policy (memory/moves.py: kept where the
cost model says the move pays).  Must hold: place-memory has placed every tensor and nothing has changed
the schedule since.  Writes: one move node right after the producer, its copy named `<tensor>_l1` with the
planned layout; every reader of the DRAM original (and every view of it that a reader made) now reads the
copy, whose views share its placement; the copy's reason goes to module.notes["place-memory"]["reasons"].
insert-deallocs then frees the original right after the move.
Before: `c = conv2d(x)  # dram; y = add(c, sigmoid(c))`;
after: `c = conv2d(x)  # dram; c_l1 = to_memory_config(c)  # l1; y = add(c_l1, sigmoid(c_l1))`.
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.aliases import buffer_roots
from onnx2ttnn.ir.graph import Module, layout_of, set_layout, ttnn_node
from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.memory.buffers import member_layout
from onnx2ttnn.memory.moves import MOVE, MOVED_SUFFIX
from onnx2ttnn.passes.base import Pass, PassContext


class InsertMoves(Pass):
    name = "insert-moves"

    def run(self, module: Module, ctx: PassContext) -> None:
        notes = module.notes.get("place-memory", {})
        planned = {id(move.tensor): move for move in notes.get("moves", [])}
        graph = module.graph
        nodes, copies = [], []
        for node in graph.nodes:
            nodes.append(node)
            for out in node.outputs:
                move = planned.pop(id(out), None)
                if move is not None:
                    nodes.append(_move(out, move.layout, node.attrs.get("_source", "")))
                    copies.append(nodes[-1].outputs[0])
                    notes["reasons"].add(copies[-1], move.reason)
        if planned:
            names = ", ".join(sorted(move.tensor.name for move in planned.values()))
            raise ConversionError(f"insert-moves: the plan moves {names}, which no node of the schedule writes")
        graph.nodes = nodes
        _place_views(graph, copies)
        module.notes[self.name] = {"moves_to_l1": len(copies)}


def _move(out: gs.Tensor, layout: TTNNLayout, source: str) -> gs.Node:
    """The move of `out` into L1 with its readers rewired to the copy (the node is not yet scheduled)."""
    moved = type(out)(out.name + MOVED_SUFFIX, dtype=out.dtype, shape=list(out.shape))
    set_layout(moved, layout)
    for consumer in [c for c in out.outputs if c.op != "deallocate"]:
        for index, tensor in enumerate(consumer.inputs):
            if tensor is out:
                consumer.inputs[index] = moved
    return ttnn_node(MOVE, [out], [moved], source, _move=True)


def _place_views(graph: gs.Graph, copies: list[gs.Tensor]) -> None:
    """Views of a copy now share its buffer: they take its placement."""
    wanted = {id(copy): layout_of(copy) for copy in copies}
    roots = buffer_roots(graph)
    for node in graph.nodes:
        for out in node.outputs:
            root = roots.get(id(out))
            if root is not out and id(root) in wanted:
                set_layout(out, member_layout(layout_of(out), wanted[id(root)]))
