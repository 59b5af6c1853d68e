"""Quantized ONNX: QDQ chains on the device, constant weights folded and uploaded as bfloat8_b (or bf16 out of
budget, said in the summary), the operator-format ops, the cost model's bfloat8_b conv weights, and bad
quantization parameters refused with one error naming the node."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.weight_dtype import BFP8_BUDGET, bfp8_round
from onnx2ttnn.verify import verify
from tests.test_cli import assert_clean_failure, listing, run_inprocess

F, U8, I8, I32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
V = helper.make_tensor_value_info
rng = np.random.default_rng(0)


def _model(nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(nodes, "q", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def qdq_linear(weight=None, w_scale=None, x_scale=0.05, opset=17):
    """x -> Q -> DQ -> MatMul(DQ(W int8, per column)) -> Q -> DQ -> y: what quantize_static writes."""
    k, n = 64, 32
    if weight is None:
        weight = rng.integers(-127, 128, (k, n)).astype(np.int8)
    w_scale = np.full(n, 0.01, np.float32) if w_scale is None else w_scale
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="q_x"),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dq_x"),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], name="dq_w", axis=1),
        helper.make_node("MatMul", ["xd", "wd"], ["m"], name="mm"),
        helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["mq"], name="q_y"),
        helper.make_node("DequantizeLinear", ["mq", "ys", "yz"], ["y"], name="dq_y"),
    ]
    inits = [_const("xs", np.float32(x_scale)), _const("xz", np.uint8(128)), _const("w", weight),
             _const("ws", w_scale), _const("wz", np.zeros(n, np.int8)), _const("ys", np.float32(0.1)),
             _const("yz", np.uint8(128))]
    return _model(nodes, [V("x", F, [8, k])], [V("y", F, [8, n])], inits, opset)


def test_qdq_matmul_matches_onnxruntime_on_the_quantized_model():
    model = qdq_linear()
    conversion = convert(model)
    ops = [n.op for n in conversion.module.graph.nodes if not n.attrs.get("_param")]
    assert "linear" in ops and "round" not in ops and "clip" not in ops  # round and clip: the multiply's
    # input activations; both activation pairs fused (fusion/quantize.py): their zero points' add and subtract cancel
    assert ops.count("divide") == 2 and ops.count("multiply") == 2 and "add" not in ops and "subtract" not in ops
    report = verify(model, conversion=conversion)
    assert report.passed, report
    assert conversion.fallback_counts() == {}


def test_a_dequantized_weight_is_uploaded_as_bfloat8_b():
    conversion = convert(qdq_linear())
    assert conversion.module.dequantized  # fold-dequantize marked it
    assert conversion.quantized_weights() == {"wd": ("bfp8", "")}
    assert "dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT" in conversion.source


def test_a_weight_bfloat8_b_would_blur_stays_bf16_and_says_why():
    # per-column scales a thousand-fold apart: one shared exponent per 16 columns flushes the small columns
    scales = np.where(np.arange(32) % 2 == 0, 1.0, 1e-3).astype(np.float32)
    conversion = convert(qdq_linear(w_scale=scales))
    dtype, why = conversion.quantized_weights()["wd"]
    assert dtype == "bf16" and f"budget {BFP8_BUDGET}" in why
    assert "ttnn.bfloat8_b" not in conversion.source


def test_fp32_keeps_dequantized_weights_exact():
    """float32 programs: a linear's weight as its int8 codes in bfloat8_b (tests/lowering/test_weight_codes.py),
    any other (here --weights bf16) in float32."""
    assert convert(qdq_linear(), dtype="fp32").quantized_weights()["wd"][0] == "bfp8"
    assert convert(qdq_linear(), dtype="fp32", weights="bf16").quantized_weights()["wd"][0] == "f32"


def test_bfp8_round_matches_the_simulator():
    import torch

    from onnx2ttnn.sim._rounding import bfp8_round as sim_round

    x = (rng.standard_normal((3, 40)) * np.exp(rng.uniform(-8, 8, (3, 40)))).astype(np.float32)
    np.testing.assert_array_equal(bfp8_round(x), sim_round(torch.from_numpy(x)).numpy())


def test_quantize_saturates_and_rounds_half_to_even():
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")
    model = _model([node], [V("x", F, [8])], [V("y", I8, [8])], [_const("s", np.float32(0.5)),
                                                                _const("z", np.int8(-3))])
    x = np.array([0.25, 0.75, -0.25, 1000.0, -1000.0, 1.25, 2.0, -63.0], np.float32)
    report = verify(model, conversion=convert(model, dtype="fp32"), inputs={"x": x})
    assert report.passed, report


def _bad(node, inits, x_type=F, y_type=U8, shape=(2, 3)):
    return _model([node], [V("x", x_type, list(shape))], [V("y", y_type, list(shape))], inits)


@pytest.mark.parametrize("scale", [0.0, -0.5])
def test_a_zero_or_negative_scale_is_refused_naming_the_node(scale):
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="bad_q")
    with pytest.raises(ConversionError, match=r"node 'bad_q': scale 's' must be positive"):
        convert(_bad(node, [_const("s", np.float32(scale)), _const("z", np.uint8(0))]))


def test_a_zero_or_negative_weight_scale_is_refused_by_fold_dequantize():
    node = helper.make_node("DequantizeLinear", ["w", "s"], ["wd"], name="dq_w", axis=0)
    mm = helper.make_node("MatMul", ["x", "wd"], ["y"])
    model = _model([node, mm], [V("x", F, [2, 3])], [V("y", F, [2, 3])],
                   [_const("w", np.ones((3, 3), np.int8)), _const("s", np.array([0.1, 0.0, 0.1], np.float32))])
    with pytest.raises(ConversionError, match=r"node 'dq_w': scale 's' must be positive"):
        convert(model)


def test_an_axis_out_of_range_is_refused_naming_the_node():
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="bad_axis", axis=5)
    model = _bad(node, [_const("s", np.full(3, 0.1, np.float32)), _const("z", np.zeros(3, np.uint8))],
                 x_type=U8, y_type=F)
    # (frontend/validate_operands.py refuses it before the lowering, which says "axis 5 out of range")
    with pytest.raises(ConversionError, match=r"node 'bad_axis' \(DequantizeLinear\): axis 5 is out of range for an "
                                              r"input of rank 2"):
        convert(model)


@pytest.mark.parametrize("op, zero, x_type, y_type", [
    ("QuantizeLinear", np.int32(0), F, I32),  # int32 is no quantized type
    ("DequantizeLinear", np.int8(0), U8, F),  # the zero point's type is not its input's
])
def test_a_zero_point_of_the_wrong_type_is_refused_naming_the_node(op, zero, x_type, y_type):
    # (the importer's strict type inference refuses it first, naming the node and the operand)
    node = helper.make_node(op, ["x", "s", "z"], ["y"], name="bad_zp")
    with pytest.raises(ConversionError, match=r"node 'bad_zp'.*zero.point"):
        convert(_bad(node, [_const("s", np.float32(0.1)), _const("z", zero)], x_type=x_type, y_type=y_type))


def test_a_per_axis_scale_of_the_wrong_length_is_refused():
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], name="bad_len", axis=1)
    # (frontend/validate_operands.py refuses it before the lowering, which says "fits neither")
    with pytest.raises(ConversionError,
                       match=r"node 'bad_len' \(DequantizeLinear\): the scale has 4 values but axis 1"):
        convert(_bad(node, [_const("s", np.full(4, 0.1, np.float32))], x_type=U8, y_type=F))


def test_the_cli_gives_one_error_line_and_writes_nothing(tmp_path: Path):
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="bad_q")
    onnx.save(_bad(node, [_const("s", np.float32(-1.0)), _const("z", np.uint8(0))]), str(tmp_path / "m.onnx"))
    before = listing(tmp_path)
    msg = assert_clean_failure(run_inprocess(["convert", "m.onnx", "-o", "m_ttnn.py"], tmp_path))
    assert "bad_q" in msg and "must be positive" in msg
    assert listing(tmp_path) == before


def _u8s8_operands(rows: int, depth: int, cols: int):
    """uint8 x int8 operands whose products onnxruntime sums exactly on every x86 CPU: its u8s8 kernel without
    VNNI (AVX2's VPMADDUBSW) saturates the sum of each adjacent pair of products at int16, which full-range
    operands exceed (seen: onnxruntime 1.32.0 off by up to 33,184 on such a machine, exact on one with VNNI).
    Here a pair sums to at most 2 * 127 * 64 = 16,256."""
    return (rng.integers(0, 128, (rows, depth)).astype(np.uint8),
            rng.integers(-64, 64, (depth, cols)).astype(np.int8))


def test_matmul_integer_is_exact_in_fp32():
    a, b = _u8s8_operands(4, 40, 8)
    node = helper.make_node("MatMulInteger", ["a", "b", "az"], ["y"], name="mmi")
    model = _model([node], [V("a", U8, [4, 40])], [V("y", I32, [4, 8])], [_const("b", b), _const("az", np.uint8(7))],
                   opset=13)
    report = verify(model, conversion=convert(model, dtype="fp32"), inputs={"a": a})
    assert report.passed, report


def test_an_int32_bias_added_to_a_matmul_integer_meets_it_as_a_float():
    """MatMulInteger's integer result is computed in float; its int32 bias (onnxruntime's dynamic quantizer
    writes ConvInteger/MatMulInteger + Add(int32 bias)) is typecast to float for the add: ttnn refuses a bfloat16
    beside an int32 (ddddocr's int8 recognizer failed so on the real ttnn mock), and so does the simulator."""
    a, b = _u8s8_operands(4, 40, 8)
    bias = rng.integers(-3000, 3000, (8,)).astype(np.int32)
    nodes = [helper.make_node("MatMulInteger", ["a", "b", "az"], ["m"], name="mmi"),
             helper.make_node("Add", ["m", "bias"], ["y"], name="bias_add")]
    model = _model(nodes, [V("a", U8, [4, 40])], [V("y", I32, [4, 8])],
                   [_const("b", b), _const("az", np.uint8(7)), _const("bias", bias)], opset=13)
    conversion = convert(model, dtype="fp32")
    add = next(n for n in conversion.module.graph.nodes if n.op == "add")
    assert {np.dtype(t.dtype).kind for t in add.inputs} == {"f"}
    report = verify(model, conversion=conversion, inputs={"a": a})
    assert report.passed, report


def test_conv_bfloat8_b_weights_cost_their_block_float_bytes():
    from onnx2ttnn.ir.weight_bytes import read_bytes
    from onnx2ttnn.ir.graph import layout_of
    from onnx2ttnn.ir.layout import LAYOUT_DTYPES

    w = rng.integers(-127, 128, (32, 16, 3, 3)).astype(np.int8)
    nodes = [helper.make_node("DequantizeLinear", ["w", "ws"], ["wd"], name="dq_w", axis=0),
             helper.make_node("Conv", ["x", "wd"], ["y"], name="conv", pads=[1, 1, 1, 1])]
    inits = [_const("w", w), _const("ws", np.full(32, 0.02, np.float32))]
    model = _model(nodes, [V("x", F, [1, 16, 8, 8])], [V("y", F, [1, 32, 8, 8])], inits)

    def weight_bytes(conversion):
        conv = next(n for n in conversion.module.graph.nodes if n.op == "conv2d")
        return read_bytes(conv.inputs[1], layout_of(conv.inputs[1]), conv)

    quantized = convert(model)
    assert "weights_dtype=ttnn.bfloat8_b" in quantized.source
    # prepared [3*3*16, 32]: 5 x 1 tiles of bfloat8_b
    assert weight_bytes(quantized) == 5 * LAYOUT_DTYPES["bfp8"][2] == 5 * 1088
    # the same conv with a float weight under --weights bf16: ttnn prepares float32, 5 x 1 tiles of 4096 B
    plain = _model([nodes[1]], [V("x", F, [1, 16, 8, 8])], [V("y", F, [1, 32, 8, 8])],
                   [_const("wd", (w * np.float32(0.02)).astype(np.float32))])
    assert weight_bytes(convert(plain, weights="bf16")) == 5 * 4096
    # ... under --weights bfp4: 5 x 1 tiles of bfloat4_b
    assert weight_bytes(convert(plain, weights="bfp4")) == 5 * 576


def test_per_op_compares_dynamic_quantize_linears_rank_0_scale():
    """y_scale and y_zero_point are rank 0 in ONNX and [1] on the device: --per-op compares them as equals."""
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"], name="dql")
    mul = helper.make_node("Mul", ["s", "two"], ["s2"], name="mul")
    model = _model([node, mul], [V("x", F, [1, 3, 8, 8])], [V("y", U8, [1, 3, 8, 8]), V("s2", F, [])],
                   [_const("two", np.float32(2.0))], opset=11)
    report = verify(model, conversion=convert(model, dtype="fp32", probes=True), per_op=True)
    assert report.passed and report.first_divergent is None, report.per_op
    assert ("s", "dql", 1.0) in report.per_op


def test_dynamic_quantize_linear_of_zeros_has_scale_1_as_onnxruntime():
    """Found by the fuzzer (seed 67 case 1085): x all 0 made y_scale 0 and the zero point 0 / 0, NaN, so a
    DequantizeLinear after it gave NaN; onnxruntime gives y 0, y_scale 1, y_zero_point 0 (and 0 after it)."""
    from tests.program_run import run

    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"]),
             helper.make_node("DequantizeLinear", ["y", "s", "z"], ["d"])]
    model = _model(nodes, [V("x", F, [2, 3])], [V("y", U8, [2, 3]), V("s", F, []), V("z", U8, []), V("d", F, [2, 3])],
                   [], opset=13)
    for x in (np.zeros((2, 3), np.float32), np.array([[0.0, -0.5, 2.0], [1.0, 0.25, 0.0]], np.float32)):
        want = dict(zip("yszd", onnx_reference(model, {"x": x})))
        assert (float(want["s"]) == 1.0) == (not x.any())  # onnxruntime's scale for zeros (the formula's is 0)
        outputs, leaks, _ = run(model, {"x": x})
        assert leaks == []
        for name, value in want.items():
            np.testing.assert_array_equal(outputs[name].numpy().astype(np.float64).reshape(value.shape),
                                          value.astype(np.float64), err_msg=name)


