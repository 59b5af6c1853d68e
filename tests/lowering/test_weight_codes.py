"""lowering/weight_codes.py: in a float32 program, a QDQ linear's dequantized weight is uploaded as its int8 codes
(bfloat8_b, exact) and its per-channel scale multiplies the linear's output, which accumulates in a float32
dest at HiFi4 (ir/kernel_config.py); bfloat16 programs and codes bfloat8_b does not hold keep the folded weight."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from onnx2ttnn.convert import convert
from onnx2ttnn.lowering.weight_codes import MAX_EXACT_CODE
from onnx2ttnn.verify import verify
from tests.lowering.test_quantize import _const, _model, qdq_linear

F = TensorProto.FLOAT
V = helper.make_tensor_value_info
rng = np.random.default_rng(7)
# per-column scales spread over two decades: bfloat8_b's shared exponent (16 columns) blurs the folded weight
SPREAD = np.exp(rng.uniform(np.log(1e-3), np.log(1e-1), 32)).astype(np.float32)


def qdq_gemm(weight=None, w_scale=SPREAD):
    """x -> Q -> DQ -> Gemm(DQ(W int8 per column), DQ(bias int32, scale x_s * w_s)) -> Q -> DQ -> y, as
    quantize_static writes a linear with its bias (ViT's MatMul+Add, fused by onnxruntime into a Gemm)."""
    k, n, xs = 64, 32, np.float32(0.05)
    weight = rng.integers(-127, 128, (k, n)).astype(np.int8) if weight is None else weight
    bias = rng.integers(-4000, 4000, n).astype(np.int32)
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="q_x"),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dq_x"),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], name="dq_w", axis=1),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bd"], name="dq_b", axis=0),
             helper.make_node("Gemm", ["xd", "wd", "bd"], ["m"], name="gemm"),
             helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["mq"], name="q_y"),
             helper.make_node("DequantizeLinear", ["mq", "ys", "yz"], ["y"], name="dq_y")]
    inits = [_const("xs", xs), _const("xz", np.uint8(128)), _const("w", weight), _const("ws", w_scale),
             _const("wz", np.zeros(n, np.int8)), _const("b", bias), _const("bs", (xs * w_scale).astype(np.float32)),
             _const("bz", np.zeros(n, np.int32)), _const("ys", np.float32(0.2)), _const("yz", np.uint8(128))]
    return _model(nodes, [V("x", F, [8, k])], [V("y", F, [8, n])], inits)


def _inputs():
    return {"x": np.random.default_rng(1).normal(0, 3, (8, 64)).astype(np.float32)}


def test_fp32_uploads_the_codes_as_bfloat8_b_and_matches_onnxruntime_exactly():
    model = qdq_gemm()
    conversion = convert(model, dtype="fp32")
    assert conversion.quantized_weights()["wd"][0] == "bfp8"
    assert "ttnn.bfloat8_b" in conversion.source and "HiFi4, math_approx_mode=False, fp32_dest_acc_en=True" \
        in conversion.source
    ops = [n.op for n in conversion.module.graph.nodes if not n.attrs.get("_param")]
    assert ops.count("linear") == 1 and ops.count("multiply") == 3  # the two pairs' and the scale's
    stored = {key: array.dtype for key, array in conversion.program.weights.items() if "codes" in key}
    assert list(stored.values()) == [np.int8, np.float32], stored  # the weights file: int8 codes, unit scale
    report = verify(model, conversion=conversion, inputs=_inputs())
    assert report.passed and report.outputs[0].max_abs == 0.0, report  # onnxruntime's codes, every one


def test_the_weight_folded_into_bfloat8_b_fails_the_float32_bound_the_codes_pass():
    """Before: --weights bfp8 in a float32 program uploaded W = k * s rounded to bfloat8_b (and summed its
    products in a bfloat16 dest at HiFi2): off onnxruntime's codes.  The codes are exact."""
    import onnx2ttnn.lowering.matmul as matmul

    model = qdq_gemm()
    after = verify(model, inputs=_inputs(), dtype="fp32", weights="bfp8")
    original = matmul.linear_codes
    matmul.linear_codes = lambda *args: None  # the program of before this change
    try:
        before = verify(model, inputs=_inputs(), dtype="fp32", weights="bfp8")
    finally:
        matmul.linear_codes = original
    assert not before.passed and before.outputs[0].pcc < 0.9999, before
    assert after.passed and after.outputs[0].max_abs == 0.0, after


def test_a_code_of_128_keeps_the_folded_weight():
    weight = rng.integers(-127, 128, (64, 32)).astype(np.int8)
    weight[3, 5] = -128  # bfloat8_b would need a step of 2 in that group of 16
    assert MAX_EXACT_CODE == 127
    conversion = convert(qdq_gemm(weight), dtype="fp32")
    assert conversion.quantized_weights()["wd"][0] == "f32"
    assert "ttnn.bfloat8_b" not in conversion.source


