"""Buffers and their aliases: which tensors of a ttnn graph share one device buffer (views)."""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.ttnn_ops import op_info
from onnx2ttnn.ir.views import reshape_is_view


def is_view(node: gs.Node) -> bool:
    """True when this node's output shares its input's device buffer."""
    if not op_info(node.op).view:
        return False
    src, out = node.inputs[0], node.outputs[0]
    layout = layout_of(src)
    if layout is None or not layout.on_device:
        return False
    return reshape_is_view(layout.is_tile, src.shape, out.shape)


def buffer_roots(graph: gs.Graph) -> dict[int, gs.Tensor]:
    """id(tensor) -> the tensor that owns its buffer (itself unless it is a view of another)."""
    roots: dict[int, gs.Tensor] = {}
    for node in graph.nodes:
        for out in node.outputs:
            roots[id(out)] = out
        if is_view(node):
            src = node.inputs[0]
            roots[id(node.outputs[0])] = roots.get(id(src), src)
    return roots
