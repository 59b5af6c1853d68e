"""Fuzzing in the test run (issue 16): a bounded campaign of tests/fuzz with a fixed seed.

Every case (a checker-valid mutant of models/ or a generated graph over the claimed ops) must end in one of:
converted and verified on the simulator against onnxruntime (fp32), or a clean `error:` (a ConversionError,
exit 2).  An internal error (exit 3), a traceback, a model onnxruntime refuses but convert accepts, a program
that crashes on the simulator, an fp32 mismatch, a call outside the ttnn API, a leak or a timeout fails the
test; the message gives the command that reruns the case.  The long campaign, any seed:
`python -m tests.fuzz.campaign --seed S --count N` (benchmarks/README.md).
"""
from __future__ import annotations

from tests.fuzz.campaign import run

SEED, COUNT = 16, 250  # about a minute on a quiet 2-core machine


def test_a_bounded_fuzz_campaign_has_no_finding():
    summary = run(SEED, COUNT)
    print(summary.text())
    assert not summary.findings, summary.text()
    # the fuzzer is not vacuous: many cases convert and verify, many are refused, most mutants are checker-valid
    assert summary.outcomes["verified"] >= COUNT // 4, summary.outcomes
    assert summary.outcomes["refused"] >= COUNT // 10, summary.outcomes
    assert summary.outcomes["no valid mutant"] <= COUNT // 20, summary.outcomes
    assert sum(summary.outcomes.values()) == COUNT


