"""lower-to-ttnn: rules that decline fall back to the host with nothing left behind; --no-fallback and
missing rules give one error naming every op type with its node count and schema version; a schema version no
rule was checked against is unsupported (or goes to a fallback that was)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnx2ttnn import convert
from onnx2ttnn.errors import ConversionError, UnsupportedOpsError
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
    assert text.splitlines()[1] == "  Hardmax (opset 18 schema 13): 'hm' (axis=0 is not supported)"
    assert "host fallbacks exist for Hardmax (schema 13)" in text


def _one_node(op, opset, shape=(2, 8), **attrs):
    node = helper.make_node(op, ["x"], ["y"], name=f"{op.lower()}0", **attrs)
    return _model([node], shape) if opset == 18 else _at_opset(_model([node], shape), opset)


def _at_opset(m, opset):
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("", opset))
    return m


def test_an_opset_newer_than_onnx_knows_is_refused_naming_it():
    """The importer refuses the model before lowering (onnx2ttnn/limits.py); no rule serves an unknown schema
    either (registry.lookup), so lowering would list the op as unsupported behind it."""
    from onnx2ttnn.lowering.registry import lookup

    newer = onnx.defs.onnx_opset_version() + 2
    with pytest.raises(ConversionError, match=f"opset {newer} of ai.onnx, which onnx {onnx.__version__} does not "
                                              f"know \\(it knows opsets 1 to {newer - 2}"):
        convert(_one_node("Abs", newer))
    assert lookup("", "Abs", newer) is None


def test_a_schema_version_no_rule_was_checked_against_is_unsupported():
    """Add-6 broadcasts by its `broadcast`/`axis` attributes: the numpy-broadcasting rule of 7 does not serve it."""
    nodes = [helper.make_node("Add", ["x", "x"], ["y"], name="add0")]
    with pytest.raises(UnsupportedOpsError) as info:
        convert(_at_opset(_model(nodes), 6))
    assert str(info.value).splitlines() == ["1 ONNX op type has no ttnn lowering: Add (1 node)",
                                            "  Add (opset 6 schema 6): 'add0' (rules were checked against "
                                            "schema 7, 13, 14 only)"]
    assert convert(_at_opset(_model(nodes), 7)).op_counts()["add"] == 1


def test_a_version_the_lowering_rule_does_not_cover_goes_to_a_fallback_that_does(monkeypatch):
    """With a Hardmax rule for schema 13 only, Hardmax-11 goes to its host fallback, and without fallbacks
    it is unsupported naming its schema version."""
    monkeypatch.setattr(registry, "_RULES", dict(registry._RULES))
    registry.register("Hardmax", versions=(13,), ttnn=("relu",))(
        lambda ctx, node: ctx.bind(node.outputs[0], ctx.op("relu", [ctx.value(node.inputs[0])],
                                                           node.outputs[0].shape, name="hm")))
    assert convert(_one_node("Hardmax", 13), dtype="fp32").fallback_counts() == {}
    old = _one_node("Hardmax", 11)
    assert convert(old, dtype="fp32").fallback_counts() == {"Hardmax": 1}
    assert verify(old, dtype="fp32").passed
    with pytest.raises(UnsupportedOpsError) as info:
        convert(old, fallback=False)
    assert str(info.value).splitlines()[1:] == [
        "  Hardmax (opset 11 schema 11): 'hardmax0'",
        "  host fallbacks exist for Hardmax (schema 11): convert without --no-fallback to run them on the host"]


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


def test_a_fallback_with_data_dependent_output_shapes_goes_to_a_host_region():
    """TopK with a runtime k: the torch fallback needs static output shapes, onnxruntime does not (the graph
    outputs keep their unknown dims)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    k = helper.make_tensor_value_info("k", TensorProto.INT64, [1])
    v = helper.make_tensor_value_info("v", TensorProto.FLOAT, None)
    i = helper.make_tensor_value_info("i", TensorProto.INT64, None)
    m = helper.make_model(helper.make_graph([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top")], "g",
                                            [x, k], [v, i]), opset_imports=[helper.make_opsetid("", 18)])
    conversion = convert(m)
    assert [r["nodes"] for r in conversion.region_summaries()] == [[("top", "TopK")]]
    assert conversion.fallback_counts() == {}


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


@pytest.fixture
def shape_lost_after_folding(monkeypatch):
    """fold-constants leaves tensor 'e' without a shape (as it did after a contrib op before its fix)."""
    from onnx2ttnn.passes import fold_constants

    run = fold_constants.FoldConstants.run

    def losing_run(self, module, ctx):
        run(self, module, ctx)
        module.graph.tensors()["e"].shape = None

    monkeypatch.setattr(fold_constants.FoldConstants, "run", losing_run)


def test_a_node_reading_a_tensor_of_unknown_shape_goes_to_a_host_region(shape_lost_after_folding):
    """No rule can place a tensor of unknown shape on the device: its reader runs in onnxruntime (it used to
    reach the rule, which failed with an internal error), and --no-fallback names the tensor."""
    m = _model([helper.make_node("Exp", ["x"], ["e"]), helper.make_node("Relu", ["e"], ["y"], name="relu")])
    conversion = convert(m)
    assert [r["nodes"] for r in conversion.region_summaries()] == [[("relu", "Relu")]]
    with pytest.raises(UnsupportedOpsError) as info:
        convert(m, fallback=False)
    assert "the shape of 'e' is unknown" in str(info.value)
