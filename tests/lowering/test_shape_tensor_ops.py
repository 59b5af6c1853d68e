"""Shape and tensor-selection rules (lowering/shape_ops.py, tensor_ops.py) on one-node models, fp32, against
onnxruntime: the cases the node tests found and the ops added for them."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.verify import verify
from tests.lowering.test_lowering_rules import one_node
from tests.program_run import forward_text, run

rng = np.random.default_rng(1)


def _gather_runtime(data_shape, ids_shape, axis, ids):
    node = helper.make_node("Gather", ["x", "ids"], ["y"], axis=axis)
    graph = helper.make_graph([node], "gather", [helper.make_tensor_value_info("x", TensorProto.FLOAT, data_shape),
                                                 helper.make_tensor_value_info("ids", TensorProto.INT64, ids_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    inputs = {"x": rng.standard_normal(data_shape).astype(np.float32), "ids": np.asarray(ids, np.int64)}
    return model, inputs


def _folded_reshape():
    """Reshape to Concat(Shape(x)[0], -1): the shape is constant only after folding."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Slice", ["s", "zero", "one"], ["n"]),
             helper.make_node("Div", ["n", "two"], ["half"]),
             helper.make_node("Concat", ["half", "minus"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["r"]),
             helper.make_node("Transpose", ["r"], ["y"], perm=[1, 0])]
    inits = [numpy_helper.from_array(np.array([v], np.int64), n)
             for n, v in (("zero", 0), ("one", 1), ("two", 2), ("minus", -1))]
    graph = helper.make_graph(nodes, "folded", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


CASES = {
    "Tile": (one_node("Tile", [2, 3], consts=[np.array([2, 1], np.int64)]), None),
    "DepthToSpace-DCR": (one_node("DepthToSpace", [1, 8, 2, 3], attrs={"blocksize": 2}), None),
    "DepthToSpace-CRD": (one_node("DepthToSpace", [1, 8, 2, 3], attrs={"blocksize": 2, "mode": "CRD"}), None),
    "SpaceToDepth": (one_node("SpaceToDepth", [2, 3, 4, 6], attrs={"blocksize": 2}), None),
    "Slice-negative-steps": (one_node("Slice", [6, 5, 4], consts=[np.array([5, -1]), np.array([0, -100]),
                                                                  np.array([0, 2]), np.array([-2, -1])]), None),
    "Reshape-folded-shape": (_folded_reshape(), None),
    "Gather-runtime-axis0": _gather_runtime([5, 4], [3], 0, [4, 0, 2]),
    "Gather-runtime-axis1-2d-indices": _gather_runtime([3, 5, 2], [2, 2], 1, [[1, 4], [0, 0]]),
    "Gather-runtime-negative-indices": _gather_runtime([3, 5, 2], [2, 2], 1, [[-1, 4], [-5, 0]]),
}


def _split(opset, sizes=None, outputs=2, **attrs):
    """`Split(x [3, 8], axis=1)` at `opset`, sizes as the `split` input (13 on) when given as an array."""
    inputs, inits = ["x"], []
    if sizes is not None:
        inputs.append("sizes")
        inits.append(numpy_helper.from_array(np.asarray(sizes, np.int64), "sizes"))
    names = [f"y{i}" for i in range(outputs)]
    node = helper.make_node("Split", inputs, names, axis=1, **attrs)
    graph = helper.make_graph([node], "split", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


# one case per schema version form of the rules split by version (shape_ops.py squeeze_1 / squeeze, ...)
VERSIONS = {
    "Squeeze-1-axes-attribute": (one_node("Squeeze", [3, 1, 4, 1], attrs={"axes": [3]}, opset=9), "squeeze_1"),
    "Unsqueeze-1-axes-attribute": (one_node("Unsqueeze", [3, 4], attrs={"axes": [1]}, opset=9), "unsqueeze_1"),
    "DepthToSpace-1-DCR": (one_node("DepthToSpace", [1, 8, 2, 3], attrs={"blocksize": 2}, opset=9),
                           "depth_to_space"),
    "Squeeze-11-axes-attribute": (one_node("Squeeze", [3, 1, 4], attrs={"axes": [-2]}, opset=11), "squeeze_1"),
    "Squeeze-13-no-axes": (one_node("Squeeze", [3, 1, 4, 1], opset=13), "squeeze"),
    "Unsqueeze-11-axes-attribute": (one_node("Unsqueeze", [3, 4], attrs={"axes": [0, -1]}, opset=11), "unsqueeze_1"),
    "Unsqueeze-13-axes-input": (one_node("Unsqueeze", [3, 4], consts=[np.array([-1])], opset=13), "unsqueeze"),
    "Split-2-split-attribute": (_split(9, split=[3, 5]), "split_2"),
    "Split-11-equal-parts": (_split(11), "split_2"),
    "Split-13-split-input": (_split(13, np.array([6, 2])), "split_13"),
    "Split-13-equal-parts": (_split(13, outputs=4), "split_13"),
    "Split-18-num-outputs-uneven": (_split(18, outputs=3, num_outputs=3), "split_18"),
}


@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_each_version_rule_matches_onnxruntime(name):
    from onnx2ttnn.lowering import lookup

    model, rule = VERSIONS[name]
    node = model.graph.node[0]
    assert lookup("", node.op_type, model.opset_import[0].version).fn.__name__ == rule
    report = verify(model, dtype="fp32")
    assert report.passed, report.text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_onnxruntime(name):
    model, inputs = CASES[name]
    report = verify(model, inputs=inputs, dtype="fp32")
    assert report.passed, report.text()


def test_empty_slice_output_is_computed_on_the_host():
    model = one_node("Slice", [4, 3], consts=[np.array([5]), np.array([9]), np.array([0])])
    outputs, leaks, source = run(model, {"x": np.ones((4, 3), np.float32)})
    assert tuple(outputs["y"].shape) == (0, 3) and leaks == []
    assert "host_slice(x" in source and "ttnn.slice(" not in source


def test_empty_slice_read_by_a_device_op_is_refused():
    nodes = [helper.make_node("Slice", ["x", "s", "e"], ["t"]), helper.make_node("Relu", ["t"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array([5]), "s"), numpy_helper.from_array(np.array([9]), "e")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(ConversionError, match=r"'t' is empty \(shape \[0, 3\].*ttnn has no empty tensors"):
        convert(model, dtype="fp32")


def test_gather_runtime_indices_need_float_data():
    node = helper.make_node("Gather", ["x", "ids"], ["y"], axis=0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.INT32, [5]),
                                            helper.make_tensor_value_info("ids", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(ConversionError, match="needs float data"):
        verify(model, dtype="fp32", fallback=False)
    # the host fallback takes the node over
    report = verify(model, dtype="fp32", inputs={"x": np.arange(5, dtype=np.int32) * 3,
                                                "ids": np.array([4, 1], np.int64)})
    assert report.passed, report.text()


def test_gather_wraps_negative_runtime_indices_in_int32():
    model, inputs = _gather_runtime([6, 4], [3], 0, [-1, 2, -6])
    outputs, leaks, source = run(model, inputs)
    assert leaks == [] and "dtype=ttnn.int32" in source and "ttnn.where(" in source
    np.testing.assert_array_equal(outputs["y"].numpy(), inputs["x"][[5, 2, 0]])
    report = verify(model, inputs=inputs, dtype="bf16")  # the indices stay exact int32 in bf16 programs too
    assert report.passed, report.text()


def test_negative_indices_another_op_reads_too_are_wrapped_on_the_device():
    """An index input a Gather and an Add read: its upload stays int32 for the Add (a uint32 one refused every
    negative value), and the Gather of a constant table wraps it on the device."""
    nodes = [helper.make_node("Gather", ["table", "idx"], ["y"], axis=0), helper.make_node("Add", ["idx", "one"], ["z"])]
    table = rng.standard_normal((4, 8)).astype(np.float32)
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("idx", TensorProto.INT64, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8]),
                               helper.make_tensor_value_info("z", TensorProto.INT64, [3])],
                              [numpy_helper.from_array(table, "table"),
                               numpy_helper.from_array(np.array(1, np.int64), "one")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    inputs = {"idx": np.array([-1, 0, -4], np.int64)}
    outputs, leaks, source = run(model, inputs)
    assert leaks == [] and "index_input(" not in source and "ttnn.where(" in source
    np.testing.assert_allclose(outputs["y"].numpy(), table[[3, 0, 0]], rtol=1e-6)
    np.testing.assert_array_equal(outputs["z"].numpy(), [0, 1, -3])
    report = verify(model, inputs=inputs, dtype="bf16")
    assert report.passed, report.text()


def test_gather_typecasts_indices_computed_as_floats_to_uint32():
    """Integer indices a float op computed (Where over a Sub of int64 targets) live on the device as floats:
    Gather wraps them and typecasts them to the uint32 ttnn.embedding needs (runtime and constant tables)."""
    nodes = [helper.make_node("Sub", ["t", "t"], ["zeros"]),
             helper.make_node("Equal", ["t", "ignore"], ["mask"]),
             helper.make_node("Where", ["mask", "zeros", "t"], ["ids"]),
             helper.make_node("Gather", ["x", "ids"], ["y"], axis=0),
             helper.make_node("Gather", ["table", "ids"], ["z"], axis=0)]
    table = rng.standard_normal((5, 3)).astype(np.float32)
    inits = [numpy_helper.from_array(np.array(-1, np.int64), "ignore"), numpy_helper.from_array(table, "table")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 2]),
                                           helper.make_tensor_value_info("t", TensorProto.INT64, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    inputs = {"x": rng.standard_normal((5, 2)).astype(np.float32), "t": np.array([3, -1, 4, -2], np.int64)}
    outputs, leaks, source = run(model, inputs)
    assert leaks == [] and forward_text(source).count("ttnn.embedding(") == 2 and "dtype=ttnn.uint32" in source
    ids = np.where(inputs["t"] == -1, 0, inputs["t"])
    np.testing.assert_allclose(outputs["y"].numpy(), inputs["x"][ids], rtol=1e-6)
    np.testing.assert_allclose(outputs["z"].numpy(), table[ids], rtol=1e-6)


def test_a_gather_index_out_of_range_once_folded_is_refused_not_wrapped():
    # the index is constant only after fold-constants (the frontend's check sees an Add); taken modulo the
    # axis it was row 50 % 4 = 2
    nodes = [helper.make_node("Add", ["a", "b"], ["i"]), helper.make_node("Gather", ["x", "i"], ["y"], axis=0)]
    inits = [numpy_helper.from_array(np.array([48], np.int64), "a"), numpy_helper.from_array(np.array([2], np.int64), "b")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(ConversionError, match=r"index 50 is out of range for axis 0 of size 4 \(valid: -4 to 3\)"):
        convert(model, fallback=False)


@pytest.mark.parametrize("readers", ["echoed", "axis1", "two_heights"])
def test_negative_input_ids_with_other_readers_are_wrapped_on_the_device(readers):
    """Found in review: ids also a graph output, also the indices of a Gather along axis 1, or of tables of two
    heights, took the host wrap's uint32 upload path without its wrap (the lowering and decompose-layouts
    disagreed on "read only as indices") and the program refused -1.  Now they are wrapped on the device."""
    import numpy as np
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    from onnx2ttnn.verify import verify

    rng = np.random.default_rng(3)
    inits = [nh.from_array(rng.standard_normal((10, 4)).astype(np.float32), "t1")]
    nodes = [h.make_node("Gather", ["t1", "ids"], ["g1"])]
    outputs = [h.make_tensor_value_info("g1", T.FLOAT, [1, 4, 4])]
    if readers == "echoed":
        outputs.append(h.make_tensor_value_info("ids", T.INT64, [1, 4]))
    elif readers == "axis1":
        inits.append(nh.from_array(rng.standard_normal((4, 10)).astype(np.float32), "t3"))
        nodes.append(h.make_node("Gather", ["t3", "ids"], ["g3"], axis=1))
        outputs.append(h.make_tensor_value_info("g3", T.FLOAT, [4, 1, 4]))
    else:
        inits.append(nh.from_array(rng.standard_normal((8, 4)).astype(np.float32), "t2"))
        nodes.append(h.make_node("Gather", ["t2", "ids"], ["g2"]))
        outputs.append(h.make_tensor_value_info("g2", T.FLOAT, [1, 4, 4]))
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("ids", T.INT64, [1, 4])], outputs, inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    report = verify(model, inputs={"ids": np.array([[-1, -8, 3, 0]], np.int64)}, dtype="fp32")
    assert report.passed, report.text()
