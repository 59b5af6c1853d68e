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


def _none_and_basic(text: str, feeds: dict) -> tuple[np.ndarray, np.ndarray]:
    model = onnx.parser.parse_model(text).SerializeToString()
    return tuple(ort.run(ort.session(model, **kw), ["y"], feeds)[0] for kw in (dict(optimize=False), dict(basic=True)))


def test_the_basic_reference_keeps_both_roundings_of_two_qdq_pairs():
    """onnxruntime's basic level merges Q1 -> DQ1 -> Q2 -> DQ2 into one pair (DoubleQDQPairsRemover), dropping the
    second rounding: (18 - 7) * 0.05 / 0.1 is 5.5, which the second pair rounds to 6 (0.6); the merged pair gives
    0.55 (fuzz seed 109 case 1229).  The reference keeps the operators."""
    none, basic = _none_and_basic("""
        <ir_version: 8, opset_import: ["" : 19]>
        g (float[2] x) => (float[2] y) <float s1 = {0.05}, int8 z1 = {7}, float s2 = {0.1}, int8 z2 = {0}> {
            q1 = QuantizeLinear(x, s1, z1)
            d1 = DequantizeLinear(q1, s1, z1)
            q2 = QuantizeLinear(d1, s2, z2)
            y = DequantizeLinear(q2, s2, z2)
        }""", {"x": np.array([-0.11951406, 0.5349251], np.float32)})
    assert np.array_equal(basic, none)
    assert basic[1] == np.float32(0.6)


def test_the_basic_reference_keeps_an_int8_pair_without_its_zero_point_int8_past_a_slice():
    """onnxruntime's basic level copies Q -> DQ past a Slice (QDQPropagationTransformer) with the DQ's inputs: the
    DQ leaves out its zero point (0 of the input's type, int8), so the copied Q has none and quantizes to uint8,
    and the negative values became 0 (fuzz seed 173 case 393, 1.9 off).  The reference keeps the operators."""
    none, basic = _none_and_basic("""
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[2, 4] x) => (float[2, 2] y) <float s = {0.1}, int8 z = {0}, int64[1] b = {3}, int64[1] e = {-5},
                                              int64[1] a = {1}, int64[1] st = {-2}> {
            q = QuantizeLinear(x, s, z)
            d = DequantizeLinear(q, s)
            y = Slice(d, b, e, a, st)
        }""", {"x": np.array([[-1.9, 0.5, -0.3, -1.2], [2.1, -0.7, 0.4, -0.06]], np.float32)})
    assert np.array_equal(basic, none)
    assert basic.tolist() == [[np.float32(-1.2), np.float32(0.5)], [np.float32(-0.1), np.float32(-0.7)]]


def test_the_basic_reference_keeps_a_float_weight_between_qdq_pairs_float():
    """onnxruntime's basic level quantizes the float weight (to int8, per tensor) and bias of a Conv between a DQ
    and a Q (WeightBiasQuantization): 0.04 off here; the reference keeps the float weight the model has."""
    none, basic = _none_and_basic("""
        <ir_version: 8, opset_import: ["" : 19]>
        g (uint8[1, 2, 4, 4] q) => (float[1, 3, 4, 4] y)
          <float s = {0.05}, uint8 z = {128}, float[3, 2, 1, 1] w = {0.123, -0.77, 0.31, 0.05, -0.4, 0.9},
           float[3] b = {0.013, -0.2, 0.37}, float s2 = {0.02}> {
            x = DequantizeLinear(q, s, z)
            c = Conv(x, w, b)
            cq = QuantizeLinear(c, s2, z)
            y = DequantizeLinear(cq, s2, z)
        }""", {"q": np.random.default_rng(0).integers(0, 255, (1, 2, 4, 4)).astype(np.uint8)})
    assert np.array_equal(basic, none)
