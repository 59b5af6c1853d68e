"""choose-activation-formats (--activations auto|bf16|bfp8): which tensors between matmuls / linears go bfloat8_b,
the dtype= arguments that keep every other tensor's dtype, auto's budget, and the bytes the cost model counts."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.cost import program_cost
from onnx2ttnn.ir.device import DEVICES
from onnx2ttnn.ir.graph import TTNNRef, layout_of
from onnx2ttnn.lowering.weight_dtype import MODEL_ERROR_BUDGET
from onnx2ttnn.options import Options
from onnx2ttnn.passes.choose_activation_formats import ACTIVATION_ERROR

F = TensorProto.FLOAT
V = helper.make_tensor_value_info
rng = np.random.default_rng(3)


def _chain(widths: list[int], rows: int = 32, softmax_reads: int = -1, exact: bool = False):
    """x -> MatMul -> Relu -> MatMul -> ... over `widths` (the last MatMul without Relu); the output of MatMul
    number `softmax_reads` also feeds a Softmax that is a second graph output.  `exact`: weights of +-1/8, which
    block floats hold exactly (--weights auto takes bfloat4_b for them and spends no error budget)."""
    nodes, inits, outputs, x = [], [], [], "x"
    for i, (k, n) in enumerate(zip(widths, widths[1:])):
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"], name=f"mm{i}"))
        w = np.sign(rng.standard_normal((k, n))) / 8 if exact else rng.standard_normal((k, n)) / np.sqrt(k)
        inits.append(numpy_helper.from_array(w.astype(np.float32), f"w{i}"))
        x = f"m{i}"
        if i == softmax_reads:
            nodes.append(helper.make_node("Softmax", [x], ["side"], name="side", axis=-1))
            outputs.append(V("side", F, [rows, n]))
        if i < len(widths) - 2:
            nodes.append(helper.make_node("Relu", [x], [f"r{i}"], name=f"relu{i}"))
            x = f"r{i}"
    outputs.insert(0, V(x, F, [rows, widths[-1]]))
    graph = helper.make_graph(nodes, "chain", [V("x", F, [rows, widths[0]])], outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _matrix_calls(result):
    return [n for n in result.module.graph.nodes if n.op in ("linear", "matmul")]


def test_bfp8_takes_every_tensor_only_matmuls_read_and_keeps_the_rest():
    result = convert(_chain([64, 128, 96, 64]), activations="bfp8", weights="bf16")
    calls = _matrix_calls(result)
    assert len(calls) == 3
    dtypes = [layout_of(c.outputs[0]).dtype for c in calls]
    assert dtypes == ["bfp8", "bfp8", "bf16"]  # the last is the graph output
    assert [c.attrs.get("dtype") for c in calls] == [TTNNRef("bfloat8_b")] * 2 + [TTNNRef("bfloat16")]
    assert calls[0].attrs["activation"] == "relu"  # the relu fused: the linear writes the bfp8 tensor itself
    notes = result.module.notes["choose-activation-formats"]
    assert notes["candidates"] == 2 and notes["bfp8"] == 2
    # the reader of a bfloat8_b tensor multiplies at HiFi2 (its least precise operand, choose-kernel-configs)
    assert calls[1].attrs["compute_kernel_config"].math_fidelity == "HiFi2"


def test_bf16_changes_nothing():
    result = convert(_chain([64, 128, 96, 64]), activations="bf16", weights="bf16")
    assert all(layout_of(t).dtype != "bfp8" for n in result.module.graph.nodes for t in n.outputs
               if layout_of(t) is not None)
    assert all("dtype" not in c.attrs for c in _matrix_calls(result))
    assert result.module.notes["choose-activation-formats"]["candidates"] == 0
    assert "activations" not in Options(activations="bf16").describe()  # the header of the programs of before


def test_a_tensor_another_op_reads_stays_bf16():
    result = convert(_chain([64, 128, 96, 64], softmax_reads=1), activations="bfp8", weights="bf16")
    dtypes = [layout_of(c.outputs[0]).dtype for c in _matrix_calls(result)]
    assert dtypes == ["bfp8", "bf16", "bf16"]  # m1 feeds a softmax too
    assert result.module.notes["choose-activation-formats"]["candidates"] == 1


def test_fp32_programs_and_unknown_formats():
    result = convert(_chain([64, 128, 64]), activations="bfp8", dtype="fp32")
    assert result.module.notes["choose-activation-formats"]["bfp8"] == 0
    with pytest.raises(ConversionError, match="unknown activation format 'bfp4'"):
        convert(_chain([64, 128, 64]), activations="bfp4")


def test_auto_takes_the_largest_tensors_while_the_budget_holds():
    # weights block floats hold exactly spend nothing: the budget holds floor(budget / ACTIVATION_ERROR^2) tensors
    fits = int(MODEL_ERROR_BUDGET / ACTIVATION_ERROR ** 2)
    widths = [64] + [64, 96] * ((fits + 4) // 2) + [64]  # more candidates than fit; two sizes
    result = convert(_chain(widths, exact=True), activations="auto")
    assert result.module.notes["lower-to-ttnn"]["weight_error"] == 0.0
    notes = result.module.notes["choose-activation-formats"]
    assert notes["candidates"] == len(widths) - 2 > fits
    assert notes["bfp8"] == fits and notes["error_spent"] <= notes["error_budget"] == MODEL_ERROR_BUDGET
    chosen = [c for c in _matrix_calls(result) if layout_of(c.outputs[0]).dtype == "bfp8"]
    wide = sum(1 for c in _matrix_calls(result)[:-1] if c.outputs[0].shape[-1] == 96)
    assert sum(1 for c in chosen if c.outputs[0].shape[-1] == 96) == wide  # every wide one before a narrow one


def test_auto_under_bf16_weights_is_the_program_of_before():
    # --weights bf16 reproduces the programs (and numerics) of before the block-float options
    model = _chain([64, 128, 96, 64])
    result = convert(model, weights="bf16")
    assert result.module.notes["choose-activation-formats"]["bfp8"] == 0
    assert result.source == convert(model, weights="bf16", activations="bf16").source
    assert "activations=" not in result.source
    assert convert(model, weights="bf16", activations="bfp8").module.notes["choose-activation-formats"]["bfp8"] == 2


def test_auto_leaves_activations_bf16_when_the_weights_spend_the_budget():
    # bfloat4_b weights add r ~ 0.1 each: over the budget alone, nothing left for activations
    result = convert(_chain([64, 128, 96, 64]), activations="auto", weights="bfp4")
    lowered = result.module.notes["lower-to-ttnn"]
    assert lowered["weight_error"] > lowered["error_budget"]
    assert result.module.notes["choose-activation-formats"]["bfp8"] == 0
    forced = convert(_chain([64, 128, 96, 64]), activations="bfp8", weights="bfp4")
    assert forced.module.notes["choose-activation-formats"]["bfp8"] == 2


def test_the_cost_model_counts_a_bfloat8_b_tile_at_1088_bytes():
    model = _chain([64, 512, 64], rows=64)
    costs = {fmt: program_cost(convert(model, activations=fmt, weights="bf16", memory="dram").module.graph,
                               DEVICES["n150"]).dram_bytes for fmt in ("bf16", "bfp8")}
    tiles = (64 // 32) * (512 // 32)  # the [64, 512] tensor between the matmuls: written once, read once
    assert costs["bf16"] - costs["bfp8"] == 2 * tiles * (2048 - 1088)


def test_cli_summary_counts_the_bfloat8_b_activations(tmp_path):
    import onnx

    from tests.test_cli import run_inprocess

    onnx.save(_chain([64, 128, 96, 64]), tmp_path / "m.onnx")
    run = run_inprocess(["convert", "m.onnx", "-o", "m.py", "--weights", "bf16", "--activations", "bfp8"], tmp_path)
    assert run.code == 0, run.stderr
    line = next(ln for ln in run.stdout.splitlines() if ln.startswith("activation formats:"))
    assert line.startswith("activation formats: 2 of 2 matmul-to-matmul tensors in bfloat8_b")
    assert "dtype=ttnn.bfloat8_b" in (tmp_path / "m.py").read_text()
    run = run_inprocess(["convert", "m.onnx", "-o", "m.py", "--weights", "bf16", "--activations", "bf16"], tmp_path)
    assert run.code == 0 and "activation formats:" not in run.stdout
    assert "dtype=ttnn.bfloat8_b" not in (tmp_path / "m.py").read_text()


def _through_reshape(shape):
    """x [32, 64] -> MatMul -> Reshape(shape) -> MatMul (its weight 2-D) -> output."""
    k, n = 64, 128
    w0 = numpy_helper.from_array((rng.standard_normal((k, n)) / 8).astype(np.float32), "w0")
    w1 = numpy_helper.from_array((rng.standard_normal((shape[-1], 64)) / 8).astype(np.float32), "w1")
    to = numpy_helper.from_array(np.asarray(shape, np.int64), "to")
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["m0"], name="mm0"),
             helper.make_node("Reshape", ["m0", "to"], ["r"], name="view"),
             helper.make_node("MatMul", ["r", "w1"], ["y"], name="mm1")]
    graph = helper.make_graph(nodes, "view", [V("x", F, [32, k])], [V("y", F, list(shape[:-1]) + [64])],
                              initializer=[w0, w1, to])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_a_reshape_keeping_the_tiles_goes_bfloat8_b_with_its_source():
    result = convert(_through_reshape([1, 32, 128]), activations="bfp8", weights="bf16")
    nodes = result.module.graph.nodes
    view = next(n for n in nodes if n.op == "reshape")
    assert layout_of(view.inputs[0]).dtype == layout_of(view.outputs[0]).dtype == "bfp8"
    assert _matrix_calls(result)[1].attrs["dtype"] == TTNNRef("bfloat16")
    # a reshape that regroups the last dims (not probed in bfloat8_b) keeps the tensor bf16
    other = convert(_through_reshape([32, 2, 64]), activations="bfp8", weights="bf16")
    assert other.module.notes["choose-activation-formats"]["candidates"] == 0
