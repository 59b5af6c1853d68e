"""Pools (lowering/pool.py): exact window lowering in fp32, native ttnn pools when the context says bf16."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from onnx2ttnn.lowering import lookup
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.verify import verify
from tests.lowering._nodes import model, ttnn_ops

CASES = {
    "max-pads-strides": model("MaxPool", {"x": [1, 3, 9, 9]}, attrs={"kernel_shape": [3, 3], "strides": [2, 2],
                                                                   "pads": [1, 1, 1, 1]}),
    "max-same-upper": model("MaxPool", {"x": [1, 2, 8, 8]}, attrs={"kernel_shape": [2, 2],
                                                                 "auto_pad": "SAME_UPPER"}),
    "max-1d": model("MaxPool", {"x": [1, 3, 16]}, attrs={"kernel_shape": [3], "strides": [2]}),
    "max-3d-dilated-ceil": model("MaxPool", {"x": [1, 1, 7, 7, 7]}, attrs={"kernel_shape": [2, 2, 2],
                                 "dilations": [2, 2, 2], "strides": [2, 2, 2], "ceil_mode": 1}),
    "avg-exclude-pad": model("AveragePool", {"x": [1, 2, 7, 7]}, attrs={"kernel_shape": [3, 3],
                                                                      "pads": [1, 1, 1, 1]}),
    "avg-include-pad-asym": model("AveragePool", {"x": [1, 2, 7, 7]}, attrs={"kernel_shape": [3, 3],
                                  "pads": [0, 1, 2, 1], "count_include_pad": 1}),
    "avg-ceil": model("AveragePool", {"x": [1, 1, 6, 6]}, attrs={"kernel_shape": [3, 3], "strides": [2, 2],
                                                               "ceil_mode": 1}),
    "avg-dilated": model("AveragePool", {"x": [1, 1, 6, 6]}, attrs={"kernel_shape": [2, 2],
                                                                  "dilations": [2, 2]}, opset=19),
    "global-max": model("GlobalMaxPool", {"x": [2, 3, 5, 4]}),
    "global-avg": model("GlobalAveragePool", {"x": [2, 3, 5, 4]}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pool_matches_onnxruntime(name):
    report = verify(CASES[name], dtype="fp32")
    assert report.passed, report.text()


def test_maxpool_indices_output():
    m = model("MaxPool", {"x": [2, 2, 6, 6]}, attrs={"kernel_shape": [3, 3], "strides": [2, 2],
                                                   "pads": [1, 1, 1, 1]},
              outputs=("y", "i"), out_types=[TensorProto.FLOAT, TensorProto.INT64])
    report = verify(m, dtype="fp32")
    assert report.passed, report.text()


def test_fp32_pools_use_no_bf16_only_ttnn_pool():
    """Real max_pool2d / avg_pool2d refuse float32 input ('Only BFLOAT16 supported for now')."""
    ops = ttnn_ops(CASES["max-pads-strides"], dtype="fp32") + ttnn_ops(CASES["avg-exclude-pad"], dtype="fp32")
    assert "max_pool2d" not in ops and "avg_pool2d" not in ops
    assert ops.count("slice") == 18 and "maximum" in ops


def _lowered(node_model, dtype):
    """The ttnn ops one rule emits with a context that reports `dtype`."""
    import onnx_graphsurgeon as gs
    import onnx

    graph = gs.import_onnx(onnx.shape_inference.infer_shapes(node_model))
    ctx = LoweringContext(dtype)
    for t in graph.inputs:
        ctx.bind_input(t, gs.Variable(t.name + "_dev", dtype=np.float32, shape=t.shape))
    node = graph.nodes[0]
    ctx.source = node.name
    lookup("", node.op, 18).fn(ctx, node)
    return [n.op for n in ctx.nodes if not n.attrs.get("_param")]


def test_bf16_context_uses_native_pools_where_they_fit():
    assert "max_pool2d" in _lowered(CASES["max-pads-strides"], "bf16")
    assert "avg_pool2d" in _lowered(CASES["avg-include-pad-asym"], "bf16")
    assert "avg_pool2d" not in _lowered(CASES["avg-dilated"], "bf16")  # avg_pool2d has no dilation
    assert "max_pool2d" not in _lowered(CASES["max-1d"], "bf16")
    assert "max_pool2d" not in _lowered(CASES["max-pads-strides"], "fp32")


def test_bf16_programs_use_the_native_pools_end_to_end(cnn_path):
    from onnx2ttnn import convert

    assert "ttnn.max_pool2d(" in convert(cnn_path, dtype="bf16").source
    assert "ttnn.max_pool2d(" not in convert(cnn_path, dtype="fp32").source  # exact window lowering


@pytest.mark.parametrize("op", ["AveragePool", "MaxPool"])
@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_a_window_over_the_whole_input_is_a_global_pool(op, dtype):
    """EfficientNet's pooler: AvgPool2d(kernel 320, ceil_mode) on a 2x2 map. Real ttnn's pools crash on a
    window larger than the input, and 320x320 window slices would be absurd: it is a global mean / max."""
    from onnx2ttnn import convert
    from onnx2ttnn.verify import verify
    from tests.lowering._nodes import model

    m = model(op, {"x": [1, 8, 2, 2]}, attrs={"kernel_shape": [32, 32], "strides": [32, 32], "ceil_mode": 1},
              out_shape=[1, 8, 1, 1])
    source = convert(m, dtype=dtype).source
    assert "pool2d(" not in source.split("def forward", 1)[1] and "ttnn.slice(" not in source
    report = verify(m, dtype=dtype)
    assert report.passed, report.text()


def test_a_max_pool_window_wholly_in_the_padding_is_float32s_lowest_value():
    """Found by the fuzzer (seed 7 case 169): the padding was -inf, onnxruntime gives -3.4028235e38 for a window
    that holds no input element (here the dilated window of width 1 + pads 1 and 1 taps only the pads)."""
    import onnx
    from onnx import TensorProto, helper

    from tests.program_run import run

    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[1, 2], dilations=[1, 2], pads=[0, 1, 0, 1],
                            strides=[1, 2])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2, 1])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    outputs, leaks, _ = run(m, {"x": np.ones((1, 1, 2, 1), np.float32)})
    assert leaks == []
    np.testing.assert_array_equal(outputs["y"].numpy(), np.full((1, 1, 2, 1), np.finfo(np.float32).min))


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_a_dilated_window_larger_than_the_input_takes_only_its_taps(op):
    """Found by the fuzzer (seed 47 case 189): kernel [2, 2], dilations [1, 2], strides [2, 2] over a 1 x 2 map
    (onnx's inference truncates to one output element).  The window taps column 0 only (column 2 lies past the
    input); onnxruntime's max is that element, the program took a global max of both columns."""
    import onnxruntime

    from tests.program_run import run

    m = model(op, {"x": [3, 1, 1, 2]}, attrs={"kernel_shape": [2, 2], "dilations": [1, 2], "strides": [2, 2]},
              opset=19)
    x = np.array([[-1.0, 2.0], [3.0, -4.0], [0.5, 0.25]], np.float32).reshape(3, 1, 1, 2)
    want = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]
    np.testing.assert_array_equal(want.reshape(-1), [-1.0, 3.0, 0.5])
    outputs, leaks, _ = run(m, {"x": x})
    np.testing.assert_array_equal(outputs["y"].numpy(), want)
    assert leaks == []


