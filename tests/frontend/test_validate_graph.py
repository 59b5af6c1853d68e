"""validate_graph: what the validation checks read of a graph: shapes (a symbolic dim as -1), static shapes,
element types, the values of initializers and Constant nodes (not of external data), schema versions."""
from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
from onnx import numpy_helper

from onnx2ttnn.frontend.validate_graph import GraphFacts, node_input

TEXT = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[N, 3] x) => (float[N, 3] y) {
    c = Constant<value = int64[2] {1, 2}>()
    y = Add(x, w)
}
"""


def _facts(opset: int = 18) -> tuple[onnx.GraphProto, GraphFacts]:
    graph = onnx.parser.parse_model(TEXT).graph
    graph.initializer.append(numpy_helper.from_array(np.ones((1, 3), np.float32), "w"))
    return graph, GraphFacts(graph, opset)


def test_shapes_types_and_constant_values_are_read():
    graph, facts = _facts()
    assert facts.shape("x") == (-1, 3) and facts.static_shape("x") is None
    assert facts.shape("w") == (1, 3) == facts.static_shape("w")
    assert facts.shape("nowhere") is None and facts.dtype("nowhere") == 0
    assert facts.dtype("x") == onnx.TensorProto.FLOAT and facts.dtype("w") == onnx.TensorProto.FLOAT
    np.testing.assert_array_equal(facts.value("c"), [1, 2])
    np.testing.assert_array_equal(facts.value("w"), np.ones((1, 3)))
    assert facts.value("x") is None
    assert facts.negative == {}


def test_external_data_has_no_value_and_a_negative_dim_is_recorded():
    graph, _ = _facts()
    graph.initializer[0].data_location = onnx.TensorProto.EXTERNAL
    graph.output[0].type.tensor_type.shape.dim[1].dim_value = -2
    facts = GraphFacts(graph, 18)
    assert facts.value("w") is None
    assert facts.negative == {"y": ["?", -2]}


def test_schema_versions_at_the_model_opset():
    graph, facts = _facts(18)
    add = graph.node[1]
    assert facts.schema_version(add) == 14
    assert GraphFacts(graph, 7).schema_version(add) == 7
    add.op_type = "NoSuchOp"
    assert facts.schema_version(add) == 0
    assert node_input(add, 1) == "w" and node_input(add, 2) == ""
