"""What the validation checks (frontend/validate.py and its per-family modules) read of a graph after shape
inference: the static shapes and element types of its values, the values of its constant tensors, and the
schema version of a node at the model's opset.

Before: an inferred GraphProto where `w` is an initializer of shape [8, 3, 3, 3]; after:
`GraphFacts(graph).shape("w") == (8, 3, 3, 3)`, `.value("w")` its array; a symbolic dim reads as -1.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx
from onnx import numpy_helper

Shape = Optional[tuple[int, ...]]  # None when unknown, a dim of -1 when symbolic


class GraphFacts:
    """What the checks read of the main graph: static shapes and the values of constant tensors."""

    def __init__(self, graph: onnx.GraphProto, opset: int = 0) -> None:
        self.opset = opset
        self.negative: dict[str, list] = {}  # values whose inferred shape has a negative dim (always invalid)
        self._shapes: dict[str, Shape] = {}
        self._types: dict[str, int] = {t.name: t.data_type for t in graph.initializer}
        for info in list(graph.input) + list(graph.value_info) + list(graph.output):
            if info.type.HasField("tensor_type"):
                self._types.setdefault(info.name, info.type.tensor_type.elem_type)
            if info.type.HasField("tensor_type") and info.type.tensor_type.HasField("shape"):
                dims = info.type.tensor_type.shape.dim
                self._shapes[info.name] = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in dims)
                if any(d.HasField("dim_value") and d.dim_value < 0 for d in dims):
                    self.negative[info.name] = [d.dim_value if d.HasField("dim_value") else "?" for d in dims]
        self._tensors: dict[str, onnx.TensorProto] = {t.name: t for t in graph.initializer}
        for t in graph.initializer:
            self._shapes[t.name] = tuple(t.dims)
        for node in graph.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
                value = next((a.t for a in node.attribute if a.name == "value"), None)
                if value is not None:
                    self._tensors[node.output[0]] = value

    def schema_version(self, node: onnx.NodeProto) -> int:
        """The since-version of the node's schema at the model's opset (0 when onnx does not know it)."""
        try:
            return onnx.defs.get_schema(node.op_type, self.opset, node.domain).since_version
        except Exception:  # onnx.defs.SchemaError: an op or an opset onnx does not know (refused elsewhere)
            return 0

    def shape(self, name: str) -> Shape:
        return self._shapes.get(name)

    def dtype(self, name: str) -> int:
        """The element type of a value (0 when unknown)."""
        return self._types.get(name, 0)

    def static_shape(self, name: str) -> Shape:
        """The shape when every dim is known, else None."""
        shape = self.shape(name)
        return shape if shape is not None and all(d >= 0 for d in shape) else None

    def value(self, name: str) -> Optional[np.ndarray]:
        """The value of a constant tensor (initializer or Constant node) whose data is in the model, else None."""
        tensor = self._tensors.get(name)
        if tensor is None or tensor.data_location == onnx.TensorProto.EXTERNAL:
            return None
        return numpy_helper.to_array(tensor)


def node_input(node: onnx.NodeProto, index: int) -> str:
    """The name of input `index` of `node` ("" when the node has fewer inputs)."""
    return node.input[index] if len(node.input) > index else ""
