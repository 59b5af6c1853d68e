"""lower-to-ttnn: rules that decline fall back to the host with nothing left behind; --no-fallback and
missing rules give one error naming every op type with its node count."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from onnx2ttnn import convert
from onnx2ttnn.errors import UnsupportedOpsError
from onnx2ttnn.lowering import registry
from onnx2ttnn.verify import verify


def _model(nodes, shape=(2, 8)):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 18)])


@pytest.fixture
def declining_hardmax(monkeypatch):
    """A Hardmax lowering rule that emits a node, converts its input to another form, then declines."""
    rules = dict(registry._RULES)
    monkeypatch.setattr(registry, "_RULES", rules)

    def rule(ctx, node):
        ctx.op("relu", [ctx.value(node.inputs[0])], node.outputs[0].shape, name="half_done")
        ctx.param(np.ones(3, np.float32), "leftover")
        ctx.decline("axis=0 is not supported")

    registry.register("Hardmax", versions=(13,), ttnn=("relu",))(rule)


def test_a_declined_node_goes_to_its_fallback_and_leaves_nothing_behind(declining_hardmax):
    m = _model([helper.make_node("Exp", ["x"], ["e"]), helper.make_node("Hardmax", ["e"], ["y"], axis=0)])
    conversion = convert(m, dtype="fp32")
    ops = [n.op for n in conversion.module.graph.nodes]
    assert "relu" not in ops and "half_done" not in conversion.source
    assert not conversion.program.weights  # the rolled-back parameter is gone
    assert conversion.fallback_counts() == {"Hardmax": 1}
    assert verify(m, dtype="fp32").passed


def test_a_declined_node_without_fallback_is_reported_with_the_reason(declining_hardmax):
    m = _model([helper.make_node("Hardmax", ["x"], ["y"], axis=0, name="hm")])
    with pytest.raises(UnsupportedOpsError) as info:
        convert(m, fallback=False)
    text = str(info.value)
    assert text.splitlines()[0] == "1 ONNX op type has no ttnn lowering: Hardmax (1 node)"
    assert "'hm' (axis=0 is not supported)" in text
    assert "host fallbacks exist for Hardmax" in text


def test_every_op_type_is_listed_once_with_counts():
    nodes = [helper.make_node("Hardmax", ["x"], ["a"], name="h0"),
             helper.make_node("Foo", ["a"], ["b"], name="f0", domain="com.example"),
             helper.make_node("Det", ["b"], ["c"], name="d0"),
             helper.make_node("Foo", ["c"], ["y"], name="f1", domain="com.example")]
    m = _model(nodes, (2, 2))
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    for fallback, expected in ((True, "1 ONNX op type has no ttnn lowering: com.example::Foo (2 nodes)"),
                               (False, "3 ONNX op types have no ttnn lowering: Det (1 node), Hardmax (1 node), "
                                       "com.example::Foo (2 nodes)")):
        with pytest.raises(UnsupportedOpsError) as info:
            convert(m, fallback=fallback)
        assert str(info.value).splitlines()[0] == expected


def test_fallback_needs_static_output_shapes():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    k = helper.make_tensor_value_info("k", TensorProto.INT64, [1])
    v = helper.make_tensor_value_info("v", TensorProto.FLOAT, None)
    i = helper.make_tensor_value_info("i", TensorProto.INT64, None)
    m = helper.make_model(helper.make_graph([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top")], "g",
                                            [x, k], [v, i]), opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(Exception, match="host fallback for TopK needs a static output shape"):
        convert(m)


def test_an_output_a_host_fallback_computed_is_returned_without_a_device_round_trip():
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Det", ["r"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 3, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    conversion = convert(m, dtype="fp32")
    ops = [n.op for n in conversion.module.graph.nodes]
    assert ops.count("from_torch") == 1 and ops.count("to_torch") == 1  # x up, relu(x) down; y stays on the host
    assert ops[-1] == "host_output" and "y = y_host.to(torch.float32)" in conversion.source
    inputs = {"x": np.random.default_rng(3).standard_normal((5, 3, 3)).astype(np.float32)}
    report = verify(m, inputs=inputs, dtype="fp32")
    assert report.passed, report.text()
