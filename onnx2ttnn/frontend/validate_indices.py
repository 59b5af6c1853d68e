"""Validation of index operands: what strict inference lets pass but onnxruntime refuses when it runs the node,
or what would convert into a wrong program (a family of frontend/validate.py's checks).
- constant indices are in range: Gather, GatherElements, ScatterElements (each index in [-s, s-1] for an
  axis of size s) and GatherND, ScatterND (each index tuple within the dims it addresses).  An index out of
  range is a run-time error in onnxruntime; ttnn reads whatever lies there.
- GatherElements / ScatterElements' axis is within the rank and their indices of the data's rank (fuzz seed 163
  case 1662), GatherElements' indices are no larger than the
  data in the dims other than the axis (fuzz seed 67 case 838), ScatterElements' indices and updates have one
  shape.
- ScatterND's indices address at most the data's rank and its updates have the shape they select (fuzz seed
  61), and a GatherND's declared output shape is the one its operands give (fuzz seed 71).

Before: `y = Gather<axis=0>(x[4, 3], [50])` converts into a slice of row 2; after: "index 50 is out of range
for axis 0 of size 4 (valid: -4 to 3)".
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from onnx2ttnn.frontend.validate_graph import GraphFacts, node_input

# ---- indices -------------------------------------------------------------------------------------------

def _check_axis_indices(graph: GraphFacts, node, attrs, indices_input: int = 1) -> Optional[str]:
    """Gather, GatherElements, ScatterElements: the axis within the data's rank (strict inference lets 2^40 pass,
    seed 173 case 456: an unused Gather converted; onnxruntime "axis 1099511627776 is not in valid range"), every
    constant index within the axis."""
    data = graph.shape(node_input(node, 0))
    axis = int(attrs.get("axis", 0))
    if data is not None and not -len(data) <= axis < len(data):
        return f"axis {axis} is out of range for an input of rank {len(data)}"
    indices = graph.value(node_input(node, indices_input))
    if indices is None or data is None or indices.size == 0:
        return None
    size = data[axis]
    if size < 0:
        return None
    return _out_of_range(indices, size, f"axis {axis % len(data)}")


def _check_nd_indices(graph: GraphFacts, node, attrs) -> Optional[str]:
    """GatherND, ScatterND: every constant index tuple within the data dims it addresses (ScatterND: first its
    shapes, _check_scatter_nd_shapes)."""
    reason = _check_scatter_nd_shapes(graph, node) if node.op_type == "ScatterND" else None
    if reason:
        return reason
    indices, data = graph.value(node_input(node, 1)), graph.shape(node_input(node, 0))
    if indices is None or data is None or indices.size == 0 or indices.ndim == 0:
        return None
    batch = int(attrs.get("batch_dims", 0))
    depth = indices.shape[-1]
    if batch + depth > len(data):
        return None  # strict inference refuses it
    for j in range(depth):
        size = data[batch + j]
        if size >= 0:
            reason = _out_of_range(indices[..., j], size, f"dim {batch + j}")
            if reason:
                return reason
    return None


# (fuzz seed 61 cases 998, 1836)
def _check_scatter_nd_shapes(graph: GraphFacts, node) -> Optional[str]:
    """ScatterND: the last dim of indices (k) is at most the data's rank, and the updates have shape
    indices.shape[:-1] + data.shape[k:] (onnxruntime: "last dimension of indices must not be larger than rank
    of input tensor", "updates tensor should have shape equal to indices.shape[:-1] + data.shape[indices.shape
    [-1]:]"; strict inference checks neither)."""
    data, indices, updates = (graph.shape(node_input(node, i)) for i in range(3))
    if data is None or indices is None or not indices or any(d < 0 for d in data + indices):
        return None
    depth = indices[-1]
    if depth > len(data):
        return f"the indices' last dim {depth} is larger than the data's rank {len(data)}"
    want = indices[:-1] + data[depth:]
    if updates is not None and all(d >= 0 for d in updates) and updates != want:
        return (f"the updates have shape {list(updates)}; indices {list(indices)} into data {list(data)} need "
                f"{list(want)}")
    return None


def _check_gather_nd(graph: GraphFacts, node, attrs) -> Optional[str]:
    """GatherND: the indices in range (above), and an output shape, where one is declared, equal to
    `indices.shape[:-1] + data.shape[batch_dims + indices.shape[-1]:]` (fuzz seed 71 case 1252: ONNX inference
    left the output of a [1] gather by [1] indices unshaped, the declared [1] stood for onnxruntime's rank-0
    result, and the program returned shape (1,); onnxruntime only warns)."""
    reason = _check_nd_indices(graph, node, attrs)
    indices, data = graph.shape(node_input(node, 1)), graph.shape(node_input(node, 0))
    out = graph.shape(node.output[0]) if node.output else None
    if reason or indices is None or data is None or out is None or not indices or indices[-1] < 0:
        return reason
    batch = int(attrs.get("batch_dims", 0))
    want = tuple(indices[:-1]) + tuple(data[batch + indices[-1]:])
    if len(want) != len(out) or any(w >= 0 and o >= 0 and w != o for w, o in zip(want, out)):
        return f"its output {node.output[0]!r} is declared {list(out)}, but GatherND gives {list(want)}"
    return None


def _out_of_range(indices: np.ndarray, size: int, where: str) -> Optional[str]:
    values = indices.astype(np.int64, copy=False)
    bad = values[(values < -size) | (values >= size)]
    if bad.size == 0:
        return None
    return f"index {int(bad.flat[0])} is out of range for {where} of size {size} (valid: {-size} to {size - 1})"


def check_elements_axis(graph: GraphFacts, node, attrs) -> Optional[str]:
    """GatherElements, ScatterElements: the axis is within the data's rank, the indices have the data's rank
    (onnxruntime: "Rank of input 'data' needs to be equal to rank of input 'indices'", "Indices must have the same
    rank as Input"; strict inference misses it where no output shape is declared: an unused GatherElements
    converted), indices and updates have one shape, and every constant index is in range."""
    data = graph.shape(node_input(node, 0))
    axis = int(attrs.get("axis", 0))
    if data is not None and not -len(data) <= axis < len(data):  # (rank 0 has no axis: fuzz seed 79 case 1838)
        return f"axis {axis} is out of range for an input of rank {len(data)}"
    indices = graph.shape(node_input(node, 1))
    if data is not None and indices is not None and len(indices) != len(data):  # fuzz seed 163 case 1662
        return (f"the indices (shape {list(indices)}) have rank {len(indices)} but the data (shape {list(data)}) "
                f"rank {len(data)}; they must have one rank")
    if node.op_type == "GatherElements":  # fuzz seed 67 case 838 (indices [1, 5] beside data [5, 4], axis 0)
        reason = _gather_elements_indices(data, graph.shape(node_input(node, 1)), axis)
        if reason:
            return reason
    if node.op_type in ("ScatterElements", "Scatter"):
        indices, updates = graph.shape(node_input(node, 1)), graph.shape(node_input(node, 2))
        if indices is not None and updates is not None and all(d >= 0 for d in indices + updates) \
                and indices != updates:
            return f"the indices (shape {list(indices)}) and the updates (shape {list(updates)}) differ in shape"
    return _check_axis_indices(graph, node, attrs)


def _gather_elements_indices(data, indices, axis: int) -> Optional[str]:
    """GatherElements' indices are no larger than the data in every dim but the axis (onnxruntime: "'indices'
    shape should have values within bounds of 'data' shape. Invalid value in indices shape is: 5"; the spec's
    output[i][j] = data[indices[i][j]][j] reads past the data otherwise)."""
    if data is None or indices is None or len(indices) != len(data):
        return None
    for dim, (size, bound) in enumerate(zip(indices, data)):
        if dim != axis % len(data) and size >= 0 and bound >= 0 and size > bound:
            return (f"the indices (shape {list(indices)}) are larger than the data (shape {list(data)}) in dim "
                    f"{dim}, which is not the axis")
    return None



CHECKS: dict[str, Callable] = {
    "Gather": _check_axis_indices,
    "GatherElements": check_elements_axis,
    "Scatter": check_elements_axis,
    "GatherND": _check_gather_nd,
    "ScatterND": _check_nd_indices,
}