def test_onnxruntimes_u8s8_saturation_is_an_ort_gap_and_the_shifted_variant_is_exact():
    """onnxruntime 1.32.0's uint8 x int8 MatMulInteger saturates pairs of products at int16 on x86 without VNNI
    (tests/fuzz/ort_u8s8.py): full-range operands are its inexactness, an ort-gap, never a mismatch; the
    variant with the weight shifted to uint8 computes the exact product."""
    import numpy as np
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    from tests.fuzz.oracle import run_case
    from tests.fuzz.ort_u8s8 import u8s8_variant

    rng = np.random.default_rng(0)
    a = rng.integers(200, 256, (4, 16)).astype(np.uint8)
    w = rng.integers(100, 128, (16, 3)).astype(np.int8)  # pairs of products up to 2 * 255 * 127 > 32767
    node = helper.make_node("MatMulInteger", ["a", "w", "", "wz"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", TensorProto.UINT8, [4, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, [4, 3])],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.int8(-3), "wz")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    variant = u8s8_variant(model)
    exact = a.astype(np.int64) @ (w.astype(np.int64) + 3)
    got = onnxruntime.InferenceSession(variant.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"a": a})[0]
    np.testing.assert_array_equal(got, exact)
    assert u8s8_variant(variant) is None  # nothing left to shift
    assert run_case(model, rng, known={"a": a}).kind in ("verified", "ort-gap")  # ort-gap without VNNI


def test_an_ill_conditioned_output_where_onnxruntime_is_itself_off_is_an_ort_gap_not_a_mismatch():
    """Fuzz seed 47 case 1042: Atanh(Tanh(y)) at y = 8.091943 amplifies onnxruntime's tanh, one float32 unit
    below the correctly rounded 0.99999982 (the simulator's), into 7.971 where float64 gives 8.0919 and the
    program 8.115 (tests/fuzz/ill_conditioned.py).  A program value further from float64 than onnxruntime's,
    or a difference where onnxruntime is accurate, stays a mismatch."""
    import numpy as np
    from onnx import TensorProto, helper

    from tests.fuzz.ill_conditioned import closer_than_onnxruntime
    from tests.fuzz.oracle import run_case

    nodes = [helper.make_node("Tanh", ["x"], ["t"]), helper.make_node("Atanh", ["t"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.array([8.091943, 0.5], np.float32)
    outcome = run_case(model, np.random.default_rng(0), known={"x": x})
    # an ort-gap here (onnxruntime 1.32.0's MLAS tanh on this x86); "verified" where its tanh rounds correctly
    assert outcome.kind == "verified" or (outcome.kind == "ort-gap" and "ill-conditioned" in outcome.detail), outcome
    want, exact = np.array([7.9712, 0.5]), np.array([8.0919, 0.5])
    assert closer_than_onnxruntime(exact, np.array([8.115, 0.5]), want, 1e-3, 1e-3)
    assert not closer_than_onnxruntime(exact, np.array([8.3, 0.5]), want, 1e-3, 1e-3)  # further than onnxruntime
    assert not closer_than_onnxruntime(exact, np.array([8.115, 0.6]), want, 1e-3, 1e-3)  # onnxruntime exact at 0.5


def test_an_infinite_instance_norm_scale_follows_the_spec_not_onnxruntimes_nans():
    """Fuzz seed 59 case 954: an InstanceNormalization whose scale holds +inf.  The spec's `scale * normalized +
    B` is +-inf wherever the normalized value is not 0 (onnx's reference evaluator, the program); onnxruntime's
    rearranged arithmetic gives NaN at some of them.  That is an ort-gap, while a program that gives NaN where
    the float64 value is inf, or the wrong infinity, stays a mismatch."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from tests.fuzz.ill_conditioned import closer_than_onnxruntime
    from tests.fuzz.oracle import run_case

    scale = numpy_helper.from_array(np.array([np.inf, 0.5], np.float32), "scale")
    bias = numpy_helper.from_array(np.array([0.25, -0.5], np.float32), "bias")
    node = helper.make_node("InstanceNormalization", ["x", "scale", "bias"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 6])],
                              initializer=[scale, bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.array([[[1, 2, 3, 4, 5, 6], [0, 1, 0, 1, 0, 1]]], np.float32)
    outcome = run_case(model, np.random.default_rng(0), known={"x": x})
    assert outcome.kind in ("verified", "ort-gap"), outcome
    exact = np.array([np.inf, -np.inf, 0.25, 1.0])
    assert closer_than_onnxruntime(exact, exact, np.array([np.nan, -np.inf, 0.25, 1.0]), 1e-3, 1e-3)
    assert not closer_than_onnxruntime(exact, np.array([np.nan, -np.inf, 0.25, 1.0]),
                                       np.array([np.inf, np.nan, 0.25, 1.0]), 1e-3, 1e-3)  # program NaN at inf
    assert not closer_than_onnxruntime(exact, np.array([-np.inf, -np.inf, 0.25, 1.0]),
                                       np.array([np.nan, -np.inf, 0.25, 1.0]), 1e-3, 1e-3)  # wrong infinity


def test_a_reduce_min_over_a_nan_follows_the_spec_not_onnxruntimes_first_nan_only():
    """Fuzz seed 61 case 1728: ReduceMin(Log(x)) over windows holding a NaN (Log of a negative).  The spec's
    reduction is numpy's (onnx's reference evaluator: NaN, as the program); onnxruntime propagates a NaN only
    when it is the window's first element (probed: min over [NaN, 1, 2, 3] is NaN, over [1, NaN, 2, 3] is 1).
    The float64 check (tests/fuzz/ill_conditioned.py) judges it an ort-gap; a program that dropped the NaN
    where onnxruntime keeps it, or gave another finite value, stays a mismatch."""
    import numpy as np
    from onnx import TensorProto, helper

    from tests.fuzz.ill_conditioned import closer_than_onnxruntime
    from tests.fuzz.oracle import run_case

    nodes = [helper.make_node("Log", ["x"], ["l"]), helper.make_node("ReduceMin", ["l"], ["y"], axes=[1, 2])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 1, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.array([[[-1, 2], [3, 4]], [[2, -1], [3, 4]], [[1, 2], [3, 4]]], np.float32)
    outcome = run_case(model, np.random.default_rng(0), known={"x": x})
    assert outcome.kind == "ort-gap", outcome  # onnxruntime 1.32.0: [NaN, log 2, 0]; the spec [NaN, NaN, 0]
    exact = np.array([np.nan, np.nan, 0.0])
    assert closer_than_onnxruntime(exact, exact, np.array([np.nan, 0.693, 0.0]), 1e-3, 1e-3)
    assert not closer_than_onnxruntime(exact, np.array([0.693, 0.693, 0.0]), np.array([np.nan, np.nan, 0.0]),
                                       1e-3, 1e-3)  # the program drops a NaN onnxruntime keeps
    assert not closer_than_onnxruntime(exact, np.array([np.nan, 1.0, 0.0]), np.array([np.nan, 0.693, 0.0]),
                                       1e-3, 1e-3)  # a finite value where the spec's is NaN


def test_onnxruntimes_mvn_nans_are_an_ort_gap_even_past_later_ops():
    """onnxruntime's MeanVarianceNormalization is NaN over a constant slice (the spec's function adds 1e-9 to the
    deviation: 0, as the program computes); a Hardmax after it turns the NaNs into other numbers, which the old
    NaN-only check did not follow.  The oracle now compares with onnxruntime running the spec's function in the
    MVN's place (tests/fuzz/ort_mvn.py); a real difference is still a mismatch."""
    import numpy as np
    import onnxruntime
    from onnx import TensorProto, helper

    from tests.fuzz.oracle import _mvn_gap, compare, run_case
    from tests.fuzz.ort_mvn import spec_variant

    x = np.random.default_rng(0).standard_normal((1, 2, 2, 3)).astype(np.float32)
    x[0, 1] = 0.7  # channel 1 is constant: variance 0
    for opset in (9, 13, 18):
        nodes = [helper.make_node("MeanVarianceNormalization", ["x"], ["m"], axes=[0, 2, 3]),
                 helper.make_node("Hardmax", ["m"], ["y"], axis=-1)]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 2, 3])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 2, 3])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        run = [onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"x": x})[0] for m in (model, spec_variant(model))]
        assert compare(run[1], run[0]) != ""  # onnxruntime's kernel and the spec's function differ past the MVN
        np.testing.assert_array_equal(run[1][0, 1], np.eye(3, dtype=np.float32)[[0, 0]])  # argmax of zeros: 0
        outcome = run_case(model, np.random.default_rng(0), known={"x": x})
        assert outcome.kind == "ort-gap" and "spec's function" in outcome.detail, (opset, outcome)
        assert _mvn_gap(model, {"x": x}, {"y": run[1]}) and not _mvn_gap(model, {"x": x}, {"y": 1 - run[1]})