def onnx_reference(model, feeds):
    """onnxruntime's outputs of `model`, in graph output order."""
    from onnx2ttnn import ort

    names = [o.name for o in model.graph.output]
    return ort.run(ort.session(model.SerializeToString()), names, feeds)


def _precise(precision, pair=False):
    """QuantizeLinear-23 to int16 with `precision` (and a DequantizeLinear after it when `pair`)."""
    attrs = {} if precision is None else {"precision": precision}
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q_prec", **attrs)]
    out = V("q", TensorProto.INT16, [6])
    if pair:
        nodes.append(helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]))
        out = V("y", F, [6])
    model = _model(nodes, [V("x", F, [6])], [out], [_const("s", np.float32(0.1)), _const("z", np.int16(0))],
                   opset=23)
    model.ir_version = 10
    return model


@pytest.mark.parametrize("pair", [False, True])
def test_a_float16_division_precision_is_left_to_onnxruntime_and_matches_it(pair):
    """Found by the fuzzer (seed 47 case 322, then a probe): QuantizeLinear-23 `precision` FLOAT16 divides in
    float16 (onnxruntime: 2049.3 / 0.1 -> 20512, not 20493); ttnn has no float16, so the rule declines and a host
    region computes it; FLOAT is the program's own division, on the device; another type is refused."""
    import onnxruntime

    from tests.node.runner import execute

    x = np.array([1000.05, 2049.3, 3.0, 1234.567, -3000.3, 1.25], np.float32)
    for precision, hosted in ((TensorProto.FLOAT16, True), (TensorProto.FLOAT, False), (None, False)):
        model = _precise(precision, pair)
        want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"x": x})[0]
        conversion = convert(model, dtype="fp32")
        assert bool(conversion.region_summaries()) == hosted
        outputs, leaks = execute(conversion, {"x": x})
        np.testing.assert_array_equal(np.asarray(outputs["y" if pair else "q"]), want)
        assert leaks == []
    with pytest.raises(ConversionError, match=r"\(QuantizeLinear\): precision 5 is not a type onnxruntime divides "
                                              r"in \(FLOAT, FLOAT16\)"):
        convert(_precise(TensorProto.INT16, pair))


