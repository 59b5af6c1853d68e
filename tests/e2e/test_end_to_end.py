"""Whole pipeline: convert, run the program on the simulator, compare with onnxruntime; API fit; no leaks."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
from onnx2ttnn.lowering import registry
from onnx2ttnn.verify import verify
from tests.ttnn_api import check_source

MODELS = ["mlp_path", "cnn_path", "bert_path"]


@pytest.mark.parametrize("memory", ["dram", "l1"])
@pytest.mark.parametrize("model", MODELS)
def test_model_matches_onnxruntime(model, memory, request):
    report = verify(request.getfixturevalue(model), memory=memory)
    assert report.leaks == []
    for out in report.outputs:
        assert out.pcc >= 0.99, report.text()
    assert report.passed
    if memory == "l1":
        assert report.peak_l1_per_core > 0, "the l1 policy placed nothing in L1"


@pytest.mark.parametrize("memory", ["dram", "l1"])
@pytest.mark.parametrize("model", MODELS)
def test_generated_program_fits_real_ttnn_api(model, memory, request):
    result = onnx2ttnn.convert(request.getfixturevalue(model), "model_ttnn.py", memory=memory)
    assert check_source(result.source) == []


def test_fp32_programs_are_more_exact(mlp_path):
    report = verify(mlp_path, dtype="fp32")
    assert report.passed and report.outputs[0].max_abs < 1e-4, report.text()


def _view_model() -> onnx.ModelProto:
    """relu -> reshape (a view: same last dim, tile-aligned rows) used together with the original."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Reshape", ["r", "shape"], ["v"], name="view"),
        helper.make_node("Mul", ["v", "two"], ["m"], name="use_view"),
        helper.make_node("Reshape", ["m", "back"], ["mb"], name="view_back"),
        helper.make_node("Add", ["mb", "r"], ["y"], name="use_both"),
    ]
    inits = [numpy_helper.from_array(np.array([64, 32], np.int64), "shape"),
             numpy_helper.from_array(np.array([2, 32, 32], np.int64), "back"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    graph = helper.make_graph(nodes, "views", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 32, 32])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_views_are_deallocated_once_after_their_last_alias():
    model = _view_model()
    result = onnx2ttnn.convert(model, "views_ttnn.py")
    body = result.source.split("def forward", 1)[1].split("\n    return {", 1)[0]
    assert body.count("ttnn.reshape(") == 2
    # r and its view v share one buffer: freed once, after the add that reads r last
    frees = [line.strip() for line in body.splitlines() if "ttnn.deallocate" in line]
    assert len(frees) == len(set(frees))
    lines = [line.strip() for line in body.splitlines()]
    add_line = next(i for i, line in enumerate(lines) if "ttnn.add(" in line)
    assert "ttnn.deallocate(r)" in lines[add_line + 1: add_line + 4]
    assert not any("ttnn.deallocate(v)" in line for line in lines)
    report = verify(model, dtype="fp32")  # the simulator raises on use-after-free and reports leaks
    assert report.passed, report.text()


def test_per_op_names_the_broken_op(cnn_path, monkeypatch):
    def broken_relu(ctx, node):
        x, form = ctx.value_with_form(node.inputs[0])
        ctx.bind(node.outputs[0], ctx.op("neg", [x], x.shape, name=node.outputs[0].name), form)

    broken = registry.Rule("", "Relu", (6, 13, 14), broken_relu, ("neg",))
    monkeypatch.setitem(registry._RULES, ("", "Relu"), [broken])
    report = verify(cnn_path, per_op=True)
    assert not report.passed
    assert report.first_divergent is not None and "'residual.relu'" in report.first_divergent, report.text()


def test_per_op_finds_nothing_when_all_is_well(mlp_path):
    report = verify(mlp_path, per_op=True)
    assert report.per_op and report.first_divergent is None and report.passed
