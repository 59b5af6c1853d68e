"""Host fallbacks on small models against onnxruntime (simulator): each family, and how fallbacks meet the
device: NHWC producers, integer results read by ttnn ops, scalars, large constants, graph inputs, bf16."""
from __future__ import annotations

import re

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn import convert
from onnx2ttnn.verify import verify
from tests.ttnn_api import check_source

rng = np.random.default_rng(0)
f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64


def model(nodes, inputs, outputs, inits=(), opset=18):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def relu_then(op, x_shape, out_shape, out_type=FLOAT, attrs=None, extra=(), inits=(), opset=18, n_out=1):
    """`y = op(relu(x) - 0.5, *extra)`: the fallback reads a device tensor (not the program's argument)."""
    outs = ["y"] + [f"y{i}" for i in range(1, n_out)]
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Sub", ["r", "half"], ["s"]),
             helper.make_node(op, ["s", *extra], outs, **(attrs or {}))]
    shapes = out_shape if isinstance(out_shape, list) and out_shape and isinstance(out_shape[0], tuple) else \
        [(out_type, out_shape)]
    return model(nodes, [("x", FLOAT, x_shape)], [(o, t, s) for o, (t, s) in zip(outs, shapes)],
                 [("half", np.float32(0.5)), *inits], opset)


CASES = {
    "Hardmax": relu_then("Hardmax", [3, 5, 7], [3, 5, 7], attrs={"axis": 1}, opset=13),
    "Hardmax-2d-coerced": relu_then("Hardmax", [3, 5, 7], [3, 5, 7], attrs={"axis": 1}, opset=11),
    "Hardmax-1-2d-coerced": relu_then("Hardmax", [3, 5, 7], [3, 5, 7], attrs={"axis": 2}, opset=9),
    "LpNormalization-p1": relu_then("LpNormalization", [4, 6], [4, 6], attrs={"axis": 0, "p": 1}),
    "MeanVarianceNormalization": relu_then("MeanVarianceNormalization", [2, 3, 4, 5], [2, 3, 4, 5]),
    "LRN": relu_then("LRN", [2, 6, 3, 3], [2, 6, 3, 3], attrs={"size": 3}),
    "Shrink": relu_then("Shrink", [4, 9], [4, 9], attrs={"lambd": 0.3, "bias": 0.1}),
    "TopK-smallest": relu_then("TopK", [4, 10], [(FLOAT, [4, 3]), (INT64, [4, 3])], extra=["k"],
                               attrs={"largest": 0}, inits=[("k", np.array([3], np.int64))], n_out=2),
    "ArgMax-last-index": relu_then("ArgMax", [4, 10], [4, 1], INT64, attrs={"axis": 1, "select_last_index": 1}),
    "CumSum-exclusive-reverse": relu_then("CumSum", [4, 10], [4, 10], extra=["axis"],
                                          attrs={"exclusive": 1, "reverse": 1},
                                          inits=[("axis", np.array(1, np.int64))]),
    "Trilu-lower": relu_then("Trilu", [2, 5, 5], [2, 5, 5], extra=["k"], attrs={"upper": 0},
                             inits=[("k", np.array(-1, np.int64))]),
    "ReduceLogSumExp": relu_then("ReduceLogSumExp", [3, 4, 5], [3, 1, 5], extra=["axes"],
                                 inits=[("axes", np.array([1], np.int64))]),
    "ReduceL2-to-scalar": relu_then("ReduceL2", [3, 4], [], attrs={"keepdims": 0}),
    "Det": relu_then("Det", [5, 3, 3], [5]),
    "Einsum-diagonal": relu_then("Einsum", [4, 4], [4], attrs={"equation": "ii->i"}),
    "GatherElements": relu_then("GatherElements", [3, 4], [3, 2], extra=["idx"], attrs={"axis": 1},
                                inits=[("idx", np.array([[0, -1], [2, 1], [3, 3]], np.int64))]),
    "ScatterND-add-large-updates": relu_then("ScatterND", [80, 3], [80, 3], extra=["idx", "upd"],
                                             attrs={"reduction": "add"},
                                             inits=[("idx", np.arange(40, dtype=np.int64).reshape(40, 1) * 2),
                                                    ("upd", f32(40, 3))]),
    "DepthToSpace-CRD": relu_then("DepthToSpace", [1, 8, 2, 3], [1, 2, 4, 6], attrs={"blocksize": 2, "mode": "CRD"}),
    "GridSample-border": model([helper.make_node("GridSample", ["x", "g"], ["y"], padding_mode="border")],
                               [("x", FLOAT, [1, 2, 4, 5]), ("g", FLOAT, [1, 3, 3, 2])], [("y", FLOAT, [1, 2, 3, 3])]),
    "SoftmaxCrossEntropyLoss-loss-only": model(
        [helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y"], reduction="sum", ignore_index=1)],
        [("x", FLOAT, [3, 5])], [("y", FLOAT, [])], [("t", np.array([0, 1, 4], np.int64))]),
    "Mod-fmod-of-graph-inputs": model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=1)],
                                          [("a", FLOAT, [3, 4]), ("b", FLOAT, [3, 4])], [("y", FLOAT, [3, 4])]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fallback_matches_onnxruntime(name):
    report = verify(CASES[name], dtype="fp32")
    assert report.passed, report.text()
    assert check_source(convert(CASES[name], dtype="fp32").source) == []


