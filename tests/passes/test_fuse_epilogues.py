"""fuse-epilogues: linear + activation, add + relu and add + layer_norm / rms_norm fold into one call, the
fused program matches onnxruntime on the simulator with no leaks; near misses are declined with a reason."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn import convert
from onnx2ttnn.verify import verify

_RNG = np.random.default_rng(7)


def _model(nodes, inits: dict, x_shape, y_shapes: dict, opset: int = 20) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in y_shapes.items()],
        [numpy_helper.from_array(_array(v), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _array(value) -> np.ndarray:
    """Integer initialisers (shapes) as int64, the rest as float32."""
    value = np.asarray(value)
    return value.astype(np.int64) if value.dtype.kind in "iu" else value.astype(np.float32)


def _w(*shape):
    return _RNG.standard_normal(shape) * 0.2


def _linear_act(act: str, attrs=None, tail: bool = False):
    """x @ w + b, then `act`, then (unless `tail`) a matmul, so the activation is not at the output tail."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["hb"]),
             helper.make_node(act, ["hb"], ["y" if tail else "a"], **(attrs or {}))]
    if not tail:
        nodes.append(helper.make_node("MatMul", ["a", "w2"], ["y"]))
    return _model(nodes, {"w": _w(64, 96), "b": _w(96), "w2": _w(96, 32)}, [1, 32, 64],
                  {"y": [1, 32, 96 if tail else 32]})


def _converted(model, **options):
    conversion = convert(model, **options)
    return conversion, conversion.module.notes["fuse-epilogues"]


def _passes(model, **options):
    report = verify(model, **options)
    assert report.passed, report.text()
    assert "leaked buffers: 0" in report.text()


@pytest.mark.parametrize("act, ttnn_name", [("Relu", "relu"), ("Gelu", "gelu"), ("Sigmoid", "sigmoid")])
def test_linear_takes_the_activation_that_follows_it(act, ttnn_name):
    model = _linear_act(act)
    conversion, notes = _converted(model)
    assert notes["applied"] == {"matmul-activation": 1}
    assert f"activation={ttnn_name!r}" in conversion.source
    assert conversion.op_counts()[ttnn_name] == 0
    _passes(model)


def test_the_erf_gelu_pattern_fuses_as_the_accurate_gelu_and_verifies():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["hb"]),
             helper.make_node("Div", ["hb", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["hb", "a"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["y"])]
    inits = {"w": _w(64, 96), "b": _w(96), "sqrt2": np.float32(np.sqrt(2)), "one": np.float32(1),
             "half": np.float32(0.5)}
    model = _model(nodes, inits, [1, 32, 64], {"y": [1, 32, 96]}, opset=17)
    conversion, notes = _converted(model)
    assert notes["applied"] == {"matmul-activation": 1}
    assert "activation='gelu'" in conversion.source and "ttnn.gelu(" not in conversion.source
    _passes(model)


def test_a_sigmoid_at_the_output_tail_keeps_its_float32_input():
    """lowering/accuracy.py gives a tail sigmoid a float32 logit; the fused call would round it to bf16."""
    conversion, notes = _converted(_linear_act("Sigmoid", tail=True))
    assert notes["applied"] == {}
    assert notes["rejected"] == {"matmul-activation: linear computes in a pinned dtype (f32)": 1}
    assert "dtype=ttnn.float32" in conversion.source


def test_tanh_gelu_fuses_as_the_gelu_tanh_string():
    """linear(activation="gelu_tanh") runs gelu(variant=GeluVariant.Tanh)'s kernel (docs/ttnn-facts.md §22)."""
    model = _linear_act("Gelu", {"approximate": "tanh"})
    conversion, notes = _converted(model)
    assert notes["applied"] == {"matmul-activation": 1}
    assert "activation='gelu_tanh'" in conversion.source and "GeluVariant" not in conversion.source
    _passes(model)


def test_an_activation_with_arguments_no_string_names_is_not_fused():
    conversion, notes = _converted(_linear_act("LeakyRelu", {"alpha": 0.1}))
    assert notes["applied"] == {}
    assert conversion.op_counts()["leaky_relu"] == 1


def test_an_activation_whose_input_is_also_an_output_is_not_fused():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["y"])]
    model = _model(nodes, {"w": _w(64, 96), "b": _w(96)}, [1, 32, 64], {"y": [1, 32, 96], "hb": [1, 32, 96]})
    conversion, notes = _converted(model)
    assert notes["applied"] == {}
    assert conversion.op_counts()["relu"] == 1
    _passes(model)


