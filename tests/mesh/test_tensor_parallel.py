"""Tensor-parallel programs on the simulated mesh (docs/design.md §6.21): a feed-forward pair split by
split-tensor-parallel (placements, per-chip shapes, whole weights, one all_reduce), the reduced BERT, GPT-2
and ViT on n300 (1x2), T3000 1x8 and dp x tp on T3000 2x4: the program's own main() with --check matches
onnxruntime (PCC >= 0.99) and no chip leaks; per-chip parameters shrink (--parallel auto: tests/mesh/test_auto_parallel.py)."""
from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import onnx2ttnn
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.report import placement_report
from tests.mesh.models import batch_shapes, dp_model  # noqa: F401 (dp_model is a fixture)
from tests.mesh.test_data_parallel import _run_main
from tests.program_run import forward_text


def _mlp(folder, hidden=64, width=96, vocab=0) -> str:
    """x [1, 32, hidden] -> MatMul -> Relu -> MatMul (+ bias) -> + x: one feed-forward pair (width: not a
    multiple of two chips' tiles, so the split pads it); with `vocab`, a head MatMul [hidden, vocab] (+ bias)
    after it gives the output."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((hidden, width)).astype(np.float32) / 8, "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((width, hidden)).astype(np.float32) / 8, "w2")
    b2 = numpy_helper.from_array(rng.standard_normal(hidden).astype(np.float32), "b2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["m"]), helper.make_node("Add", ["m", "b2"], ["o"]),
             helper.make_node("Add", ["o", "x"], ["y" if not vocab else "z"])]
    weights = [w1, w2, b2]
    if vocab:
        weights += [numpy_helper.from_array(rng.standard_normal((hidden, vocab)).astype(np.float32) / 8, "wv"),
                    numpy_helper.from_array(rng.standard_normal(vocab).astype(np.float32), "bv")]
        nodes += [helper.make_node("MatMul", ["z", "wv"], ["v"]), helper.make_node("Add", ["v", "bv"], ["y"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", 1, [1, 32, hidden])],
                              [helper.make_tensor_value_info("y", 1, [1, 32, vocab or hidden])], weights)
    path = str(folder / "mlp.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_a_feed_forward_pair_splits_over_the_chips(tmp_path):
    result = onnx2ttnn.convert(_mlp(tmp_path), device="n300", parallel="tp", weights="bf16")
    graph = result.module.graph
    linears = [n for n in graph.nodes if n.op == "linear"]
    first, second = linears
    # width 96 -> padded to 128 (two chips x two tiles): each chip's 64 columns, then 64 rows of the second weight
    assert list(first.outputs[0].shape) == [1, 32, 64] and list(second.inputs[1].shape) == [64, 64]
    assert str(layout_of(first.inputs[1]).mesh) == "shard1@1" and str(layout_of(first.outputs[0]).mesh) == "shard2@1"
    assert str(layout_of(second.inputs[1]).mesh) == "shard0@1" and str(layout_of(second.outputs[0]).mesh) == "partial@1"
    assert str(layout_of(second.inputs[2]).mesh) == "replicated"
    (reduce,) = [n for n in graph.nodes if n.op == "all_reduce"]
    assert reduce.inputs[0] is second.outputs[0] and str(layout_of(reduce.outputs[0]).mesh) == "replicated"
    weights = result.program.weights
    assert sorted(w.shape for w in weights.values() if w.ndim == 2 and w.shape[0] > 1) == [(64, 128), (128, 64)]
    forward = forward_text(result.source)
    assert forward.count("ttnn.all_reduce(") == 1 and "cluster_axis=1" in forward
    assert "shard_tensor_to_mesh_mapper(device, dim=1)" in result.source
    assert result.source.index("ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D)") < \
        result.source.index("ttnn.open_mesh_device(")


def test_the_split_pair_matches_onnxruntime(tmp_path):
    model = _mlp(tmp_path)
    program = str(tmp_path / "tp_ttnn.py")
    onnx2ttnn.convert(model, program, device="t3k", parallel="tp", weights="bf16").write(program)
    text, closed = _run_main(program, "t3k", "--check", "--iterations", "1")
    pccs = [float(v) for v in re.findall(r"PCC ([0-9.]+) ok", text)]
    assert pccs and min(pccs) >= 0.99 and "FAIL" not in text, text
    assert len(closed.chips) == 8 and closed.leaks_per_chip() == [[]] * 8


def test_a_vocab_projection_is_split_over_its_columns_and_gathered(tmp_path):
    """The head [64, 500] on 8 chips: its columns padded to 512 (two tiles per chip), each chip's 64 computed,
    all_gather joins them, a slice drops the 12 padding columns; the program matches onnxruntime."""
    model = _mlp(tmp_path, vocab=500)
    program = str(tmp_path / "tp_ttnn.py")
    result = onnx2ttnn.convert(model, program, device="t3k", parallel="tp", weights="bf16")
    result.write(program)
    graph = result.module.graph
    head = [n for n in graph.nodes if n.op == "linear"][-1]
    assert list(head.inputs[1].shape) == [64, 64] and list(head.outputs[0].shape) == [1, 32, 64]
    assert str(layout_of(head.inputs[1]).mesh) == "shard1@1" and str(layout_of(head.inputs[2]).mesh) == "shard1@1"
    (gather,) = [n for n in graph.nodes if n.op == "all_gather"]
    (cut,) = [n for n in graph.nodes if n.op == "slice"]
    assert gather.inputs[0] is head.outputs[0] and list(gather.outputs[0].shape) == [1, 32, 512]
    assert cut.inputs[0] is gather.outputs[0] and list(cut.outputs[0].shape) == [1, 32, 500]
    assert str(layout_of(cut.outputs[0]).mesh) == "replicated"
    assert result.module.notes["split-tensor-parallel"]["vocab_parallel"] == 1
    # ring bytes per chip (ir/ccl_cost.py ccl_bytes): the all_reduce of [1, 32, 64] and the gather of [1, 32, 512], bf16
    assert placement_report(result).ethernet_bytes == 2 * 7 * (32 * 64 * 2) // 8 + 7 * (32 * 512 * 2) // 8
    assert sorted(w.shape for w in result.program.weights.values() if w.ndim == 2 and w.shape[0] > 1) == \
        [(64, 256), (64, 512), (256, 64)]
    text, closed = _run_main(program, "t3k", "--check", "--iterations", "1")
    pccs = [float(v) for v in re.findall(r"PCC ([0-9.]+) ok", text)]
    assert pccs and min(pccs) >= 0.99 and "FAIL" not in text, text
    assert closed.leaks_per_chip() == [[]] * 8


def _tied_lm(folder, vocab=50257, hidden=256) -> str:
    """ids -> Gather(table [vocab, hidden]) -> a feed-forward pair + residual -> MatMul(., Transpose(table)): a
    language model whose head is tied to its token table as GPT-2's export writes it, at GPT-2's vocabulary."""
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal((vocab, hidden)).astype(np.float32) / 8, "table"),
               numpy_helper.from_array(rng.standard_normal((hidden, 4 * hidden)).astype(np.float32) / 8, "w1"),
               numpy_helper.from_array(rng.standard_normal((4 * hidden, hidden)).astype(np.float32) / 8, "w2")]
    nodes = [helper.make_node("Gather", ["table", "ids"], ["e"]), helper.make_node("MatMul", ["e", "w1"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["m"]),
             helper.make_node("Add", ["m", "e"], ["z"]), helper.make_node("Transpose", ["table"], ["t"], perm=[1, 0]),
             helper.make_node("MatMul", ["z", "t"], ["logits"])]
    graph = helper.make_graph(nodes, "lm", [helper.make_tensor_value_info("ids", 7, [1, 32])],
                              [helper.make_tensor_value_info("logits", 1, [1, 32, vocab])], weights)
    path = str(folder / "lm.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_a_tied_head_at_gpt2s_vocabulary_leaves_each_chip_under_a_fifth(tmp_path):
    """T3000 1x8: the table split on its width and the head over its vocab (50257 padded to 50432 columns, 6304
    per chip) leave each chip 1/8 of both: per-chip parameters <= 0.2x the one-chip program's (with the head
    replicated they are 0.55x)."""
    model = _tied_lm(tmp_path)
    one = placement_report(onnx2ttnn.convert(model, device="n150", weights="bf16"))
    tp = onnx2ttnn.convert(model, device="t3k", parallel="tp", weights="bf16")
    head = [n for n in tp.module.graph.nodes if n.op == "linear"][-1]
    assert list(head.inputs[1].shape) == [256, 6304]
    (cut,) = [n for n in tp.module.graph.nodes if n.op == "slice"]
    assert list(cut.outputs[0].shape) == [1, 32, 50257]
    assert placement_report(tp).parameter_bytes <= 0.2 * one.parameter_bytes


@pytest.mark.parametrize("device,mesh,batch", [("n300", "", 1), ("t3k", "1x8", 1), ("t3k", "2x4", 2)])
def test_gpt2_with_its_lm_head_matches_onnxruntime(dp_model, device, mesh, batch, tmp_path):
    """GPT-2 with its tied LM head (the zoo's gpt2_lm, reduced: vocab 512): the head's weight, a transposed
    copy of the token table after constant folding, is split over the vocab (over a row's 4 chips on 2x4, the
    batch over the rows), the logits gathered."""
    model = dp_model("gpt2_lm")
    program = str(tmp_path / "tp_ttnn.py")
    result = onnx2ttnn.convert(model, program, device=device, mesh=mesh, parallel="tp",
                               input_shapes=batch_shapes(model, batch))
    result.write(program)
    chips, tp = (2, 2) if device == "n300" else (8, 8 // batch)
    head = [n for n in result.module.graph.nodes if n.op == "linear"][-1]
    assert list(head.inputs[1].shape) == [64, 512 // tp] and str(layout_of(head.inputs[1]).mesh).endswith("shard1@1")
    forward = forward_text(result.source)
    # the logits; on n300 the token table's 64 columns split into whole tiles too (not on 4 or 8 chips)
    assert forward.count("ttnn.all_gather(") == 1 + (tp == 2) and "ttnn.slice(" not in forward
    text, closed = _run_main(program, device, "--check", "--iterations", "1")
    pccs = [float(v) for v in re.findall(r"PCC ([0-9.]+) ok", text)]
    assert pccs and min(pccs) >= 0.99 and "FAIL" not in text, text
    shapes = re.findall(r": shape \((\d+), 16, 512\)", text)
    assert shapes and all(int(s) == batch for s in shapes), text
    assert len(closed.chips) == chips and closed.leaks_per_chip() == [[]] * chips


# (model, device, mesh, batch): tp over one row (n300, T3000 1x8), dp x tp on T3000 2x4 (2 rows x 4 columns)
CASES = [("bert", "n300", "", 1), ("gpt2", "n300", "", 1), ("vit", "t3k", "1x8", 1), ("bert", "t3k", "1x8", 1),
         ("gpt2", "t3k", "2x4", 2), ("vit", "t3k", "2x4", 2)]


@pytest.mark.parametrize("name,device,mesh,batch", CASES, ids=[f"{c[0]}-{c[1]}{c[2] and '-' + c[2]}" for c in CASES])
def test_tensor_parallel_program_matches_onnxruntime(dp_model, name, device, mesh, batch, tmp_path):
    model = dp_model(name)
    program = str(tmp_path / "tp_ttnn.py")
    result = onnx2ttnn.convert(model, program, device=device, mesh=mesh, parallel="tp",
                               input_shapes=batch_shapes(model, batch))
    result.write(program)
    forward = forward_text(result.source)
    assert forward.count("ttnn.all_reduce(") == 4  # two layers: attention and FF each
    # the token table (64 columns) splits into whole tiles over 2 chips only; ViT looks nothing up
    assert forward.count("ttnn.all_gather(") == (name != "vit" and device == "n300")
    text, closed = _run_main(program, device, "--check", "--iterations", "1")
    pccs = [float(v) for v in re.findall(r"PCC ([0-9.]+) ok", text)]
    assert pccs and min(pccs) >= 0.99 and "FAIL" not in text, text
    shapes = re.findall(r": shape \((\d+),", text)
    assert shapes and all(int(s) == batch for s in shapes), text
    chips = len(closed.chips)
    assert chips == (2 if device == "n300" else 8) and closed.leaks_per_chip() == [[]] * chips


def test_each_chip_holds_its_share_of_the_layers(dp_model):
    """tp on T3000 1x8: the split weights per chip are an eighth; what stays replicated (embeddings, norms,
    pooler) is whole; the report counts the all_reduces' ethernet bytes."""
    model = dp_model("bert")
    one = onnx2ttnn.convert(model, device="n150", input_shapes=batch_shapes(model, 1), weights="bf16")
    tp = onnx2ttnn.convert(model, device="t3k", parallel="tp", input_shapes=batch_shapes(model, 1), weights="bf16")
    single, per_chip = placement_report(one), placement_report(tp)
    split = [n for n in tp.module.graph.nodes if n.attrs.get("_param") and n.attrs.get("_tp") != (None,)
             and n.attrs.get("_tp")]
    assert split and all(layout_of(n.outputs[0]).mesh.tp is not None for n in split)
    assert per_chip.parameter_bytes < single.parameter_bytes
    assert per_chip.ethernet_bytes > 0 and single.ethernet_bytes == 0
    assert "CCL traffic:" in per_chip.text()
