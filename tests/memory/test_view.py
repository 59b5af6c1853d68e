"""memory/view.py: the planning view mirrors the graph (consumers in onnx-graphsurgeon's order, a double read
listed twice), rewires like onnx-graphsurgeon does, and never changes the graph."""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import set_layout, ttnn_node
from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.memory.view import PlanningView


def _graph():
    """t = relu(x); a = add(t, t); b = exp(t); y = add(a, b)."""
    x, t, a, b, y = (gs.Variable(n, dtype=np.float32, shape=[1, 32]) for n in "xtaby")
    for tensor in (x, t, a, b, y):
        set_layout(tensor, TTNNLayout())
    nodes = [ttnn_node("relu", [x], [t]), ttnn_node("add", [t, t], [a]), ttnn_node("exp", [t], [b]),
             ttnn_node("add", [a, b], [y])]
    return gs.Graph(nodes=nodes, inputs=[x], outputs=[y]), t


def _names(nodes):
    return [n.op for n in nodes]


def test_the_view_lists_consumers_as_the_graph_does():
    graph, t = _graph()
    view = PlanningView(graph)
    vt = view.nodes[0].outputs[0]
    assert vt.tensor is t and vt.name == "t" and vt.ttnn_layout == TTNNLayout()
    assert _names(vt.outputs) == _names(t.outputs) == ["add", "add", "exp"]
    assert [n.node for n in view.nodes] == graph.nodes
    assert view.outputs[0].tensor is graph.outputs[0]


def test_rewiring_the_view_follows_graphsurgeon_and_leaves_the_graph_alone():
    graph, t = _graph()
    view = PlanningView(graph)
    vt, vadd = view.nodes[0].outputs[0], view.nodes[1]
    copy = view.new_tensor("t_l1", vt, TTNNLayout(buffer="l1"))
    view.set_input(vadd, 1, copy)  # the second read of t by add
    # graphsurgeon removes the first occurrence and appends to the new tensor: the same on a copy of the graph
    graph2, t2 = _graph()
    copy2 = gs.Variable("t_l1", dtype=np.float32, shape=[1, 32])
    graph2.nodes[1].inputs[1] = copy2
    assert _names(vt.outputs) == _names(t2.outputs) == ["add", "exp"]
    assert _names(copy.outputs) == _names(copy2.outputs) == ["add"]
    move = view.new_node("to_memory_config", [vt], [copy], {"_move": True})
    assert vt.outputs[-1] is move and copy.inputs == [move]
    view.nodes.insert(1, move)
    view.detach(move)
    assert move not in view.nodes and move not in vt.outputs and copy.inputs == []
    assert _names(t.outputs) == ["add", "add", "exp"] and graph.nodes[1].inputs[1] is t  # the graph is untouched