def _residual_norm(norm: str, with_bias: bool = True):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "x"], ["r"])]
    inits = {"w": _w(64, 64), "g": 1 + _w(64)}
    if norm == "LayerNormalization":
        inputs = ["r", "g", "beta"] if with_bias else ["r", "g"]
        inits["beta"] = _w(64)
        nodes.append(helper.make_node(norm, inputs, ["y"], axis=-1, epsilon=1e-5))
        opset = 20
    else:
        nodes.append(helper.make_node(norm, ["r", "g"], ["y"], axis=-1, epsilon=1e-5))
        opset = 23
    return _model(nodes, inits, [1, 32, 64], {"y": [1, 32, 64]}, opset=opset)


@pytest.mark.parametrize("norm, with_bias", [("LayerNormalization", True), ("LayerNormalization", False),
                                             ("RMSNormalization", False)])
def test_a_residual_add_before_a_norm_becomes_its_residual_input(norm, with_bias):
    model = _residual_norm(norm, with_bias)
    conversion, notes = _converted(model)
    assert notes["applied"] == {"norm-residual": 1}
    assert conversion.op_counts()["add"] == 0
    assert "residual_input_tensor=x_dev" in conversion.source
    if not with_bias:
        assert "bias=None, residual_input_tensor=" in conversion.source
    _passes(model)


def test_a_pre_norm_residual_sum_read_twice_stays_an_add():
    """GPT-2 / ViT: the sum feeds the norm and the next residual add; layer_norm does not return it."""
    nodes = [helper.make_node("Add", ["x", "x"], ["r"]),
             helper.make_node("LayerNormalization", ["r", "g", "beta"], ["n"], axis=-1),
             helper.make_node("Add", ["n", "r"], ["y"])]
    model = _model(nodes, {"g": 1 + _w(64), "beta": _w(64)}, [1, 32, 64], {"y": [1, 32, 64]})
    _, notes = _converted(model)
    assert notes["applied"] == {}
    assert notes["rejected"] == {"norm-residual: the intermediate has 2 readers": 1}


def test_a_broadcasting_add_is_not_a_residual():
    nodes = [helper.make_node("Add", ["x", "c"], ["r"]),
             helper.make_node("LayerNormalization", ["r", "g"], ["y"], axis=-1)]
    model = _model(nodes, {"c": _w(1, 1, 64), "g": 1 + _w(64)}, [1, 32, 64], {"y": [1, 32, 64]})
    _, notes = _converted(model)
    assert notes["applied"] == {}
    assert any("broadcasts" in reason for reason in notes["rejected"])


@pytest.mark.parametrize("memory", ["dram", "auto"])
def test_add_and_relu_become_one_add_with_a_fused_relu(memory):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    model = _model(nodes, {"w": _w(64, 64)}, [1, 32, 64], {"y": [1, 32, 64]})
    conversion, notes = _converted(model, memory=memory)
    assert notes["applied"] == {"binary-activation": 1}
    assert "activations=[ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU)]" in conversion.source
    assert conversion.op_counts()["relu"] == 0
    _passes(model, memory=memory)


