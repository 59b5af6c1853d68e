"""place-memory: the dram, l1 and auto policies; auto's capacity, op constraints, sharding and allocator replay;
and auto end to end (simulator vs onnxruntime)."""
from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
from onnx2ttnn.frontend.importer import import_model
from onnx2ttnn.ir.cost import program_cost
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import bytes_per_bank
from onnx2ttnn.ir.liveness import Buffer, buffers
from onnx2ttnn.options import Options
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.memory_auto import Plan, _Item, _replay
from onnx2ttnn.passes.memory_config import verify_memory_configs
from onnx2ttnn.passes.pipeline import PassManager, build_pipeline
from onnx2ttnn.passes.place_memory import OP_SCRATCH_RESERVE
from onnx2ttnn.verify import verify


def _chain(shape, ops=("Relu", "Exp", "Sigmoid")) -> onnx.ModelProto:
    names = ["x"] + [f"t{i}" for i in range(len(ops) - 1)] + ["y"]
    nodes = [helper.make_node(op, [names[i]], [names[i + 1]]) for i, op in enumerate(ops)]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _layer_norm_model(shape=(1, 2048, 64)) -> onnx.ModelProto:
    """Relu -> LayerNormalization -> Relu: layer_norm refuses a height-sharded input (ir/placements.py)."""
    scale = numpy_helper.from_array(np.ones(shape[-1], np.float32), "g")
    bias = numpy_helper.from_array(np.zeros(shape[-1], np.float32), "b")
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("LayerNormalization", ["r", "g", "b"], ["n"], axis=-1),
             helper.make_node("Relu", ["n"], ["y"])]
    graph = helper.make_graph(nodes, "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))], [scale, bias])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _plan(model, memory="auto", device=None):
    ctx = PassContext(Options(memory=memory), device=device)
    module = import_model(model, {})
    PassManager(build_pipeline()).run(module, ctx)
    return module, ctx


def _placed(module, op):
    return [layout_of(n.outputs[0]) for n in module.graph.nodes if n.op == op]


def test_auto_height_shards_an_eltwise_chain_over_all_cores():
    module, _ = _plan(_chain((1, 1, 2048, 64)))
    # produced by eltwise ops, read by eltwise ops or to_torch: 64 tile rows on 8x8 cores
    for op in ("relu", "exp", "sigmoid"):
        assert str(_placed(module, op)[0]) == "tile<bf16> l1 height_sharded grid=8x8 shard=32x64"
    assert _placed(module, "from_torch")[0].memory_layout == "interleaved"  # uploads are not sharded
    notes = module.notes["place-memory"]
    assert notes["sharded_buffers"] == 3
    verify_memory_configs(module.graph)  # memory_config attributes derive the shard spec
    relu_node = next(n for n in module.graph.nodes if n.op == "relu")
    assert relu_node.attrs["memory_config"].shard == (32, 64)


def test_auto_width_shards_a_short_wide_eltwise_chain_and_it_matches_onnxruntime():
    # 2 tile rows x 64 tile columns: height sharding reaches 2 cores, width sharding all 64
    model = _chain((1, 1, 64, 2048))
    module, _ = _plan(model)
    for op in ("relu", "exp", "sigmoid"):
        assert str(_placed(module, op)[0]) == "tile<bf16> l1 width_sharded grid=8x8 shard=64x32"
    verify_memory_configs(module.graph)
    report = verify(model, memory="auto")
    assert report.passed, report.text()


def test_auto_does_not_shard_when_the_cost_model_sees_no_gain():
    # 8 tile rows of 2 tiles: 8 shard cores reading locally equal 16 cores over the NoC
    module, _ = _plan(_chain((1, 1, 256, 64)))
    assert all(lay.memory_layout == "interleaved" and lay.buffer == "l1" for lay in _placed(module, "relu"))


def test_auto_keeps_layer_norm_inputs_interleaved():
    module, _ = _plan(_layer_norm_model())
    assert _placed(module, "relu")[0].memory_layout == "interleaved"  # read by layer_norm
    assert _placed(module, "relu")[0].buffer == "l1"


def test_auto_puts_conv_outputs_in_l1_on_the_all_in_l1_path(cnn_path):
    module, _ = _plan(cnn_path)
    convs = [n for n in module.graph.nodes if n.op == "conv2d"]
    assert convs and all(layout_of(n.outputs[0]).buffer == "l1" for n in convs)
    # every conv writing L1 is called on its all-in-L1 path (a DRAM input would make it write DRAM)
    assert all(repr(n.attrs["slice_config"]) == "ttnn.Conv2dL1FullSliceConfig" for n in convs)
    assert module.notes["memory-config"]["l1_full_convs"] == len(convs)
    assert not [n for n in module.graph.nodes if n.op == "to_memory_config"]


def test_auto_keeps_outputs_of_convs_over_7x7_in_dram():
    module, _ = _plan(_conv_model(False, kernel=9))
    conv = next(n for n in module.graph.nodes if n.op == "conv2d")
    assert layout_of(conv.outputs[0]).buffer == "dram" and "slice_config" not in conv.attrs
    assert layout_of(conv.inputs[0]).buffer == "dram"  # a large kernel reads DRAM too (ir/placements.py)


def test_auto_keeps_convs_over_the_measured_input_window_on_the_dram_path():
    # 64 channels at 300x300 (176 KiB per bank) under a 3x3 window: never fits the all-in-L1 path on real ttnn
    module, _ = _plan(_conv_model(False, side=300, channels=64, kernel=3))
    conv = next(n for n in module.graph.nodes if n.op == "conv2d")
    assert layout_of(conv.outputs[0]).buffer == "dram" and layout_of(conv.inputs[0]).buffer == "dram"
    assert "slice_config" not in conv.attrs
    small = next(n for n in _plan(_conv_model(False, side=56, channels=64, kernel=3))[0].graph.nodes
                 if n.op == "conv2d")
    assert layout_of(small.outputs[0]).buffer == "l1"


def test_dram_policy_keeps_convs_off_the_all_in_l1_path(cnn_path):
    module, _ = _plan(cnn_path, memory="dram")
    assert all("slice_config" not in n.attrs for n in module.graph.nodes if n.op == "conv2d")


def test_auto_respects_per_core_capacity_over_the_schedule():
    # a device with room for little L1: 2048x64 bf16 = 2048 B/bank interleaved; allow about three at once
    device = dataclasses.replace(get_device("n150"), l1_bank_bytes=int((OP_SCRATCH_RESERVE + 3 * 2048 + 100) / 0.95))
    model = _chain((1, 1, 2048, 64), ops=("Relu", "Exp", "Sigmoid", "Neg", "Abs"))
    module, ctx = _plan(model, device=device)
    budget = device.l1_budget_per_bank - OP_SCRATCH_RESERVE
    bufs = buffers(module.graph)
    usage = np.zeros(len(module.graph.nodes), dtype=np.int64)
    in_l1 = 0
    for buf in bufs:
        layout = layout_of(buf.root)
        if layout.buffer == "l1":
            in_l1 += 1
            size = (bytes_per_bank(buf.root.shape, layout, device.cores) if layout.memory_layout == "interleaved"
                    else layout.shard[0] // 32 * layout.shard[1] // 32 * 2048)
            usage[buf.first:buf.last + 1] += size
    assert 0 < in_l1 < len(bufs)
    assert usage.max() <= budget


def test_auto_cuts_dram_traffic_against_dram_and_l1(mlp_path, bert_path):
    for path in (mlp_path, bert_path):
        costs = {m: program_cost(_plan(path, memory=m)[0].graph, get_device("n150")) for m in ("dram", "l1", "auto")}
        assert costs["auto"].dram_bytes <= costs["l1"].dram_bytes < costs["dram"].dram_bytes
        assert costs["auto"].dram_bytes <= 0.5 * costs["dram"].dram_bytes
        assert costs["auto"].time_s <= costs["l1"].time_s


def test_bert_auto_plan_has_sharded_placements(bert_path):
    module, _ = _plan(bert_path)
    assert module.notes["place-memory"]["sharded_buffers"] > 0
    assert "ttnn.TensorMemoryLayout.HEIGHT_SHARDED" in onnx2ttnn.convert(bert_path, memory="auto").source


def test_replay_demotes_a_buffer_the_fragmented_allocator_cannot_place():
    """Three buffers of 1, 1 and 2 units: freeing the first leaves two 1-unit holes, no room for 2 contiguous."""
    import onnx_graphsurgeon as gs

    def item(name, first, last, size):
        root = gs.Variable(name, dtype=np.float32, shape=[1])
        return _Item(Buffer(root, first, last, [root]), first, last, None, size, 1, [])

    a, b, c, big = item("a", 0, 1, 1), item("b", 0, 5, 1), item("c", 0, 5, 1), item("big", 2, 3, 2)
    plan = Plan(layouts={id(i.buf.root): "l1" for i in (a, b, c, big)})
    # budget 4: a, b, c take units 0..2; a frees unit 0; free: unit 0 and unit 3, not 2 contiguous
    _replay([a, b, c, big], plan, budget=4)
    assert id(big.buf.root) not in plan.layouts and plan.demoted == 1
    assert plan.peak == 3


@pytest.mark.parametrize("model", ["mlp_path", "cnn_path", "bert_path"])
def test_auto_programs_match_onnxruntime(model, request):
    report = verify(request.getfixturevalue(model), memory="auto")
    assert report.passed, report
    assert report.leaks == []
    assert report.peak_l1_per_core > 0


def _conv_model(two_readers: bool, side=56, channels=32, kernel=9) -> onnx.ModelProto:
    """Conv whose output is read by Sigmoid and, with two_readers, also by an Add with the Sigmoid's result.
    Its default 9x9 kernel keeps it on conv2d's DRAM path (ir/placements.py): its output is DRAM-only."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((channels, channels, kernel, kernel)).astype(np.float32)
                                * 0.2 / kernel, "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[kernel, kernel], pads=[kernel // 2] * 4)]
    if two_readers:
        nodes += [helper.make_node("Sigmoid", ["c"], ["r"]), helper.make_node("Add", ["c", "r"], ["y"])]
    else:
        nodes += [helper.make_node("Sigmoid", ["c"], ["y"])]
    shape = [1, channels, side, side]
    graph = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_auto_moves_a_conv_output_read_twice_to_l1_and_frees_the_dram_original():
    module, _ = _plan(_conv_model(True))
    nodes = module.graph.nodes
    k = next(i for i, n in enumerate(nodes) if n.op == "to_memory_config")
    conv = nodes[k].inputs[0].inputs[0]
    assert conv.op == "conv2d" and all(n.op == "deallocate" for n in nodes[nodes.index(conv) + 1:k])
    assert layout_of(nodes[k].inputs[0]).buffer == "dram" and layout_of(nodes[k].outputs[0]).buffer == "l1"
    assert nodes[k + 1].op == "deallocate" and nodes[k + 1].inputs[0] is nodes[k].inputs[0]
    readers = [n.op for n in nodes[k].outputs[0].outputs if n.op != "deallocate"]
    assert sorted(readers) == ["add", "sigmoid"]
    assert module.notes["place-memory"]["moves_to_l1"] == 1
    dram = _plan(_conv_model(True), memory="dram")[0]
    assert program_cost(module.graph, get_device("n150")).dram_bytes < program_cost(
        dram.graph, get_device("n150")).dram_bytes


def test_auto_drops_a_move_that_saves_no_dram_and_no_time():
    # one reader: the move reads the conv output from DRAM once, as the reader would; the extra op costs time
    module, _ = _plan(_conv_model(False))
    assert not [n for n in module.graph.nodes if n.op == "to_memory_config"]
    assert module.notes["place-memory"]["moves_to_l1"] == 0


def test_auto_program_with_a_move_matches_onnxruntime(tmp_path):
    path = tmp_path / "conv.onnx"
    onnx.save(_conv_model(True), str(path))
    report = verify(str(path), memory="auto")
    assert report.passed, report
    assert report.leaks == []
