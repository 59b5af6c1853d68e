"""insert-moves: the plan's to_memory_config moves out of DRAM-only outputs, put into the graph after
place-memory; kept only where they pay; programs with a move match onnxruntime."""
from __future__ import annotations

import onnx
import onnx_graphsurgeon as gs
import pytest

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.cost import program_cost
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.memory.plan import PlannedMove
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.insert_moves import InsertMoves
from onnx2ttnn.verify import verify
from tests.memory.memory_models import conv_model, run_pipeline


def test_auto_moves_a_conv_output_read_twice_to_l1_and_frees_the_dram_original():
    module, _ = run_pipeline(conv_model(True))
    nodes = module.graph.nodes
    k = next(i for i, n in enumerate(nodes) if n.op == "to_memory_config")
    conv = nodes[k].inputs[0].inputs[0]
    assert conv.op == "conv2d" and all(n.op == "deallocate" for n in nodes[nodes.index(conv) + 1:k])
    assert layout_of(nodes[k].inputs[0]).buffer == "dram" and layout_of(nodes[k].outputs[0]).buffer == "l1"
    assert nodes[k + 1].op == "deallocate" and nodes[k + 1].inputs[0] is nodes[k].inputs[0]
    readers = [n.op for n in nodes[k].outputs[0].outputs if n.op != "deallocate"]
    assert sorted(readers) == ["add", "sigmoid"]
    assert module.notes["place-memory"]["moves_to_l1"] == 1
    assert module.notes["insert-moves"]["moves_to_l1"] == 1
    dram = run_pipeline(conv_model(True), memory="dram")[0]
    assert program_cost(module.graph, get_device("n150")).dram_bytes < program_cost(
        dram.graph, get_device("n150")).dram_bytes


def test_auto_drops_a_move_that_saves_no_dram_and_no_time():
    # one reader: the move reads the conv output from DRAM once, as the reader would; the extra op costs time
    module, _ = run_pipeline(conv_model(False))
    assert not [n for n in module.graph.nodes if n.op == "to_memory_config"]
    assert module.notes["place-memory"]["moves_to_l1"] == 0
    assert module.notes["insert-moves"]["moves_to_l1"] == 0


def test_the_pass_applies_the_planned_moves_only():
    module, ctx = run_pipeline(conv_model(True), passes="place-memory")
    assert not [n for n in module.graph.nodes if n.op == "to_memory_config"]  # placement inserts nothing
    conv = next(n for n in module.graph.nodes if n.op == "conv2d")
    (planned,) = module.notes["place-memory"]["moves"]
    assert planned.tensor is conv.outputs[0]
    InsertMoves().run(module, ctx)
    nodes = module.graph.nodes
    move = nodes[nodes.index(conv) + 1]
    assert move.op == "to_memory_config" and move.inputs[0] is conv.outputs[0] and move.attrs["_move"] is True
    copy = move.outputs[0]
    assert copy.name == conv.outputs[0].name + "_l1" and layout_of(copy) == planned.layout
    assert conv.outputs[0].outputs == [move]  # every reader reads the copy
    assert module.notes["place-memory"]["reasons"][copy] == planned.reason


def test_a_move_is_put_after_its_own_tensor_when_another_has_the_same_name():
    module, ctx = run_pipeline(conv_model(True), passes="place-memory")
    conv = next(n for n in module.graph.nodes if n.op == "conv2d")
    sigmoid = next(n for n in module.graph.nodes if n.op == "sigmoid")
    sigmoid.outputs[0].name = conv.outputs[0].name  # ttnn graphs may hold two tensors of one name
    InsertMoves().run(module, ctx)
    nodes = module.graph.nodes
    assert nodes[nodes.index(conv) + 1].op == "to_memory_config"
    assert nodes[nodes.index(sigmoid) + 1].op != "to_memory_config"


def test_a_planned_move_of_a_tensor_no_node_writes_is_an_error():
    module, ctx = run_pipeline(conv_model(True), passes="place-memory")
    (planned,) = module.notes["place-memory"]["moves"]
    module.notes["place-memory"]["moves"] = [PlannedMove(gs.Variable("nowhere"), planned.layout, "")]
    with pytest.raises(ConversionError, match="insert-moves: the plan moves nowhere, which no node of the schedule "
                                              "writes"):
        InsertMoves().run(module, PassContext(ctx.options))


def test_auto_program_with_a_move_matches_onnxruntime(tmp_path):
    path = tmp_path / "conv.onnx"
    onnx.save(conv_model(True), str(path))
    report = verify(str(path), memory="auto")
    assert report.passed, report
    assert report.leaks == []
