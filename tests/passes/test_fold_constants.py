"""fold-constants: the Shape -> Gather -> Concat -> Reshape chains exporters write become constants."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.frontend.importer import import_model
from onnx2ttnn.options import Options
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.fold_constants import FoldConstants


def _shape_chain_model() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "axes"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus_one")]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_shape_chain_folds_to_a_constant_reshape():
    module = import_model(_shape_chain_model(), {"x": (2, 3, 4)})
    FoldConstants().run(module, PassContext(Options()))
    ops = [n.op for n in module.graph.nodes]
    assert ops == ["Reshape"]
    target = module.graph.nodes[0].inputs[1]
    assert list(np.asarray(target.values)) == [2, -1]
    assert tuple(module.graph.nodes[0].outputs[0].shape) == (2, 12)