def test_an_mvn_over_equal_values_is_judged_against_the_spec_in_float64():
    """Fuzz seeds 109 case 1485 and 127 case 1111: slices of equal values (a convolution's padding-only columns,
    its bias alone).  The spec's value is 0; onnxruntime's kernel gives +-1 here (NaN in case 1485), its float32
    run of the spec's function 0.00058 (E[x^2] - E[x]^2 a rounding).  The variant runs a float32 MVN's function
    in float64: 0, as the program.  A program giving 0.94 there (the float32 helper's rounding of the mean divided
    by its own size) stays a mismatch.  The float64 evaluation of tests/fuzz/ill_conditioned.py runs the function
    too, and excuses onnxruntime's NaN only for a program within the tolerance of the exact value."""
    import numpy as np
    import onnxruntime
    from onnx import TensorProto, helper

    from tests.fuzz.ill_conditioned import closer_than_onnxruntime, float64_outputs
    from tests.fuzz.oracle import _mvn_gap, run_case
    from tests.fuzz.ort_mvn import spec_variant

    x = np.random.default_rng(0).standard_normal((5, 2, 7, 3)).astype(np.float32)
    x[:, 0, :, 0], x[:, 1, :, 0] = np.float32(-0.47008163), np.float32(0.08644873)
    node = helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[0, 2])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 2, 7, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 2, 7, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    ort_y, spec_y = (onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0] for m in (model, spec_variant(model)))
    np.testing.assert_array_equal(ort_y[0, :, 0, 0], [-1, 1])
    np.testing.assert_array_equal(spec_y[:, :, :, 0], np.zeros((5, 2, 7)))
    exact = float64_outputs(model, {"x": x})["y"]
    np.testing.assert_array_equal(exact[:, :, :, 0], np.zeros((5, 2, 7)))
    outcome = run_case(model, np.random.default_rng(0), known={"x": x})
    assert outcome.kind == "ort-gap" and "spec's function" in outcome.detail, outcome
    off = spec_y.copy()
    off[:, :, :, 0] = 0.94
    assert _mvn_gap(model, {"x": x}, {"y": spec_y}) and not _mvn_gap(model, {"x": x}, {"y": off})
    nans = np.where(exact == 0, np.nan, exact)  # onnxruntime's NaN of case 1485
    assert closer_than_onnxruntime(exact, exact, nans, 1e-3, 1e-3)
    assert not closer_than_onnxruntime(exact, off, nans, 1e-3, 1e-3)


def test_an_lrn_over_a_rank_3_input_is_an_ort_gap():
    """Fuzz seed 71 case 312: the spec defines LRN for (N x C x D1 x ... x Dn); onnxruntime's CPU kernel runs
    4-D inputs only ("X_shape.NumDimensions() == 4 was false"), so there is nothing to compare with."""
    import numpy as np
    from onnx import TensorProto, helper

    from tests.fuzz.oracle import run_case

    node = helper.make_node("LRN", ["x"], ["y"], size=3)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    outcome = run_case(model, np.random.default_rng(0))
    assert outcome.kind == "ort-gap" and "NumDimensions() == 4" in outcome.detail, outcome


