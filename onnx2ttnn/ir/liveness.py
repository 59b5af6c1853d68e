"""Buffer liveness over the node schedule: when each device buffer (with all its views) is born and last read."""
from __future__ import annotations

from dataclasses import dataclass, field

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.aliases import buffer_roots
from onnx2ttnn.ir.graph import layout_of


@dataclass
class Buffer:
    """One device buffer: the tensor that owns it, its views, and its live range in node indices."""

    root: gs.Tensor
    first: int
    last: int
    members: list = field(default_factory=list)
    is_param: bool = False
    last_reader: gs.Tensor = None  # the member read by the node at `last`


def buffers(graph: gs.Graph) -> list[Buffer]:
    """Every device buffer of the graph, in order of creation (a reverse walk finds the last uses)."""
    roots = buffer_roots(graph)
    by_root: dict[int, Buffer] = {}
    order: list[Buffer] = []
    for index, node in enumerate(graph.nodes):
        for out in node.outputs:
            layout = layout_of(out)
            if layout is None or not layout.on_device:
                continue
            root = roots[id(out)]
            buf = by_root.get(id(root))
            if buf is None:
                buf = Buffer(root, index, index, is_param=bool(node.op == "from_torch" and node.attrs.get("_param")))
                buf.last_reader = out
                by_root[id(root)] = buf
                order.append(buf)
            buf.members.append(out)
    for index in range(len(graph.nodes) - 1, -1, -1):
        node = graph.nodes[index]
        for inp in node.inputs:
            buf = by_root.get(id(roots.get(id(inp), inp)))
            if buf is not None and index > buf.last:
                buf.last = index
                buf.last_reader = inp
    return order
