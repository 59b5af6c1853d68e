"""functions: model-local ONNX functions are inlined on import; a function that calls itself is refused."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnx2ttnn
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.functions import check_functions, inline_functions
from onnx2ttnn import ort

X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]


def _function(name, inputs, outputs, nodes, attributes=()):
    return helper.make_function("local", name, inputs, outputs, nodes, OPSETS, attributes=list(attributes))


def _model(nodes, functions, initializers=()):
    graph = helper.make_graph(nodes, "g", [X], [Y], initializer=list(initializers))
    return helper.make_model(graph, opset_imports=OPSETS, functions=functions)


def _call(op, inputs, outputs, name, **attrs):
    return helper.make_node(op, inputs, outputs, name=name, domain="local", **attrs)


ADD_RELU = _function("AddRelu", ["a", "b"], ["y"], [helper.make_node("Add", ["a", "b"], ["s"]),
                                                      helper.make_node("Relu", ["s"], ["y"])])


def run_model(model, feeds):
    return ort.run(ort.session(model.SerializeToString()), [o.name for o in model.graph.output], feeds)


def _ops(model):
    return [n.op_type for n in model.graph.node]


def test_a_call_becomes_the_functions_body():
    model = _model([_call("AddRelu", ["x", "x"], ["y"], "f0")], [ADD_RELU])
    inline_functions(model)
    assert _ops(model) == ["Add", "Relu"] and not model.functions
    assert model.graph.node[-1].output == ["y"]


def test_functions_calling_functions_and_calls_inside_subgraphs_are_inlined():
    outer = _function("Twice", ["a"], ["y"], [_call("AddRelu", ["a", "a"], ["t"], "inner"),
                                              _call("AddRelu", ["t", "t"], ["y"], "inner2")])
    branch = helper.make_graph([_call("Twice", ["x"], ["b"], "in_branch")], "then", [],
                               [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["c"])], "else", [],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, 3])])
    cond = onnx.numpy_helper.from_array(np.array(True), "cond")
    model = _model([helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=other, name="if0")],
                   [outer, ADD_RELU], [cond])
    inline_functions(model)
    inlined = [n.op_type for n in model.graph.node[0].attribute[0].g.node] + \
              [n.op_type for n in model.graph.node[0].attribute[1].g.node]
    assert sorted(inlined) == ["Add", "Add", "Identity", "Relu", "Relu"]
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    conversion = onnx2ttnn.convert(_model([helper.make_node("If", ["cond"], ["y"], then_branch=branch,
                                                            else_branch=other, name="if0")],
                                          [outer, ADD_RELU], [cond]))
    assert "UnaryOpType.RELU" in conversion.source  # the inlined Add + Relu, fused (fuse-epilogues)
    np.testing.assert_allclose(run_model(model, {"x": x})[0], 4 * np.maximum(x, 0))


def test_attribute_references_take_the_calls_value_or_the_default():
    alpha = helper.make_node("LeakyRelu", ["a"], ["y"])
    alpha.attribute.append(helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT))
    leaky = _function("Leaky", ["a"], ["y"], [alpha], attributes=["alpha"])
    model = _model([_call("Leaky", ["x"], ["y"], "l0", alpha=0.25)], [leaky])
    inline_functions(model)
    assert helper.get_attribute_value(model.graph.node[0].attribute[0]) == pytest.approx(0.25)


def test_internal_names_do_not_collide_with_the_graphs():
    # the body's intermediate "s" must not become the graph's own "s"
    model = _model([helper.make_node("Neg", ["x"], ["s"], name="neg"), _call("AddRelu", ["s", "x"], ["t"], "f0"),
                    helper.make_node("Add", ["t", "s"], ["y"], name="add")], [ADD_RELU])
    inline_functions(model)
    onnx.checker.check_model(model)
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    np.testing.assert_allclose(run_model(model, {"x": x})[0], np.maximum(-x + x, 0) - x)


def test_a_converted_model_with_a_function_matches_onnxruntime(tmp_path):
    model = _model([_call("AddRelu", ["x", "x"], ["y"], "f0")], [ADD_RELU])
    path = tmp_path / "func.onnx"
    onnx.save(model, str(path))
    report = onnx2ttnn.verify(str(path))
    assert report.passed, report.text()


def test_a_function_calling_itself_is_refused_naming_the_node():
    rec = _function("Rec", ["a"], ["y"], [_call("Rec", ["a"], ["y"], "again")])
    model = _model([helper.make_node("Relu", ["x"], ["r"], name="relu"), _call("Rec", ["r"], ["y"], "r0")], [rec])
    with pytest.raises(ConversionError, match=r"node 'r0' \(local::Rec\) calls a model-local function that calls "
                                              r"itself \(local::Rec -> local::Rec\)"):
        onnx2ttnn.convert(model)


def test_mutual_recursion_through_a_third_function_is_refused_naming_the_cycle():
    a = _function("A", ["a"], ["y"], [_call("B", ["a"], ["y"], "ab")])
    b = _function("B", ["a"], ["y"], [_call("C", ["a"], ["y"], "bc")])
    c = _function("C", ["a"], ["y"], [_call("B", ["a"], ["y"], "cb")])
    model = _model([_call("A", ["x"], ["y"], "top")], [a, b, c])
    with pytest.raises(ConversionError, match=r"node 'top' \(local::A\) .* \(local::B -> local::C -> local::B\)"):
        check_functions(model)


def test_an_unused_recursive_function_is_refused_naming_the_function():
    rec = _function("Rec", ["a"], ["y"], [_call("Rec", ["a"], ["y"], "again")])
    model = _model([_call("AddRelu", ["x", "x"], ["y"], "f0")], [ADD_RELU, rec])
    with pytest.raises(ConversionError, match=r"model-local function local::Rec calls itself"):
        check_functions(model)


def test_a_recursive_function_in_a_file_is_named_before_the_checker_speaks(tmp_path):
    rec = _function("Rec", ["a"], ["y"], [_call("Rec", ["a"], ["y"], "again")])
    path = tmp_path / "rec.onnx"
    onnx.save(_model([_call("Rec", ["x"], ["y"], "r0")], [rec]), str(path))
    with pytest.raises(ConversionError, match=r"node 'r0'"):
        onnx2ttnn.convert(str(path))


def test_a_deep_chain_of_functions_inlines_without_recursion_limits():
    functions = [_function("F0", ["a"], ["y"], [helper.make_node("Relu", ["a"], ["y"])])]
    for i in range(1, 1500):
        functions.append(_function(f"F{i}", ["a"], ["y"], [_call(f"F{i - 1}", ["a"], ["y"], f"c{i}")]))
    model = _model([_call("F1499", ["x"], ["y"], "top")], functions)
    check_functions(model)  # an iterative walk: no RecursionError


def test_a_function_called_along_two_paths_is_no_cycle():
    d = _function("D", ["a"], ["y"], [helper.make_node("Relu", ["a"], ["y"])])
    b = _function("B", ["a"], ["y"], [_call("D", ["a"], ["y"], "bd")])
    c = _function("C", ["a"], ["y"], [_call("D", ["a"], ["y"], "cd")])
    a = _function("A", ["a"], ["y"], [_call("B", ["a"], ["t"], "ab"), _call("C", ["t"], ["y"], "ac")])
    model = _model([_call("A", ["x"], ["y"], "top")], [a, b, c, d])
    check_functions(model)
    inline_functions(model)
    assert _ops(model) == ["Relu", "Relu"]
