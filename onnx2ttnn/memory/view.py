"""A planning view of a ttnn graph: light stand-ins for its nodes and tensors that the memory planner may
rewire, so it can plan with candidate `to_memory_config` moves that are not in the graph.

A ViewNode has the `op`, `attrs`, `inputs` and `outputs` of its node; a ViewTensor the `name`, `shape`,
`dtype`, `ttnn_layout`, producers (`inputs`) and consumers (`outputs`) of its tensor, in the graph's order
(a consumer reading a tensor twice is listed twice, as onnx-graphsurgeon lists it).  The functions that
read graphs (ir/liveness.py buffers, ir/aliases.py, ir/cost.py node_cost) take the view as they take the
graph.  Rewiring follows onnx-graphsurgeon's synchronised lists, so a plan made over the view equals the
plan made over a graph edited the same way.  The graph itself is never changed.
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import TTNNLayout


class ViewTensor:
    """Stands for one tensor (`tensor`: the graph's, None for a tensor only the plan has)."""

    __slots__ = ("name", "shape", "dtype", "ttnn_layout", "inputs", "outputs", "tensor")

    def __init__(self, name: str, shape, dtype, layout, tensor=None) -> None:
        self.name, self.shape, self.dtype, self.ttnn_layout, self.tensor = name, shape, dtype, layout, tensor
        self.inputs: list = []
        self.outputs: list = []


class ViewNode:
    """Stands for one node (`node`: the graph's, None for a node only the plan has)."""

    __slots__ = ("op", "attrs", "inputs", "outputs", "node")

    def __init__(self, op: str, attrs: dict, node=None) -> None:
        self.op, self.attrs, self.node = op, attrs, node
        self.inputs: list = []
        self.outputs: list = []


class PlanningView:
    """The schedule (`nodes`), graph inputs (`inputs`) and outputs (`outputs`) of a graph, as ViewNodes and
    ViewTensors."""

    def __init__(self, graph: gs.Graph) -> None:
        self._nodes: dict[int, ViewNode] = {}
        self._tensors: dict[int, ViewTensor] = {}
        self._todo: list = []
        self.nodes = [self._node(node) for node in graph.nodes]
        self.inputs = [self._tensor(tensor) for tensor in graph.inputs]
        self.outputs = [self._tensor(tensor) for tensor in graph.outputs]
        while self._todo:  # link everything reachable, consumers not in the schedule included
            item = self._todo.pop()
            if isinstance(item, ViewNode):
                item.inputs = [self._tensor(t) for t in item.node.inputs]
                item.outputs = [self._tensor(t) for t in item.node.outputs]
            else:
                item.inputs = [self._node(n) for n in item.tensor.inputs]
                item.outputs = [self._node(n) for n in item.tensor.outputs]

    def _node(self, node: gs.Node) -> ViewNode:
        found = self._nodes.get(id(node))
        if found is None:
            found = self._nodes[id(node)] = ViewNode(node.op, node.attrs, node)
            self._todo.append(found)
        return found

    def _tensor(self, tensor: gs.Tensor) -> ViewTensor:
        found = self._tensors.get(id(tensor))
        if found is None:
            found = ViewTensor(tensor.name, tensor.shape, tensor.dtype, layout_of(tensor), tensor)
            self._tensors[id(tensor)] = found
            self._todo.append(found)
        return found

    # --- edits of the view (onnx-graphsurgeon's list semantics) --------------------------------------------
    @staticmethod
    def new_tensor(name: str, like: ViewTensor, layout: TTNNLayout) -> ViewTensor:
        """A tensor only the plan has, with `like`'s dtype and shape."""
        return ViewTensor(name, list(like.shape), like.dtype, layout)

    @staticmethod
    def new_node(op: str, inputs: list, outputs: list, attrs: dict) -> ViewNode:
        """A node only the plan has, wired to its inputs and outputs (not yet in the schedule)."""
        node = ViewNode(op, attrs)
        for tensor in inputs:
            node.inputs.append(tensor)
            tensor.outputs.append(node)
        for tensor in outputs:
            node.outputs.append(tensor)
            tensor.inputs.append(node)
        return node

    @staticmethod
    def set_input(node: ViewNode, index: int, tensor: ViewTensor) -> None:
        """`node.inputs[index] = tensor`: the node leaves the old tensor's consumers, joins the new one's."""
        node.inputs[index].outputs.remove(node)
        node.inputs[index] = tensor
        tensor.outputs.append(node)

    def detach(self, node: ViewNode) -> None:
        """Unwire a node from its tensors and take it out of the schedule."""
        for tensor in node.inputs:
            tensor.outputs.remove(node)
        for tensor in node.outputs:
            tensor.inputs.remove(node)
        node.inputs.clear()
        node.outputs.clear()
        self.nodes.remove(node)
