"""decompose-layouts (onnx2ttnn/passes/decompose_layouts.py): the dtype argument of comparisons."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.ir.graph import TTNNRef, layout_of


def _compare_model(cast_to_int: bool):
    nodes = [helper.make_node("Greater", ["i" if cast_to_int else "x", "two"], ["y"])]
    if cast_to_int:
        nodes.insert(0, helper.make_node("Cast", ["x"], ["i"], to=TensorProto.INT32))
    two = np.array(2, np.int32 if cast_to_int else np.float32)
    graph = helper.make_graph(nodes, "cmp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.BOOL, [2, 8])],
                              [numpy_helper.from_array(two, "two")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _node(conversion, op):
    (node,) = [n for n in conversion.module.graph.nodes if n.op == op]
    return node


def test_comparison_of_an_integer_tensor_asks_for_the_output_dtype():
    for dtype, ttnn_dtype in (("fp32", "float32"), ("bf16", "bfloat16")):
        gt = _node(convert(_compare_model(True), dtype=dtype), "gt")
        assert layout_of(gt.inputs[0]).dtype == "i32"
        assert gt.attrs["dtype"] == TTNNRef(ttnn_dtype) and layout_of(gt.outputs[0]).ttnn_dtype == ttnn_dtype


def test_comparison_in_its_input_dtype_has_no_dtype_argument():
    gt = _node(convert(_compare_model(False), dtype="fp32"), "gt")
    assert layout_of(gt.inputs[0]).dtype == layout_of(gt.outputs[0]).dtype == "f32"
    assert "dtype" not in gt.attrs


def pooled_model(channels: int):
    """x [1, channels, 4, 4] -> Relu -> GlobalAveragePool: a [1, channels, 1, 1] output, 32x32 tiles of one value."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("GlobalAveragePool", ["r"], ["y"])]
    graph = helper.make_graph(nodes, "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 1, 1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _download_input(conversion):
    return _node(conversion, "to_torch").inputs[0]


def test_padded_download_is_read_back_in_row_major():
    """[1, 1024, 1, 1] in tiles is 2 MiB, in rows 2 KiB: the program converts it on the device first, and the
    simulator's result still matches onnxruntime."""
    from onnx2ttnn.verify import verify

    model = pooled_model(1024)
    conversion = convert(model)
    read = _download_input(conversion)
    assert layout_of(read).page == "row_major" and read.inputs[0].op == "to_layout"
    assert layout_of(read.inputs[0].inputs[0]).page == "tile"
    assert "layout=ttnn.ROW_MAJOR_LAYOUT" in conversion.source
    x = np.random.default_rng(0).standard_normal((1, 1024, 4, 4)).astype(np.float32)
    assert verify(model, conversion=conversion, inputs={"x": x}).passed


def test_small_download_keeps_its_tiles():
    """[1, 16, 1, 1]: 32 KiB of tiles, less than one more call's launch and dispatch is worth at the download rate."""
    read = _download_input(convert(pooled_model(16)))
    assert layout_of(read).page == "tile" and read.inputs[0].op != "to_layout"


def _gather_model(extra_reader: bool):
    """y = data[idx] (4 rows), idx an int64 graph input; `extra_reader`: idx + 1 is an output too."""
    nodes = [helper.make_node("Gather", ["data", "idx"], ["y"], axis=0)]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8])]
    if extra_reader:
        nodes.append(helper.make_node("Add", ["idx", "one"], ["next"]))
        outputs.append(helper.make_tensor_value_info("next", TensorProto.INT64, [3]))
    graph = helper.make_graph(nodes, "gather", [helper.make_tensor_value_info("idx", TensorProto.INT64, [3])], outputs,
                              [numpy_helper.from_array(np.arange(32, dtype=np.float32).reshape(4, 8), "data"),
                               numpy_helper.from_array(np.array(1, np.int64), "one")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_an_upload_read_only_as_gather_indices_is_checked_and_wrapped_against_the_rows():
    upload = next(n for n in convert(_gather_model(False)).module.graph.nodes if n.attrs.get("_input") == "idx")
    assert layout_of(upload.outputs[0]).dtype == "u32"
    assert upload.attrs["_index_rows"] == 4 and "_int_range" not in upload.attrs


def test_an_upload_other_ops_read_keeps_its_values_and_the_integer_range_check():
    """(The Gather wraps such indices on the device: tests/lowering/test_shape_tensor_ops.py.)"""
    (upload,) = (n for n in convert(_gather_model(True)).module.graph.nodes if n.attrs.get("_input") == "idx")
    assert layout_of(upload.outputs[0]).dtype == "i32" and "_index_rows" not in upload.attrs
    assert upload.attrs["_int_range"] == (-2**31, 2**31 - 1)
