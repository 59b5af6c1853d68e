"""Elementwise lowering rules (lowering/eltwise.py) on one-node models: simulator (fp32) vs onnxruntime.

Each test runs the generated program on the simulator with chosen inputs and compares values (exactly for
integer and boolean results), checks which ttnn ops the rule emitted, and that the program fits the real
ttnn API manifest.
"""
from __future__ import annotations

import importlib.util

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.sim import runtime
from tests.program_run import forward_text, run as run_program
from tests.ttnn_api import check_source

ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32,
             np.dtype(np.int64): TensorProto.INT64, np.dtype(np.bool_): TensorProto.BOOL,
             np.dtype(np.uint8): TensorProto.UINT8}


def model(op, inputs: dict, attrs=None, consts: dict | None = None, opset=18, out_type=None):
    """`y = op(*inputs, *consts)`: runtime inputs given as example arrays, constants as initializers.
    An input name of "" is an omitted optional input."""
    consts = consts or {}
    names = list(inputs) + list(consts)
    node = helper.make_node(op, names, ["y"], **(attrs or {}))
    graph_inputs = [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype], a.shape) for n, a in inputs.items() if n]
    inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in consts.items() if n]
    out = helper.make_tensor_value_info("y", out_type if out_type is not None else TensorProto.UNDEFINED, None)
    graph = helper.make_graph([node], op, graph_inputs, [out], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return onnx.shape_inference.infer_shapes(m)


def run(m, feeds: dict, tmp_path):
    """(simulator output, onnxruntime output, program source) for a one-output model."""
    path = str(tmp_path / "model_ttnn.py")
    conversion = convert(m, path, dtype="fp32")
    conversion.write(path)
    spec = importlib.util.spec_from_file_location(f"prog_{tmp_path.name}", path)
    program = importlib.util.module_from_spec(spec)
    with runtime.install():
        spec.loader.exec_module(program)
    runtime.configure("n150")
    with runtime.install():
        import ttnn

        device = ttnn.open_device(device_id=0, l1_small_size=16384)
        params = program.load_parameters(device)
        args = {ident: torch.from_numpy(np.ascontiguousarray(feeds[name]))
                for ident, (name, _, _) in program.INPUTS.items()}
        got = program.forward(device, params, **args)["y"].numpy()
        ttnn.close_device(device)
    session = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(["y"], {k: v for k, v in feeds.items() if k})[0]
    return got, want, conversion.source


def check(m, feeds, tmp_path, *, exact=False, calls=(), absent=()):
    got, want, source = run(m, feeds, tmp_path)
    assert got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for call in calls:
        assert f"ttnn.{call}(" in source, f"expected ttnn.{call} in the program"
    for call in absent:
        assert f"ttnn.{call}(" not in source, f"did not expect ttnn.{call} in the program"
    assert check_source(source) == []
    return source


rng = np.random.default_rng(0)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- variadic ops -----------------------------------------------------------------------------------

@pytest.mark.parametrize("op,ttnn_op", [("Max", "maximum"), ("Min", "minimum"), ("Sum", "add")])
def test_variadic_three_inputs_broadcast(tmp_path, op, ttnn_op):
    feeds = {"a": f32(2, 3, 4), "b": f32(4), "c": f32(3, 1)}
    source = check(model(op, feeds), feeds, tmp_path, calls=[ttnn_op])
    assert forward_text(source).count(f"ttnn.{ttnn_op}(") == 2


@pytest.mark.parametrize("op", ["Max", "Min", "Sum", "Mean"])
def test_variadic_one_input_is_passed_through(tmp_path, op):
    feeds = {"a": f32(3, 5)}
    check(model(op, feeds), feeds, tmp_path, exact=True, absent=["maximum", "minimum", "add", "multiply"])


def test_mean_divides_the_sum(tmp_path):
    feeds = {"a": f32(2, 8), "b": f32(2, 8), "c": f32(8)}
    check(model("Mean", feeds), feeds, tmp_path, calls=["add", "multiply"])


def test_max_with_integer_inputs(tmp_path):
    feeds = {"a": rng.integers(-50, 50, (3, 4)).astype(np.int32), "b": rng.integers(-50, 50, (4,)).astype(np.int32)}
    check(model("Max", feeds, out_type=TensorProto.INT32), feeds, tmp_path, exact=True)


# ---- integer semantics ------------------------------------------------------------------------------

def test_integer_div_truncates_before_the_next_op(tmp_path):
    """The quotient is truncated on the device, not only when the output is converted to int."""
    nodes = [helper.make_node("Div", ["a", "b"], ["q"]), helper.make_node("Mul", ["q", "two"], ["y"])]
    graph = helper.make_graph(nodes, "div", [helper.make_tensor_value_info(n, TensorProto.INT32, [1, 4])
                                             for n in ("a", "b")],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 4])],
                              [numpy_helper.from_array(np.array(2, np.int32), "two")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    feeds = {"a": np.array([[7, -7, 9, 1]], np.int32), "b": np.array([[2, 2, 3, 4]], np.int32)}
    source = check(m, feeds, tmp_path, exact=True)
    assert "rounding_mode='trunc'" in source


def test_float_div_by_constant_is_a_multiplication(tmp_path):
    feeds = {"a": f32(3, 40)}
    check(model("Div", feeds, consts={"d": np.float32(4.0)}), feeds, tmp_path, calls=["multiply"],
          absent=["divide"])


@pytest.mark.parametrize("dtype,fmod,ttnn_op", [(np.int32, 0, "remainder"), (np.float32, 1, "fmod"),
                                                 (np.int32, 1, "fmod")])
def test_mod_sign_conventions(tmp_path, dtype, fmod, ttnn_op):
    """fmod=0: the result takes the divisor's sign; fmod=1: the dividend's (float fmod=0 needs opset 28)."""
    feeds = {"a": np.array([-4, 7, 5, 4, -7, 8], dtype), "b": np.array([3, -3, 8, -3, 3, 5], dtype)}
    check(model("Mod", feeds, attrs={"fmod": fmod}, opset=13), feeds, tmp_path, exact=True, calls=[ttnn_op])


def test_integer_mod_by_scalar_constant(tmp_path):
    feeds = {"a": np.array([[-5, 7, 12, -13]], np.int32)}
    check(model("Mod", feeds, consts={"b": np.array([4], np.int32)}, opset=13), feeds, tmp_path, exact=True,
          calls=["remainder"])


def test_xor_on_booleans_with_broadcasting(tmp_path):
    feeds = {"a": rng.random((3, 4, 5)) > 0.5, "b": rng.random((5,)) > 0.5}
    check(model("Xor", feeds), feeds, tmp_path, exact=True, calls=["logical_xor"])


# ---- clip ---------------------------------------------------------------------------------------------

def test_clip_with_runtime_bounds(tmp_path):
    feeds = {"x": f32(3, 8, scale=3), "lo": np.array(-1.0, np.float32), "hi": np.array(0.5, np.float32)}
    check(model("Clip", feeds), feeds, tmp_path, exact=True, calls=["maximum", "minimum"])


def test_clip_with_only_a_runtime_max(tmp_path):
    feeds = {"x": f32(3, 8, scale=3), "": np.zeros(0, np.float32), "hi": np.array(0.5, np.float32)}
    check(model("Clip", feeds), feeds, tmp_path, exact=True, calls=["minimum"], absent=["maximum"])


def test_clip_min_greater_than_max_gives_max(tmp_path):
    feeds = {"x": f32(3, 8), "lo": np.array(2.0, np.float32), "hi": np.array(1.0, np.float32)}
    check(model("Clip", feeds), feeds, tmp_path, exact=True)


def test_clip_without_bounds_is_identity(tmp_path):
    feeds = {"x": f32(4, 4)}
    check(model("Clip", feeds), feeds, tmp_path, exact=True, absent=["clip"])


# ---- unaries and predicates ---------------------------------------------------------------------------

def test_round_halves_to_even(tmp_path):
    feeds = {"x": np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6, 3.0], np.float32)}
    check(model("Round", feeds), feeds, tmp_path, exact=True, calls=["round"])