def test_bf16_programs_keep_the_folded_weight():
    conversion = convert(qdq_linear(), dtype="bf16")
    assert conversion.quantized_weights() == {"wd": ("bfp8", "")}
    assert "_codes" not in conversion.source


def qdq_feed_forward():
    """x [2, 32, 64] -> DQ(W1 int8 per column) MatMul + b1 -> Relu -> DQ(W2) MatMul + b2 -> + x: a QDQ
    transformer's feed-forward pair."""
    weights = {"w1": (64, 256), "w2": (256, 64)}
    nodes, inits = [], []
    for name, (k, n) in weights.items():
        inits += [_const(name + "_q", rng.integers(-127, 128, (k, n)).astype(np.int8)),
                  _const(name + "_s", (rng.random(n) * 0.02 + 0.001).astype(np.float32)),
                  _const(name + "_z", np.zeros(n, np.int8))]
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_s", name + "_z"], [name], axis=1))
    inits += [_const("b1", rng.normal(size=256).astype(np.float32)),
              _const("b2", rng.normal(size=64).astype(np.float32))]
    nodes += [helper.make_node("MatMul", ["x", "w1"], ["h0"]), helper.make_node("Add", ["h0", "b1"], ["h1"]),
              helper.make_node("Relu", ["h1"], ["h2"]), helper.make_node("MatMul", ["h2", "w2"], ["o0"]),
              helper.make_node("Add", ["o0", "b2"], ["o1"]), helper.make_node("Add", ["o1", "x"], ["y"])]
    return _model(nodes, [V("x", F, [2, 32, 64])], [V("y", F, [2, 32, 64])], inits)


def test_tensor_parallel_keeps_the_folded_weights_and_splits_the_pair():
    """The scale's multiply between two coded linears hid the feed-forward pair from split-tensor-parallel:
    `--parallel tp --dtype fp32` refused the model ("no attention or feed-forward pair"), which it converted
    before the codes (and `--parallel auto` fell back to dp).  Under tp the linears keep the folded weight; dp
    still takes the codes."""
    model = qdq_feed_forward()
    tp = convert(model, device="n300", parallel="tp", dtype="fp32")
    assert {name: fmt for name, (fmt, _) in tp.quantized_weights().items()} == {"w1": "f32", "w2": "f32"}
    assert tp.module.notes["split-tensor-parallel"]["row_parallel"] == 1
    report = verify(model, conversion=tp, device="n300")
    assert report.passed and report.outputs[0].pcc > 0.99999, report
    dp = convert(model, device="n300", parallel="dp", dtype="fp32")
    assert {fmt for fmt, _ in dp.quantized_weights().values()} == {"bfp8"}
    auto = convert(model, device="n300", parallel="auto", dtype="fp32")  # had fallen back to dp, tp refused
    assert "refused" not in auto.auto and set(auto.auto["times"]) == {"dp", "tp"}, auto.auto


def _rows(module):
    """(page, buffer) of the coded linear's [1, N] scale and bias uploads, and what their readers pin."""
    from onnx2ttnn.ir.graph import layout_of

    rows = [n.outputs[0] for n in module.graph.nodes if n.op == "from_torch" and n.attrs.get("_param")
            and n.outputs[0].name.endswith(("_scale", "_bias"))]
    return {t.name.rsplit("_", 1)[1]: (layout_of(t).page, layout_of(t).buffer) for t in rows}, [
        n.attrs.get("_input_layouts") for t in rows for n in t.outputs]


def test_the_scale_and_bias_rows_are_row_major_in_l1_and_exact():
    """A TILE [1, N] row is padded to 32 rows (128 N bytes for 4 N); ROW_MAJOR in L1, the multiply (and the
    linear's bias add) tilizes it there (ttnn-facts §47), at no DRAM cost, with the values unchanged."""
    model = qdq_gemm()
    conversion = convert(model, dtype="fp32")
    rows, _ = _rows(conversion.module)
    assert rows == {"scale": ("row_major", "l1"), "bias": ("row_major", "l1")}
    assert "layout=ttnn.ROW_MAJOR_LAYOUT" in conversion.source
    report = verify(model, conversion=conversion, inputs=_inputs())
    assert report.passed and report.outputs[0].max_abs == 0.0, report


def test_rows_read_from_dram_are_tile_rows_as_before():
    """--memory dram: a ROW_MAJOR row in DRAM would be read, written back padded and read again (more DRAM bytes
    than a TILE row), so the rows go back to TILE and their readers' pins with them."""
    model = qdq_gemm()
    conversion = convert(model, dtype="fp32", memory="dram")
    rows, pins = _rows(conversion.module)
    assert rows == {"scale": ("tile", "dram"), "bias": ("tile", "dram")}
    assert all(pin is not None and "row_major" not in pin for pin in pins), pins
    assert "ROW_MAJOR_LAYOUT" not in conversion.source
    report = verify(model, conversion=conversion, inputs=_inputs())
    assert report.passed and report.outputs[0].max_abs == 0.0, report