def test_dynamic_quantize_linear_of_zeros_takes_scale_1_as_onnxruntime():
    """Found by the fuzzer (seed 61 case 1875: DynamicQuantizeLinear over a Cast of an all-zero ArgMax, then
    DequantizeLinear): the range is 0 and the spec's scale 0 / 255 leaves x / y_scale = 0 / 0; the program gave
    y NaN and a NaN dequantized output, onnxruntime y 0, y_scale 1, y_zero_point 0 (and DequantizeLinear 0)."""
    from tests.node.runner import execute
    from tests.fuzz.oracle import compare

    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"], name="dql"),
             helper.make_node("DequantizeLinear", ["y", "s", "z"], ["d"], name="dq")]
    model = _model(nodes, [V("x", F, [1, 8, 1, 4])],
                   [V("y", U8, [1, 8, 1, 4]), V("s", F, []), V("z", U8, []), V("d", F, [1, 8, 1, 4])], [], opset=21)
    feeds = {"x": np.zeros((1, 8, 1, 4), np.float32)}
    got, leaks = execute(convert(model, dtype="fp32"), feeds)
    import onnxruntime as ort
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for name, value in zip(("y", "s", "z", "d"), want):
        assert compare(got[name], np.asarray(value)) == "", name
    assert float(np.asarray(got["s"]).reshape(-1)[0]) == 1.0 and not np.isnan(got["d"]).any() and not leaks
