"""insert-deallocs: a `ttnn.deallocate` right after the last use of every intermediate device buffer.

Reads: the schedule and buffer liveness with views (ir/liveness.py).  Writes: one deallocate node per
buffer, after the last node that reads any of its aliases (through that alias); weights are never
deallocated, graph outputs are freed after `to_torch`.  A buffer nobody reads is freed right away.
Before: `y = relu(x); z = add(y, y)`; after: `y = relu(x); deallocate(x); z = add(y, y); deallocate(y)`.
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import Module, ttnn_node
from onnx2ttnn.ir.liveness import buffers
from onnx2ttnn.passes.base import Pass, PassContext


class InsertDeallocs(Pass):
    name = "insert-deallocs"

    def run(self, module: Module, ctx: PassContext) -> None:
        graph = module.graph
        after: dict[int, list[gs.Tensor]] = {}
        count = 0
        for buf in buffers(graph):
            if buf.is_param:
                continue
            after.setdefault(buf.last, []).append(buf.last_reader)
            count += 1
        nodes = []
        for index, node in enumerate(graph.nodes):
            nodes.append(node)
            for tensor in after.get(index, []):
                nodes.append(ttnn_node("deallocate", [tensor], [], node.attrs.get("_source", "")))
        graph.nodes = nodes
        module.notes[self.name] = {"deallocations": count}