def test_a_qdq_model_is_judged_against_onnxruntimes_basic_level_as_verify_does():
    """Fuzz seed 83 case 185: Q -> DQ -> Reshape with int8 codes.  At its default level onnxruntime propagates
    the pair across the Reshape, makes a QuantizeLinear of its own with an int8 output beside a uint8 zero point
    and refuses the valid model; at verify's basic level it runs it, and the program matches."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from tests.fuzz.oracle import run_case

    inits = [numpy_helper.from_array(np.array(0.01, np.float32), "s"),
             numpy_helper.from_array(np.array(0, np.int8), "z"),
             numpy_helper.from_array(np.array([1, 8], np.int64), "shape")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
             helper.make_node("Reshape", ["d", "shape"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8]),
                               helper.make_tensor_value_info("d", TensorProto.FLOAT, [4, 2])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    outcome = run_case(model, np.random.default_rng([83, 185]))
    assert outcome.kind == "verified", outcome


def test_an_if_reading_a_float_cast_to_double_and_back_is_an_ort_gap_and_the_program_is_right():
    """Fuzz seed 127 case 1382: onnxruntime cannot run an If whose branches read Cast(Cast(x, double), float)
    ("Missing Input: t4", at every graph level); through int32 it runs.  The model is valid: an ort-gap, and the
    program computes what the spec says (Abs where the sum is positive, else Sigmoid)."""
    import numpy as np
    import onnx

    from onnx2ttnn.convert import convert
    from tests.fuzz.oracle import run_case
    from tests.node.runner import execute

    text = """
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[5, 4, 1] x) => (float[5, 4, 1] y) <float zero = {0}> {
        wide = Cast<to = %d>(x)
        back = Cast<to = 1>(wide)
        total = ReduceSum<keepdims = 0>(back)
        positive = Greater(total, zero)
        y = If(positive) <then_branch = t () => (float[5, 4, 1] a) { a = Abs(back) },
                          else_branch = e () => (float[5, 4, 1] b) { b = Sigmoid(back) }>
    }"""
    model = onnx.parser.parse_model(text % onnx.TensorProto.DOUBLE)
    for sign in (1, -1):
        x = sign * np.abs(np.random.default_rng(0).standard_normal((5, 4, 1))).astype(np.float32)
        outcome = run_case(model, np.random.default_rng(0), known={"x": x})
        assert outcome.kind == "ort-gap" and "Missing Input" in outcome.detail, outcome
        got = np.asarray(execute(convert(model, dtype="fp32"), {"x": x})[0]["y"])
        np.testing.assert_allclose(got, np.abs(x) if sign > 0 else 1 / (1 + np.exp(-x)), rtol=1e-6, atol=1e-6)
    through_int32 = onnx.parser.parse_model(text % onnx.TensorProto.INT32)
    assert run_case(through_int32, np.random.default_rng(0)).kind == "verified"


def test_an_implicit_einsum_with_upper_case_labels_is_an_ort_gap_and_the_program_is_numpys():
    """Fuzz seed 151 case 1042: Einsum "CRD" (implicit output: the labels in alphabetical order, "CDR").  The spec
    takes upper-case labels and numpy runs it; onnxruntime's run refuses ("The only subscript labels allowed are
    lower-cased letters (a-z) and upper-cased letters (A-Z)"), though it runs "CRD->DRC" and "crd"."""
    import numpy as np
    from onnx import TensorProto, helper

    from onnx2ttnn.convert import convert
    from tests.fuzz.oracle import run_case
    from tests.node.runner import execute

    x = np.random.default_rng(0).standard_normal((8, 5, 2)).astype(np.float32)
    node = helper.make_node("Einsum", ["x"], ["y"], equation="CRD")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 5, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 2, 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    outcome = run_case(model, np.random.default_rng(0), known={"x": x})
    assert outcome.kind == "ort-gap" and "subscript labels" in outcome.detail, outcome
    got = np.asarray(execute(convert(model, dtype="fp32"), {"x": x})[0]["y"])
    np.testing.assert_allclose(got, np.einsum("CRD", x), rtol=1e-6, atol=1e-6)