@pytest.mark.parametrize("op,low,high", [("Tan", -1.2, 1.2), ("Asin", -0.9, 0.9), ("Acos", -0.9, 0.9),
                                         ("Atan", -3, 3), ("Sinh", -3, 3), ("Cosh", -3, 3), ("Asinh", -3, 3),
                                         ("Acosh", 1.1, 4), ("Atanh", -0.9, 0.9)])
def test_trigonometric_unaries(tmp_path, op, low, high):
    feeds = {"x": rng.uniform(low, high, (4, 9)).astype(np.float32)}
    check(model(op, feeds), feeds, tmp_path, calls=[op.lower()])


@pytest.mark.parametrize("attrs,ttnn_op", [({}, "isinf"), ({"detect_negative": 0}, "isposinf"),
                                           ({"detect_positive": 0}, "isneginf")])
def test_isinf_variants(tmp_path, attrs, ttnn_op):
    feeds = {"x": np.array([-np.inf, np.inf, np.nan, 1.0, -2.0, np.inf], np.float32)}
    check(model("IsInf", feeds, attrs=attrs), feeds, tmp_path, exact=True, calls=[ttnn_op])


@pytest.mark.parametrize("target", [TensorProto.FLOAT, TensorProto.INT32])
def test_castlike_follows_the_second_input_type(tmp_path, target):
    like = np.zeros(1, np.float32 if target == TensorProto.FLOAT else np.int32)
    feeds = {"x": np.array([1.0, 2.0, -3.0, 4.0], np.float32), "like": like}
    got, want, _ = run(model("CastLike", feeds), feeds, tmp_path)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_comparison_of_integers_returns_the_mask_in_the_declared_float_dtype():
    """ttnn.eq on an integer tensor returns its input's dtype unless told: the program asks for the float dtype
    the IR declares, so a Where and a ReduceSum (float only) can read the mask (NLL loss expansions)."""
    nodes = [helper.make_node("Cast", ["x"], ["i"], to=TensorProto.INT64),
             helper.make_node("Equal", ["i", "one"], ["mask"]),
             helper.make_node("Where", ["mask", "zero", "onef"], ["w"]),
             helper.make_node("ReduceSum", ["w"], ["y"], keepdims=0)]
    inits = [numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
             numpy_helper.from_array(np.array(1.0, np.float32), "onef")]
    graph = helper.make_graph(nodes, "mask_sum", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.array([[1, 0, 1, 2], [3, 1, 1, 0], [0, 0, 4, 1]], np.float32)
    outputs, leaks, source = run_program(m, {"x": x})
    (eq_line,) = [line for line in forward_text(source).splitlines() if "ttnn.eq(" in line]
    assert leaks == [] and "dtype=ttnn.float32" in eq_line
    np.testing.assert_allclose(outputs["y"].numpy(), np.float32((x != 1).sum()))
