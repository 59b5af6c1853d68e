"""Programs with fused epilogues (fuse-epilogues) run on the real ttnn 0.81.1 mock under every memory policy:
linear with activation="gelu" / "relu", layer_norm and rms_norm with residual_input_tensor=, add with a fused
relu (activations=[UnaryWithParam(RELU)]), with no leaks."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.real_ttnn.test_programs import _check_on_real_ttnn, _convert


def _epilogue_model(norm: str):
    """x -> linear + gelu -> linear -> (+ x) -> norm -> (+ x) -> relu -> linear + relu."""
    rng = np.random.default_rng(3)
    inits = {"w1": (64, 128), "b1": (128,), "w2": (128, 64), "b2": (64,), "g": (64,), "beta": (64,),
             "w3": (64, 64), "b3": (64,)}
    norm_inputs = ["r", "g", "beta"] if norm == "LayerNormalization" else ["r", "g"]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Gelu", ["hb"], ["a"]),
             helper.make_node("MatMul", ["a", "w2"], ["o"]), helper.make_node("Add", ["o", "b2"], ["ob"]),
             helper.make_node("Add", ["ob", "x"], ["r"]),
             helper.make_node(norm, norm_inputs, ["n"], axis=-1, epsilon=1e-5),
             helper.make_node("Add", ["n", "x"], ["s"]), helper.make_node("Relu", ["s"], ["t"]),
             helper.make_node("MatMul", ["t", "w3"], ["u"]), helper.make_node("Add", ["u", "b3"], ["ub"]),
             helper.make_node("Relu", ["ub"], ["v"]), helper.make_node("MatMul", ["v", "w3"], ["y"])]
    graph = helper.make_graph(
        nodes, "epilogues", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 64])],
        [numpy_helper.from_array((rng.standard_normal(s) * 0.2).astype(np.float32), k) for k, s in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


@pytest.mark.parametrize("memory", ["dram", "l1", "auto"])
@pytest.mark.parametrize("norm", ["LayerNormalization", "RMSNormalization"])
def test_fused_epilogues_run_on_real_ttnn(ttnn_mock, norm, memory, tmp_path):
    program = _convert(_epilogue_model(norm), tmp_path, memory, "n150")
    text = Path(program).read_text()
    assert "activation='gelu'" in text and "activation='relu'" in text
    assert "residual_input_tensor=" in text
    assert "activations=[ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU)]" in text
    _check_on_real_ttnn(ttnn_mock, program, memory, "n150")