def test_fallback_reads_an_nhwc_producer_in_onnx_layout():
    """Conv leaves a flattened NHWC [1, 1, N*H*W, C] tensor: the fallback gets it back as NCHW on the host."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Hardmax", ["c"], ["h"], axis=1),
             helper.make_node("Relu", ["h"], ["y"])]
    m = model(nodes, [("x", FLOAT, [2, 3, 6, 5])], [("y", FLOAT, [2, 4, 6, 5])], [("w", f32(4, 3, 3, 3))])
    source = convert(m, dtype="fp32").source
    assert ".reshape((2, 6, 5, 4)).permute(0, 3, 1, 2)" in source
    report = verify(m, dtype="fp32")
    assert report.passed, report.text()


def test_integer_result_goes_to_the_device_as_int32():
    nodes = [helper.make_node("BitwiseNot", ["x"], ["i"]),  # no ttnn lowering: a host fallback
             helper.make_node("Mul", ["i", "i"], ["i2"]),  # integer arithmetic on the device: int32
             helper.make_node("Cast", ["i2"], ["f"], to=FLOAT),
             helper.make_node("Add", ["f", "x0"], ["y"])]
    m = model(nodes, [("x", TensorProto.INT32, [4, 10]), ("x0", FLOAT, [4, 10])], [("y", FLOAT, [4, 10])])
    source = convert(m, dtype="bf16").source
    assert "i = ttnn.from_torch(i_host.to(torch.int32), dtype=ttnn.int32" in source
    ints = np.arange(-20, 20, dtype=np.int32).reshape(4, 10)
    for dtype in ("fp32", "bf16"):
        report = verify(m, dtype=dtype, inputs={"x": ints, "x0": f32(4, 10)})
        assert report.passed, report.text()


def test_integer_result_only_cast_to_float_is_uploaded_as_floats():
    """A host fallback's integer result that only a Cast to float reads is uploaded in the float dtype: the
    upload rounds it as the cast would, and the cast goes away."""
    nodes = [helper.make_node("BitwiseNot", ["x"], ["i"]),
             helper.make_node("Cast", ["i"], ["f"], to=FLOAT),
             helper.make_node("Add", ["f", "x0"], ["y"])]
    m = model(nodes, [("x", TensorProto.INT32, [4, 10]), ("x0", FLOAT, [4, 10])], [("y", FLOAT, [4, 10])])
    source = convert(m, dtype="bf16").source
    assert "i = ttnn.from_torch(i_host.to(torch.bfloat16), dtype=ttnn.bfloat16" in source
    assert "ttnn.typecast(" not in source
    ints = np.arange(-20, 20, dtype=np.int32).reshape(4, 10)
    for dtype in ("fp32", "bf16"):
        report = verify(m, dtype=dtype, inputs={"x": ints, "x0": f32(4, 10)})
        assert report.passed, report.text()


def test_chained_fallbacks_stay_on_the_host_and_outputs_keep_their_dtype():
    nodes = [helper.make_node("Trilu", ["x"], ["v"]),  # Trilu, Hardmax, EyeLike: host fallbacks only
             helper.make_node("Hardmax", ["v"], ["y"]),
             helper.make_node("EyeLike", ["v"], ["i"], dtype=INT64)]
    m = model(nodes, [("x", FLOAT, [4, 10])], [("y", FLOAT, [4, 10]), ("i", INT64, [4, 10])])
    conversion = convert(m, dtype="fp32")
    source = conversion.source
    # x goes to Trilu as the argument and the host results are returned as they are: no device round trip
    assert "ttnn.to_torch(" not in source and "ttnn.from_torch(" not in source
    assert "host_hardmax(v_host" in source and "host_eye_like(v_host" in source and ".to(torch.int64)" in source
    assert conversion.fallback_counts() == {"EyeLike": 1, "Hardmax": 1, "Trilu": 1}
    assert "x_dev" not in source  # the input only the fallback reads is not uploaded
    report = verify(m, dtype="fp32")
    assert report.passed, report.text()


def test_programs_without_fallbacks_carry_no_helpers():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [("x", FLOAT, [2, 8])], [("y", FLOAT, [2, 8])])
    source = convert(m).source
    helpers = re.findall(r"^def (host_\w+)", source, re.M)
    assert "Host fallbacks" not in source and helpers == ["host_inputs"]  # (the traced run's staging helper)


def test_mean_variance_normalization_of_a_constant_slice_is_zero():
    """A slice of equal values: x - mean is 0 and so is the deviation; the spec's function gives 0 / (0 + 1e-9) = 0.
    A float32 mean of 16 copies of 0.1 is not 0.1, and the rounding divided by its own size gave -0.88 (fuzz seed
    109 case 1485: a convolution's padding-only column, its bias alone, 0.94; onnxruntime gives NaN there)."""
    import torch

    from onnx2ttnn.fallback.host.nn import host_mean_variance_normalization

    x = torch.full((8, 2, 2, 4), 0.1)
    x[:, :, :, 1:3] = torch.from_numpy(f32(8, 2, 2, 2))
    y = host_mean_variance_normalization(x, axes=[0, 2])
    assert y.dtype == torch.float32
    assert torch.equal(y[:, :, :, [0, 3]], torch.zeros(8, 2, 2, 2))
    middle = x[:, :, :, 1:3].double()
    centered = middle - middle.mean(dim=(0, 2), keepdim=True)
    want = centered / (centered.pow(2).mean(dim=(0, 2), keepdim=True).sqrt() + 1e-9)
    assert torch.allclose(y[:, :, :, 1:3].double(), want, rtol=1e-6, atol=1e-7)
