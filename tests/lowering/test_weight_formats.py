"""--weights auto|bf16|bfp8|bfp4 (lowering/weight_dtype.py): block-float rounding as tt-metal packs it, the
formats the rules upload weights in, auto's per-weight criterion, the math fidelity and bytes that follow."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.ir.cost import program_cost
from onnx2ttnn.ir.device import DEVICES
from onnx2ttnn.lowering.weight_dtype import MODEL_ERROR_BUDGET, bfp_round, relative_error
from onnx2ttnn.sim._rounding import bfp4_round, bfp_round as sim_bfp_round
from onnx2ttnn.verify import verify
from tests.test_cli import assert_clean_failure, listing, run_inprocess

F = TensorProto.FLOAT
V = helper.make_tensor_value_info
rng = np.random.default_rng(0)


def _mlp(weights: list[np.ndarray], rows: int = 8):
    """x -> MatMul(W0) -> Relu -> MatMul(W1) -> ... (the last without Relu)."""
    nodes, inits, x = [], [], "x"
    for i, w in enumerate(weights):
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"], name=f"mm{i}"))
        inits.append(numpy_helper.from_array(np.asarray(w, np.float32), f"w{i}"))
        x = f"m{i}"
        if i < len(weights) - 1:
            nodes.append(helper.make_node("Relu", [x], [f"r{i}"], name=f"relu{i}"))
            x = f"r{i}"
    graph = helper.make_graph(nodes, "mlp", [V("x", F, [rows, weights[0].shape[0]])],
                              [V(x, F, [rows, weights[-1].shape[1]])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _gaussian(k, n):
    return (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)


# --- rounding -------------------------------------------------------------------------------------------
def test_bfp4_keeps_three_magnitude_bits_below_the_shared_exponent():
    # one group of 16: max |x| = 1.5 -> E = 0, unit 2**-2; magnitudes 0..7 units
    row = torch.tensor([1.5, 1.0, -0.75, 0.125, 0.375, 0.3, 1.9, 0.0625] + [0.0] * 8)
    expected = torch.tensor([1.5, 1.0, -0.75, 0.0, 0.5, 0.25, 1.75, 0.0] + [0.0] * 8)
    # 0.125 = half a unit: tie to even (0); 0.375 = 1.5 units: tie to even (2 units); 1.9 = 7.6 units saturates
    # at 7; 0.0625 flushes (more than 3 binades below E)
    assert torch.equal(bfp4_round(row), expected)


def test_bfp4_drops_the_bits_below_the_shared_exponent_before_rounding():
    # tt-metal shifts the mantissa right by E - e first: 0.125 + 2**-12 at E = 0 is 2**-3 + 2**-12; its excess
    # over the tie (half a 2**-2 unit) lies 11 bits below its own exponent, within the 21 rounding bits, so it
    # rounds up; 2**-3 + 2**-30 has its excess only in the dropped bits and rounds as a tie (down, to even)
    row = torch.tensor([1.0, 0.125 + 2 ** -12, 0.125 + 2 ** -26] + [0.0] * 13, dtype=torch.float32)
    out = bfp4_round(row)
    assert out[1].item() == 0.25 and out[2].item() == 0.0


def test_numpy_and_simulator_block_float_rounding_agree():
    x = (rng.standard_normal((3, 40)) * np.exp(rng.uniform(-8, 8, (3, 40)))).astype(np.float32)
    for fmt, bits in (("bfp8", 7), ("bfp4", 3)):
        np.testing.assert_array_equal(bfp_round(x, fmt), sim_bfp_round(torch.from_numpy(x), bits).numpy())


def test_relative_errors_of_gaussian_weights():
    w = _gaussian(256, 256)
    assert 0.003 < relative_error(w, "bfp8") < 0.01
    assert 0.05 < relative_error(w, "bfp4") < 0.2
    assert relative_error(np.zeros((4, 16)), "bfp4") == 0.0


# --- formats in the program -----------------------------------------------------------------------------
@pytest.mark.parametrize("fmt, ttnn_dtype, fidelity", [("bfp8", "bfloat8_b", "HiFi2"), ("bfp4", "bfloat4_b", "LoFi")])
def test_forced_formats_upload_every_matmul_weight_in_them(fmt, ttnn_dtype, fidelity):
    model = _mlp([_gaussian(64, 96), _gaussian(96, 32)])
    conversion = convert(model, weights=fmt)
    source = conversion.source
    assert source.count(f"dtype=ttnn.{ttnn_dtype}, layout=ttnn.TILE_LAYOUT") == 2
    assert f"math_fidelity=ttnn.MathFidelity.{fidelity}" in source
    assert set(conversion.weight_formats().values()) == {(fmt, f"--weights {fmt}")}
    assert f"weights={fmt}" in source  # the header names the format


def test_bf16_uploads_bfloat16_and_records_nothing():
    conversion = convert(_mlp([_gaussian(64, 96), _gaussian(96, 32)]), weights="bf16")
    assert "bfloat8_b" not in conversion.source and "bfloat4_b" not in conversion.source
    assert "weights=" not in conversion.source  # the header of the programs before --weights
    assert conversion.weight_formats() == {}


def test_weight_bytes_in_the_cost_model_follow_the_format():
    model = _mlp([_gaussian(64, 96), _gaussian(96, 32)])
    tiles = 2 * 3 + 3 * 1  # [64, 96] and [96, 32] in 32x32 tiles
    floors = {fmt: program_cost(convert(model, weights=fmt, memory="dram").module.graph, DEVICES["n150"]).floor_bytes
              for fmt in ("bf16", "bfp8", "bfp4")}
    assert floors["bf16"] - floors["bfp8"] == tiles * (2048 - 1088)
    assert floors["bfp8"] - floors["bfp4"] == tiles * (1088 - 576)


# --- auto ---------------------------------------------------------------------------------------------
def _worst_for_bfp8(k, n):
    """A weight whose every group of 16 holds one 1.0 and fifteen 2**-7, half a bfloat8_b unit below it: they
    all round (as ties, to even) to 0, the most relative error bfloat8_b can put into a weight (~0.03)."""
    w = np.full((k, n), 2.0 ** -7, np.float32)
    w[:, ::16] = 1.0
    return w


def test_auto_takes_bfloat8_b_for_gaussian_weights_and_keeps_a_weight_over_its_share_in_bf16():
    # 8 weights: each may add a squared relative error of MODEL_ERROR_BUDGET / 8; the first's ~0.03**2 is over
    weights = [_worst_for_bfp8(64, 64)] + [_gaussian(64, 64) for _ in range(7)]
    assert relative_error(weights[0], "bfp8") ** 2 > MODEL_ERROR_BUDGET / 8
    conversion = convert(_mlp(weights), activations="bf16")  # the count below is of weight uploads only
    formats = conversion.weight_formats()
    assert {formats[f"w{i}"][0] for i in range(1, 8)} == {"bfp8"}
    dtype, why = formats["w0"]
    assert dtype == "bf16" and "over its share" in why
    assert conversion.source.count("dtype=ttnn.bfloat8_b") == 7
    # with fewer weights the same one fits its (larger) share, in bfloat4_b even: its 2**-7 values flush to zero
    # in both formats, so bfloat4_b adds no more error than bfloat8_b
    assert convert(_mlp(weights[:2])).weight_formats()["w0"][0] == "bfp4"


def test_auto_takes_bfloat4_b_for_weights_it_represents_exactly():
    signs = np.where(rng.random((64, 32)) < 0.5, -0.5, 0.5).astype(np.float32)  # +-0.5: exact in bfloat4_b
    conversion = convert(_mlp([signs]))
    assert conversion.weight_formats()["w0"] == ("bfp4", "relative error 0.0000")
    assert "dtype=ttnn.bfloat4_b" in conversion.source


@pytest.mark.parametrize("kind", ["conv", "gemm"])
def test_auto_keeps_the_weight_of_a_tail_sigmoids_logit_in_bf16(kind):
    from tests.lowering.test_accuracy import tail_model

    conversion = convert(tail_model(kind))
    assert set(conversion.weight_formats().values()) == {
        ("bf16", "computes the float32 logit of a sigmoid or exp at the output tail")}
    assert "bfloat8_b" not in conversion.source and "bfloat4_b" not in conversion.source


def test_auto_share_shrinks_with_the_number_of_weights():
    # bfloat8_b's ~0.006 on Gaussian weights fits the share of 3 weights, not that of 1000
    w = _gaussian(64, 64)
    assert relative_error(w, "bfp8") ** 2 <= MODEL_ERROR_BUDGET / 3
    assert relative_error(w, "bfp8") ** 2 > MODEL_ERROR_BUDGET / 1000


def test_auto_and_forced_formats_pass_verify_on_the_simulator():
    model = _mlp([_gaussian(64, 128), _gaussian(128, 128), _gaussian(128, 32)])
    for fmt in ("auto", "bfp8"):
        report = verify(model, weights=fmt)
        assert report.passed, report
    # bfloat4_b everywhere is measurably worse than bfloat8_b (both compared with onnxruntime)
    pcc = {fmt: min(o.pcc for o in verify(model, weights=fmt).outputs)
           for fmt in ("bfp8", "bfp4")}
    assert pcc["bfp4"] < pcc["bfp8"]


# --- command line -------------------------------------------------------------------------------------
def test_cli_summary_names_the_formats_and_the_layers_kept_in_bf16(tmp_path):
    import onnx

    onnx.save(_mlp([_worst_for_bfp8(64, 64)] + [_gaussian(64, 64) for _ in range(7)]), tmp_path / "m.onnx")
    run = run_inprocess(["convert", "m.onnx", "-o", "m.py"], tmp_path)
    assert run.code == 0, run.stderr
    line = next(ln for ln in run.stdout.splitlines() if ln.startswith("weight formats:"))
    assert "1 bf16, 7 bfloat8_b" in line and "kept bf16: w0: bfloat8_b would add a relative error" in line


def test_cli_refuses_an_unknown_format(tmp_path):
    import onnx

    onnx.save(_mlp([_gaussian(64, 32)]), tmp_path / "m.onnx")
    before = listing(tmp_path)
    run = run_inprocess(["convert", "m.onnx", "-o", "m.py", "--weights", "fp8"], tmp_path)
    assert run.code == 2 and "Invalid value for '--weights'" in run.stderr
    assert listing(tmp_path) == before


# --- the bisection tool (tools/weight_bisect.py) -------------------------------------------------------------
def test_bisection_finds_the_weights_to_keep_in_bf16(tmp_path):
    import onnx

    from tools.weight_bisect import bisect, worst_pcc

    # under bfloat4_b only w0, a Gaussian weight, carries an error (~0.1); w1 and w2 (+-0.5) are exact in it
    path = str(tmp_path / "m.onnx")
    signs = [np.where(rng.random((64, 64)) < 0.5, -0.5, 0.5).astype(np.float32) / 8 for _ in range(2)]
    onnx.save(_mlp([_gaussian(64, 64)] + signs), path)
    options, threshold = {"weights": "bfp4"}, 0.999
    assert worst_pcc(path, options)[0] < threshold
    lines = []
    assert bisect(path, options, threshold, log=lines.append) == ["w0"]
    pcc, formats = worst_pcc(path, {**options, "keep_bf16": ("w0",)})
    assert pcc >= threshold and formats["w0"] == ("bf16", "kept by keep_bf16") and formats["w1"][0] == "bfp4"
    assert "  culprit w0: kept in bf16" in lines[-1]


def test_dequantized_weights_keep_their_rule_under_auto_and_bf16_and_take_a_forced_format():
    from tests.lowering.test_quantize import qdq_linear

    model = qdq_linear()
    for fmt in ("auto", "bf16"):
        conversion = convert(model, weights=fmt)
        assert conversion.quantized_weights() == {"wd": ("bfp8", "")} and conversion.weight_formats() == {}
    forced = convert(model, weights="bfp4")
    assert forced.quantized_weights() == {"wd": ("bfp4", "--weights bfp4")}
    assert "dtype=ttnn.bfloat4_b" in forced.source


def _embedding_model(table: np.ndarray):
    node = helper.make_node("Gather", ["table", "ids"], ["rows"], name="embed")
    graph = helper.make_graph([node], "embed", [V("ids", TensorProto.INT64, [1, 7])],
                              [V("rows", F, [1, 7, table.shape[1]])],
                              initializer=[numpy_helper.from_array(table, "table")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_embedding_tables_take_bfloat8_b_and_never_bfloat4_b():
    model = _embedding_model(rng.standard_normal((50, 64)).astype(np.float32))
    for fmt in ("bfp4", "bfp8"):
        conversion = convert(model, weights=fmt)
        assert conversion.weight_formats()["table"][0] == "bfp8"
        assert "dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT" in conversion.source
        assert "bfloat4_b" not in conversion.source
        ids = {"ids": rng.integers(0, 50, (1, 7)).astype(np.int64)}
        assert verify(model, conversion=conversion, inputs=ids).passed
    assert convert(model, weights="bfp4").weight_formats()["table"][1].endswith("refuses bfloat4_b")
    assert "bfloat8_b" not in convert(model, weights="bf16").source


def test_auto_keeps_embedding_tables_row_major_bf16():
    """ttnn.embedding untilizes a TILE table whole on every call (docs/ttnn-facts.md §31): auto keeps the table
    ROW_MAJOR, so the call gathers its rows only."""
    model = _embedding_model(rng.standard_normal((50, 64)).astype(np.float32))
    conversion = convert(model, weights="auto")
    fmt, why = conversion.weight_formats()["table"]
    assert fmt == "bf16" and "untilizes a TILE table" in why
    upload = next(line for line in conversion.source.splitlines() if "params['table'] = ttnn.from_torch" in line)
    assert "dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT" in upload and "bfloat8_b" not in conversion.source
    ids = {"ids": rng.integers(0, 50, (1, 7)).astype(np.int64)}
    assert verify(model, conversion=conversion, inputs=ids).passed


def test_auto_keeps_a_dequantized_embedding_table_row_major_bf16():
    """A QDQ model's table (DequantizeLinear of int8 codes, then Gather) stays ROW_MAJOR under auto as a float one
    does: in bfloat8_b TILE a QDQ BERT-base's word table cost 72 MB of DRAM traffic per forward."""
    codes = rng.integers(-127, 128, (50, 64)).astype(np.int8)
    nodes = [helper.make_node("DequantizeLinear", ["codes", "s", "z"], ["table"], name="dq"),
             helper.make_node("Gather", ["table", "ids"], ["rows"], name="embed")]
    graph = helper.make_graph(nodes, "embed", [V("ids", TensorProto.INT64, [1, 7])], [V("rows", F, [1, 7, 64])],
                              initializer=[numpy_helper.from_array(codes, "codes"),
                                           numpy_helper.from_array(np.float32(0.02), "s"),
                                           numpy_helper.from_array(np.int8(0), "z")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    conversion = convert(model)
    (fmt, why), = conversion.quantized_weights().values()
    assert fmt == "bf16" and "untilizes a TILE table" in why
    assert "layout=ttnn.ROW_MAJOR_LAYOUT" in conversion.source and "bfloat8_b" not in conversion.source
    ids = {"ids": rng.integers(0, 50, (1, 7)).astype(np.int64)}
    assert verify(model, conversion=conversion, inputs=ids).passed
    assert "bfloat8_b" in convert(model, weights="bfp8").source  # a forced format still applies


def test_a_model_with_an_exponential_output_tail_shares_a_quarter_of_the_budget(monkeypatch):
    """n Gaussian weights whose bfloat8_b error fits a share of the budget but not a quarter of it: bfloat8_b
    without a tail, bf16 with a Sigmoid at the output (its logit is what verify compares there).  The measured
    gain is held at 1 here: a ~45-layer random Relu MLP amplifies its weights' errors 0.4 to 2.5 times depending
    on the draw (measure-weight-gain, tested in tests/passes/test_measure_weight_gain.py)."""
    from onnx2ttnn.lowering.weight_dtype import EXPONENTIAL_TAIL_SHARE
    from onnx2ttnn.lowering.weight_gain import WeightGain

    monkeypatch.setattr("onnx2ttnn.passes.measure_weight_gain.measure", lambda *args: WeightGain())

    weights = [_gaussian(64, 64) for _ in range(2)]
    r2 = max(relative_error(w, "bfp8") ** 2 for w in weights)
    n = int(MODEL_ERROR_BUDGET / r2 / 2)  # r2 <= budget / n, and r2 > budget / (4 n)
    weights = [_gaussian(64, 64) for _ in range(n)]
    assert max(relative_error(w, "bfp8") ** 2 for w in weights) <= MODEL_ERROR_BUDGET / n
    plain = _mlp(weights)
    assert {f for f, _ in convert(plain).weight_formats().values()} == {"bfp8"}
    tailed = _mlp(weights)
    out = tailed.graph.output[0].name
    tailed.graph.node.append(helper.make_node("Sigmoid", [out], ["y"], name="tail"))
    tailed.graph.output[0].name = "y"
    formats = convert(tailed).weight_formats()
    assert EXPONENTIAL_TAIL_SHARE == 4 and {f for f, _ in formats.values()} == {"bf16"}
    assert all("a quarter: the model ends in an exponential tail" in why or "logit" in why
               for _, why in formats.values())


def _block_float_params(conversion) -> set[str]:
    return {n.attrs["_param"] for n in conversion.module.graph.nodes
            if n.attrs.get("_param") and n.attrs.get("_dtype") in ("bfp8", "bfp4")}


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_recurrent_weights_follow_weights(op):
    """The input projection W and the recurrent weights R take a forced --weights format like any matmul weight
    (they stayed bf16 under every option); under auto they stay bf16, outside the budget (the recurrence carries
    their error into every later step)."""
    from tests.lowering.test_recurrent import recurrent_model

    m = recurrent_model(op, direction="bidirectional")
    forced = _block_float_params(convert(m, weights="bfp8"))
    assert any(p.endswith("_w") for p in forced) and any("_r" in p for p in forced)
    assert not _block_float_params(convert(m, weights="bf16"))
    auto = convert(m)
    assert not _block_float_params(auto)
    assert verify(m, conversion=auto).passed
    assert verify(m, weights="bfp8").passed


def _greedy_loop(pick: str):
    """x @ w, then a Loop of at most 50 steps that stops once `pick` (ArgMax: a greedy decision; ReduceMax: none)
    of its state reaches 40 (a data-dependent exit: a host region)."""
    h = helper
    body = h.make_graph([
        h.make_node("Add", ["s", "one"], ["s2"]),
        h.make_node(pick, ["s2"], ["p"], axis=-1, keepdims=0) if pick == "ArgMax" else
        h.make_node(pick, ["s2"], ["p"], keepdims=0),
        h.make_node("Cast", ["p"], ["pf"], to=TensorProto.FLOAT),
        h.make_node("ReduceMax", ["pf"], ["m"], keepdims=0),
        h.make_node("Less", ["m", "lim"], ["cond_out"])], "body",
        [h.make_tensor_value_info("i", TensorProto.INT64, []), h.make_tensor_value_info("cond", TensorProto.BOOL, []),
         h.make_tensor_value_info("s", TensorProto.FLOAT, [1, 64, 64])],
        [h.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         h.make_tensor_value_info("s2", TensorProto.FLOAT, [1, 64, 64])],
        [h.make_tensor("one", TensorProto.FLOAT, [], [1.0]), h.make_tensor("lim", TensorProto.FLOAT, [], [40.0])])
    w = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32) / 8
    graph = h.make_graph([h.make_node("MatMul", ["x", "w"], ["a"]),
                          h.make_node("Loop", ["M", "c0", "a"], ["y"], body=body, name="decoder")], "greedy",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 64])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 64])],
                         [numpy_helper.from_array(w, "w"), h.make_tensor("M", TensorProto.INT64, [], [50]),
                          h.make_tensor("c0", TensorProto.BOOL, [], [True])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_auto_keeps_the_weights_of_a_model_that_decides_greedily_in_a_loop_in_bf16():
    """SLANet's decoder picks each token by ArgMax and builds on it; its bfloat8_b weights' errors flipped picks
    that float32 keeps (docs/design.md §6.42)."""
    fmt, why = convert(_greedy_loop("ReduceMax")).weight_formats()["w"]  # no pick, but its exit compares floats
    assert fmt == "bf16" and "branches on a comparison of float values at Loop 'decoder'" in why
    fmt, why = convert(_greedy_loop("ArgMax")).weight_formats()["w"]
    assert fmt == "bf16" and "decides greedily in Loop 'decoder'" in why
    assert convert(_greedy_loop("ArgMax"), weights="bfp8").weight_formats()["w"][0] == "bfp8"  # forced: as asked


def _thresholded_if(condition_from: str, through: str = ""):
    """x @ w, its mean through a sigmoid, then an If that runs a second matmul when the probability (`float`) or
    an int64 input (`int`) reaches a threshold: openWakeWord's hey_jarvis runs its verifier model when p >= 0.5."""
    h = helper
    w = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32) / 8
    then = h.make_graph([h.make_node("MatMul", ["a", "w"], ["t"])], "then", [],
                        [h.make_tensor_value_info("t", TensorProto.FLOAT, [1, 64])])
    other = h.make_graph([h.make_node("Neg", ["a"], ["e"])], "else", [],
                         [h.make_tensor_value_info("e", TensorProto.FLOAT, [1, 64])])
    compared = ["p", "half"] if condition_from == "float" else ["n", "two"]
    if through == "any":  # "any value over the threshold": a float comparison, reduced through a cast
        decide = [h.make_node("Greater", ["a", "half"], ["ge_all"]),
                  h.make_node("Cast", ["ge_all"], ["ge_f"], to=TensorProto.FLOAT),
                  h.make_node("ReduceMax", ["ge_f"], ["ge_any"], keepdims=0),
                  h.make_node("Cast", ["ge_any"], ["c"], to=TensorProto.BOOL)]
    elif through == "cast":  # a float cast to bool: p - 0.5 != 0
        decide = [h.make_node("Sub", ["p", "half"], ["d"]), h.make_node("Cast", ["d"], ["c"], to=TensorProto.BOOL)]
    else:
        decide = [h.make_node("GreaterOrEqual", compared, ["ge"]),
                  h.make_node("Cast", ["ge"], ["c"], to=TensorProto.BOOL)]
    graph = h.make_graph([h.make_node("MatMul", ["x", "w"], ["a"]),
                          h.make_node("ReduceMean", ["a"], ["m"], keepdims=0),
                          h.make_node("Sigmoid", ["m"], ["p"]), *decide,
                          h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="verifier")],
                         "thresholded",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64]),
                          h.make_tensor_value_info("n", TensorProto.INT64, [])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64]),
                          h.make_tensor_value_info("p", TensorProto.FLOAT, [])],
                         [numpy_helper.from_array(w, "w"), h.make_tensor("half", TensorProto.FLOAT, [], [0.5]),
                          h.make_tensor("two", TensorProto.INT64, [], [2])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_auto_keeps_the_weights_of_a_model_that_branches_on_a_float_comparison_in_bf16():
    """openWakeWord's hey_jarvis (its 0.4.0 wheel): bfloat8_b weights moved its first stage's p = 0.503 to 0.484
    on verify's inputs, so the program skipped the verifier stage onnxruntime ran (docs/design.md §6.42)."""
    fmt, why = convert(_thresholded_if("float")).weight_formats()["w"]
    assert fmt == "bf16" and "branches on a comparison of float values at If 'verifier'" in why
    assert convert(_thresholded_if("int")).weight_formats()["w"][0] == "bfp8"  # an integer branch: the budget
    for through in ("any", "cast"):  # (the review: conditions the first walk missed)
        assert convert(_thresholded_if("float", through)).weight_formats()["w"][0] == "bf16", through


def test_a_float_comparison_deciding_a_loop_or_an_if_inside_a_loop_is_a_decision_too():
    """greedy_decision looks at a Loop's body's next condition and at the Ifs inside bodies (review)."""
    import onnx_graphsurgeon as gs

    from onnx2ttnn.lowering.weight_dtype import greedy_decision

    h = helper
    f4 = [h.make_tensor_value_info(n, TensorProto.FLOAT, [4]) for n in ("o", "v2", "x", "y")]

    def loop(body_nodes, cond_out):
        body = h.make_graph(body_nodes, "body", [h.make_tensor_value_info("i", TensorProto.INT64, []),
                                                 h.make_tensor_value_info("cond", TensorProto.BOOL, []),
                                                 h.make_tensor_value_info("v", TensorProto.FLOAT, [4])],
                            [h.make_tensor_value_info(cond_out, TensorProto.BOOL, []), f4[1]],
                            [h.make_tensor("lim", TensorProto.FLOAT, [], [3.0])])
        graph = h.make_graph([h.make_node("Loop", ["M", "", "x"], ["y"], body=body, name="steps")], "g", [f4[2]],
                             [f4[3]], [h.make_tensor("M", TensorProto.INT64, [], [5])])
        return gs.import_onnx(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]))

    exit_by_value = [h.make_node("ReduceMax", ["v"], ["mx"], keepdims=0), h.make_node("Less", ["mx", "lim"], ["go"]),
                     h.make_node("Relu", ["v"], ["v2"])]
    assert "Loop 'steps'" in greedy_decision(loop(exit_by_value, "go"))
    then = h.make_graph([h.make_node("Neg", ["v"], ["o"])], "then", [], [f4[0]])
    other = h.make_graph([h.make_node("Relu", ["v"], ["o"])], "else", [], [f4[0]])
    if_inside = [h.make_node("ReduceMax", ["v"], ["mx"], keepdims=0), h.make_node("Less", ["mx", "lim"], ["go"]),
                 h.make_node("If", ["go"], ["v2"], then_branch=then, else_branch=other, name="inner"),
                 h.make_node("Identity", ["cond"], ["keep"])]
    assert "If 'inner'" in greedy_decision(loop(if_inside, "keep"))