@pytest.mark.parametrize("opset", [13, 19])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2], "strides": [2, 2]},  # the whole 1 x 1 input: was a global mean
    {"kernel_shape": [3, 3], "strides": [3, 3], "pads": [1, 1, 0, 0]},  # 3 taps over 1 + 1 padded rows
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
])
@pytest.mark.parametrize("include", [0, 1])
def test_an_average_window_over_the_end_of_the_padded_input_matches_onnxruntime(opset, attrs, include):
    """Found by the fuzzer (seed 31 case 355): a 2 x 2 AveragePool-11 with count_include_pad over a 1 x 1 map
    (onnx's inference truncates (1 - 2) / 2 + 1 to one output element).  Before opset 19 onnxruntime divides by
    the whole kernel (x / 4), from 19 on by the taps within the padded input (x / 1), as it always does for
    ceil_mode; the program was a global mean (x / 1) at every opset."""
    import onnxruntime

    from tests.program_run import run

    shape = [1, 2, 1, 1] if attrs["kernel_shape"] == [2, 2] else [1, 2, 1, 2]
    m = model("AveragePool", {"x": shape}, attrs={**attrs, "count_include_pad": include}, opset=opset)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32) + 2  # (verify's PCC is blind to x / 4)
    want = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]
    outputs, leaks, _ = run(m, {"x": x})
    np.testing.assert_allclose(outputs["y"].numpy(), want, rtol=1e-6)
    assert leaks == []
