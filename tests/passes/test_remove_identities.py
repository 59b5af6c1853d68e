"""remove-identities: Identity and inference-mode Dropout go; a Dropout in training mode stays for its rule."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.importer import import_model
from onnx2ttnn.options import Options
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.remove_identities import RemoveIdentities


def _model(op: str, inputs: list[str], inits: list, opset: int = 17) -> onnx.ModelProto:
    nodes = [helper.make_node(op, inputs, ["y"]), helper.make_node("Relu", ["y"], ["z"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _ops_after(model: onnx.ModelProto) -> list[str]:
    module = import_model(model, {})
    RemoveIdentities().run(module, PassContext(Options()))
    return [n.op for n in module.graph.nodes]


def _flag(value: bool):
    return numpy_helper.from_array(np.array(value), "training")


def _ratio(value: float):
    return numpy_helper.from_array(np.array(value, np.float32), "ratio")


def test_identity_and_inference_dropout_are_removed():
    assert _ops_after(_model("Identity", ["x"], [])) == ["Relu"]
    assert _ops_after(_model("Dropout", ["x"], [])) == ["Relu"]
    assert _ops_after(_model("Dropout", ["x", "ratio", "training"], [_ratio(0.5), _flag(False)])) == ["Relu"]
    assert _ops_after(_model("Dropout", ["x", "ratio", "training"], [_ratio(0.0), _flag(True)])) == ["Relu"]


def test_a_dropout_in_training_mode_is_not_silently_removed():
    model = _model("Dropout", ["x", "ratio", "training"], [_ratio(0.5), _flag(True)])
    assert _ops_after(model) == ["Dropout", "Relu"]
    with pytest.raises(ConversionError, match="training mode"):
        onnx2ttnn.convert(model)