def test_a_nearest_resize_excluding_outside_taps_is_an_ort_gap_computed_as_the_spec_says():
    """exclude_outside=1 zeroes the weights of taps outside the input, and nearest mode has none: onnx's reference
    evaluator runs the model (the flag changes nothing); onnxruntime 1.32 refuses it ("exclude_outside can be set
    to 1 when (1) mode is CUBIC, or (2) mode is LINEAR when anti-aliasing is enabled").  An ort-gap; the program
    gives the reference evaluator's values (fuzz seed 167 case 166 asked with -2, which convert now refuses)."""
    import numpy as np
    import onnx
    from onnx.reference import ReferenceEvaluator

    from onnx2ttnn.convert import convert
    from tests.fuzz.oracle import compare, run_case
    from tests.node.runner import execute

    model = onnx.parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 19]>
        g (float[1, 2, 5, 6] x) => (float[1, 2, 7, 4] y) <float[4] s = {1, 1, 1.5, 0.7}> {
            y = Resize<mode = "nearest", exclude_outside = 1, coordinate_transformation_mode = "asymmetric">(x, , s)
        }""")
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 6)).astype(np.float32)
    outcome = run_case(model, np.random.default_rng(0), known={"x": x})
    assert outcome.kind == "ort-gap" and "exclude_outside can be set to 1" in outcome.detail, outcome
    got, _ = execute(convert(model, dtype="fp32"), {"x": x})
    assert compare(got["y"], ReferenceEvaluator(model).run(None, {"x": x})[0]) == ""


def test_a_loop_trip_count_of_no_element_is_refused_without_running_onnxruntime():
    """Fuzz seed 179 case 972: a Loop whose constant M has shape [0, 2, 4] is a segmentation fault in onnxruntime
    1.32's run (the case's process died; before tests/fuzz/worker.py it ended the campaign).  The oracle leaves
    onnxruntime out for it, and convert refuses it (M must hold one element)."""
    import numpy as np
    import onnx

    from tests.fuzz.oracle import run_case

    model = onnx.parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[1] x) => (float[1] y) <int64[0, 2, 4] m = {}, bool c = {1}> {
            y = Loop (m, c, x) <body = b (int64 b_i, bool b_c, float[1] b_v) => (bool b_co, float[1] b_vo) {
                b_co = Identity (b_c)
                b_vo = Tanh (b_v)
            }>
        }""")
    outcome = run_case(model, np.random.default_rng(0))
    assert outcome.kind == "refused" and "its trip count M 'm' has 0 elements" in outcome.detail, outcome
    assert outcome.ort == "refused: a Loop's trip count of no element (onnxruntime crashes the process)"


def test_a_rounding_amplified_into_a_periodic_function_is_judged_by_correctly_rounded_float32():
    """Fuzz seed 181 case 346: Tan(1e9 * Tanh(x)).  onnxruntime 1.32's tanh is one float32 unit off the correctly
    rounded value at most elements (the simulator's is correctly rounded); times 1e9 the arguments are 64 apart,
    and the tans 82.  The float64 evaluation's arguments are apart from both, so it excuses nothing; the values of
    float32 arithmetic rounded correctly node by node (ill_conditioned.rounded_outputs) are the program's.  A
    program far from those stays a mismatch."""
    import numpy as np
    import onnx

    from tests.fuzz.ill_conditioned import closer_than_onnxruntime, rounded_outputs
    from tests.fuzz.oracle import make_feeds, run_case

    model = onnx.parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[4, 1, 4, 1] x) => (float[4, 1, 4, 1] y) <float c = {1e9}> {
            t = Tanh(x)
            m = Mul(t, c)
            y = Tan(m)
        }""")
    feeds = make_feeds(model, np.random.default_rng([181, 346]))
    outcome = run_case(model, np.random.default_rng([181, 346]))
    # an ort-gap with onnxruntime 1.32.0's MLAS tanh on this x86; "verified" where its tanh rounds correctly
    assert outcome.kind == "verified" or (outcome.kind == "ort-gap" and "ill-conditioned" in outcome.detail), outcome
    x = feeds["x"].astype(np.float64)
    want = np.tan((np.tanh(x).astype(np.float32) * np.float32(1e9)).astype(np.float64))  # correctly rounded steps
    rounded = rounded_outputs(model, feeds)["y"]
    np.testing.assert_allclose(rounded, want, rtol=1e-6)
    off = np.tan((np.nextafter(np.tanh(x).astype(np.float32), np.float32(0)) * np.float32(1e9)).astype(np.float64))
    assert closer_than_onnxruntime(rounded, want, off, 1e-3, 1e-3)  # the program right, onnxruntime one unit off
    assert not closer_than_onnxruntime(rounded, off, want, 1e-3, 1e-3)  # the program one unit off