def test_one_node_feeding_two_rules_is_fused_once():
    """A relu after an add before a norm: add + relu fuse, and the norm then reads an add with activations,
    which is not a plain residual sum."""
    nodes = [helper.make_node("Add", ["x", "x"], ["s"]), helper.make_node("Relu", ["s"], ["r"]),
             helper.make_node("LayerNormalization", ["r", "g"], ["y"], axis=-1)]
    model = _model(nodes, {"g": 1 + _w(64)}, [1, 32, 64], {"y": [1, 32, 64]})
    conversion, notes = _converted(model)
    assert notes["applied"] == {"binary-activation": 1}
    assert notes["rejected"] == {"norm-residual: the add has arguments ['activations']": 1}
    _passes(model)


def test_gpt2_style_tanh_gelu_after_a_reshaped_gemm_fuses_into_the_linear():
    """GPT-2's Conv1D (Reshape, Gemm, Reshape) and gelu_new written out: fuse-patterns makes the Gelu, and
    fuse-epilogues moves it into the linear across the reshape."""
    c = 0.7978845608
    nodes = [helper.make_node("Reshape", ["x", "flat"], ["xf"]), helper.make_node("Gemm", ["xf", "w", "b"], ["g"]),
             helper.make_node("Reshape", ["g", "back"], ["h"]),
             helper.make_node("Mul", ["h", "half"], ["hh"]), helper.make_node("Pow", ["h", "three"], ["p"]),
             helper.make_node("Mul", ["p", "k"], ["pk"]), helper.make_node("Add", ["h", "pk"], ["s"]),
             helper.make_node("Mul", ["s", "c"], ["sc"]), helper.make_node("Tanh", ["sc"], ["t"]),
             helper.make_node("Add", ["t", "one"], ["t1"]), helper.make_node("Mul", ["hh", "t1"], ["a"]),
             helper.make_node("MatMul", ["a", "w2"], ["y"])]
    inits = {"flat": np.array([32, 64]), "back": np.array([1, 32, 96]), "w": _w(64, 96), "b": _w(96),
             "half": np.float32(0.5), "three": np.float32(3), "k": np.float32(0.044715), "c": np.float32(c),
             "one": np.float32(1), "w2": _w(96, 32)}
    model = _model(nodes, inits, [1, 32, 64], {"y": [1, 32, 32]}, opset=17)
    conversion, notes = _converted(model)
    assert conversion.module.notes["fuse-patterns"]["applied"].get("gelu-tanh") == 1
    assert notes["applied"] == {"matmul-activation": 1}
    assert "activation='gelu_tanh'" in conversion.source
    assert not {"tanh", "pow", "gelu"} & set(conversion.op_counts())
    _passes(model)


def test_an_integer_add_keeps_its_relu_apart():
    nodes = [helper.make_node("Add", ["x", "x"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.INT32, [1, 32, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 32, 64])])
    _, notes = _converted(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert notes == {"applied": {},
                     "rejected": {"binary-activation: integer values (a fused activation on int32 is not probed)": 1}}


@pytest.mark.parametrize("model", [_linear_act("Gelu"), _residual_norm("LayerNormalization")], ids=["gelu", "norm"])
def test_per_op_verification_compares_only_values_the_fused_program_still_computes(model):
    report = verify(model, per_op=True)
    assert report.passed and report.first_divergent is None, report.text()
    compared = {name for name, _, _ in report.per_op}
    assert "hb" not in compared and "r" not in compared  # folded away: the pre-activation value, the residual sum


def test_the_conversion_summary_counts_epilogue_fusions(tmp_path):
    """`convert` prints one "fused:" line with the pattern fusions and the epilogue ones alike."""
    from click.testing import CliRunner

    from onnx2ttnn.cli import main

    onnx.save(_linear_act("Relu"), tmp_path / "m.onnx")
    result = CliRunner().invoke(main, ["convert", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "m.py")])
    assert result.exit_code == 0, result.output
    fused = [line for line in result.output.splitlines() if line.startswith("fused: ")]
    assert len(fused) == 1 and "matmul-activation 1" in fused[0], result.output
