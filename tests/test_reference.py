"""onnx2ttnn/reference.py: verify's reference sigmoids run in float64, and a sigmoid output wholly in its
exponential tail is compared by its logits."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

from onnx2ttnn import ort
from onnx2ttnn.reference import LOGIT_FLOOR, accurate_sigmoids, logits, sigmoid_outputs
from onnx2ttnn.verify import compare, verify


def _sigmoid_model(bias: float = 0.0, opset: int = 17) -> onnx.ModelProto:
    graph = h.make_graph([h.make_node("Add", ["x", "b"], ["z"], name="shift"), h.make_node("Sigmoid", ["z"], ["y"],
                                                                                           name="tail")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 32, 32])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 32, 32])], [h.make_tensor("b", T.FLOAT, [], [bias])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    return ort.run(ort.session(model.SerializeToString()), ["y"], {"x": x})[0]


def test_onnxruntimes_float32_sigmoid_is_coarse_in_the_tail_and_the_float64_reference_is_not():
    x = np.linspace(-60, -12, 4 * 32 * 32, dtype=np.float32).reshape(1, 4, 32, 32)
    exact = 1 / (1 + np.exp(-x.astype(np.float64)))
    plain = _run(_sigmoid_model(), x)
    fair = _run(accurate_sigmoids(_sigmoid_model()), x)
    assert np.max(np.abs(plain / exact - 1)) > 0.5  # (0 below about -17.5: the fact reference.py is about)
    assert np.max(np.abs(fair / exact - 1)) < 1e-6
    assert accurate_sigmoids(_sigmoid_model()).graph.output[0].name == "y"
    assert sigmoid_outputs(_sigmoid_model()) == {"y"}


def test_a_sigmoid_of_an_undeclared_value_before_opset_15_is_rewritten_too():
    """paddle2onnx writes no value_info and opset 11-14 (no CastLike): the Sigmoid's input type comes from type
    inference.  The PP-OCRv4 detector's reference fell back to onnxruntime's float32 Sigmoid so (its logit PCC read
    0.3757 against the program's 0.9955)."""
    x = np.linspace(-60, -12, 4 * 32 * 32, dtype=np.float32).reshape(1, 4, 32, 32)
    exact = 1 / (1 + np.exp(-x.astype(np.float64)))
    model = _sigmoid_model(opset=13)
    assert not model.graph.value_info
    fair = accurate_sigmoids(model)
    assert "Sigmoid" not in {n.op_type for n in fair.graph.node}
    assert np.max(np.abs(_run(fair, x) / exact - 1)) < 1e-6


def test_a_tail_output_is_compared_by_its_logits_and_any_other_by_its_values():
    rng = np.random.default_rng(0)
    z = rng.normal(-25, 5, 4096)
    noisy = z + rng.normal(0, 0.6, z.size)  # logit errors of a deep bf16 network (ppocr_det: 0.3-0.5)
    sig = lambda v: 1 / (1 + np.exp(-v))
    as_values = compare("y", sig(noisy), sig(z), 0.99)
    by_logits = compare("y", sig(noisy), sig(z), 0.99, sigmoid=True)
    assert not as_values.passed and not as_values.logits
    assert by_logits.passed and by_logits.logits and by_logits.pcc > 0.99
    awake = np.concatenate([z, [0.0]])  # one value at 0.5: not all in the tail, compared as values
    assert not compare("y", sig(np.concatenate([noisy, [0.0]])), sig(awake), 0.99, sigmoid=True).logits


def test_logits_invert_the_sigmoid_down_to_the_floor():
    z = np.array([-80.0, -40.0, -14.0, 0.0, 3.0])
    np.testing.assert_allclose(logits(1 / (1 + np.exp(-z))), z, atol=1e-6)
    assert logits(np.array([0.0]))[0] == LOGIT_FLOOR


def test_verify_says_when_it_compared_logits():
    report = verify(_sigmoid_model(bias=-14.0), per_op=True)
    assert report.passed and report.outputs[0].logits, report.text()
    assert report.first_divergent is None and report.per_op[-1][1] == "tail"  # (per-op compares it so too)
    assert "of the logits: all values in sigmoid's exponential tail" in report.text()
    assert not verify(_sigmoid_model()).outputs[0].logits


def test_a_qdq_models_reference_is_onnxruntime_at_its_basic_level():
    """onnxruntime's extended level runs a QDQ MatMul as its own integer kernel, whose values differ from the
    operators'; verify's reference for a model with QuantizeLinear / DequantizeLinear is the basic level, which
    computes the operators (the same values as no optimization at all)."""
    from onnx2ttnn.reference import reference_level
    from tests.lowering.test_quantize import qdq_linear

    # (a weight of its own: qdq_linear's default draws from a generator other tests advance, and some draws give
    # no value where the integer kernel's rounding differs)
    model = qdq_linear(weight=np.random.default_rng(11).integers(-127, 128, (64, 32)).astype(np.int8))
    assert reference_level(model) == "basic"
    assert reference_level(h.make_model(h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g",
                                                     [h.make_tensor_value_info("x", T.FLOAT, [2])],
                                                     [h.make_tensor_value_info("y", T.FLOAT, [2])]))) == "default"
    x = {"x": np.random.default_rng(5).normal(0, 3, (8, 64)).astype(np.float32)}
    runs = {name: ort.run(ort.session(model.SerializeToString(), **kw), ["y"], x)[0]
            for name, kw in (("none", dict(optimize=False)), ("basic", dict(basic=True)), ("all", {}))}
    assert np.array_equal(runs["basic"], runs["none"])
    assert not np.array_equal(runs["all"], runs["none"])  # the integer kernel's rounding
