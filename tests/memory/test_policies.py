"""memory/policies.py: the dram, l1 and auto policies -- auto's op constraints, sharding, conv paths and
DRAM traffic against the other two, and every policy's reasons."""
from __future__ import annotations

import dataclasses

import onnx
from onnx import TensorProto, helper

import onnx2ttnn
from onnx2ttnn.ir.cost import program_cost
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.memory.budget import OP_SCRATCH_RESERVE
from onnx2ttnn.memory.plan import plan_memory
from onnx2ttnn.passes.assign_memory_configs import verify_memory_configs
from onnx2ttnn.verify import verify
from tests.memory.memory_models import chain, conv_model, layer_norm_model, placed, run_pipeline


def test_auto_height_shards_an_eltwise_chain_over_all_cores():
    module, _ = run_pipeline(chain((1, 1, 2048, 64)))
    # produced by eltwise ops, read by eltwise ops or to_torch: 64 tile rows on 8x8 cores
    for op in ("relu", "exp", "sigmoid"):
        assert str(placed(module, op)[0]) == "tile<bf16> l1 height_sharded grid=8x8 shard=32x64"
    assert placed(module, "from_torch")[0].memory_layout == "interleaved"  # uploads are not sharded
    notes = module.notes["place-memory"]
    assert notes["sharded_buffers"] == 3
    verify_memory_configs(module.graph)  # memory_config attributes derive the shard spec
    relu_node = next(n for n in module.graph.nodes if n.op == "relu")
    assert relu_node.attrs["memory_config"].shard == (32, 64)


def test_auto_width_shards_a_short_wide_eltwise_chain_and_it_matches_onnxruntime():
    # 2 tile rows x 64 tile columns: height sharding reaches 2 cores, width sharding all 64
    model = chain((1, 1, 64, 2048))
    module, _ = run_pipeline(model)
    for op in ("relu", "exp", "sigmoid"):
        assert str(placed(module, op)[0]) == "tile<bf16> l1 width_sharded grid=8x8 shard=64x32"
    verify_memory_configs(module.graph)
    report = verify(model, memory="auto")
    assert report.passed, report.text()


def test_auto_does_not_shard_when_the_cost_model_sees_no_gain():
    # 8 tile rows of 2 tiles: 8 shard cores reading locally equal 16 cores over the NoC
    module, _ = run_pipeline(chain((1, 1, 256, 64)))
    assert all(lay.memory_layout == "interleaved" and lay.buffer == "l1" for lay in placed(module, "relu"))
    reasons = module.notes["place-memory"]["reasons"]
    relu = next(n for n in module.graph.nodes if n.op == "relu").outputs[0]
    assert reasons[relu].startswith("L1 interleaved: saves ")
    assert "not sharded: " in reasons[relu] and "modelled time" in reasons[relu]


def test_auto_keeps_layer_norm_inputs_interleaved():
    module, _ = run_pipeline(layer_norm_model())
    assert placed(module, "relu")[0].memory_layout == "interleaved"  # read by layer_norm
    assert placed(module, "relu")[0].buffer == "l1"
    relu = next(n for n in module.graph.nodes if n.op == "relu").outputs[0]
    assert "not sharded: reader layer_norm does not accept it" in module.notes["place-memory"]["reasons"][relu]


def test_auto_puts_conv_outputs_in_l1_on_the_all_in_l1_path(cnn_path):
    module, _ = run_pipeline(cnn_path)
    convs = [n for n in module.graph.nodes if n.op == "conv2d"]
    assert convs and all(layout_of(n.outputs[0]).buffer == "l1" for n in convs)
    # every conv writing L1 is called on its all-in-L1 path (a DRAM input would make it write DRAM)
    assert all(repr(n.attrs["slice_config"]) == "ttnn.Conv2dL1FullSliceConfig" for n in convs)
    assert module.notes["assign-memory-configs"]["l1_full_convs"] == len(convs)
    assert not [n for n in module.graph.nodes if n.op == "to_memory_config"]


def test_auto_keeps_outputs_of_convs_over_7x7_in_dram():
    module, _ = run_pipeline(conv_model(False, kernel=9))
    conv = next(n for n in module.graph.nodes if n.op == "conv2d")
    assert layout_of(conv.outputs[0]).buffer == "dram" and "slice_config" not in conv.attrs
    assert layout_of(conv.inputs[0]).buffer == "dram"  # a large kernel reads DRAM too (ir/placements.py)
    reasons = module.notes["place-memory"]["reasons"]
    assert reasons[conv.outputs[0]] == "DRAM: producer conv2d writes DRAM only (conv on its DRAM path)"
    assert reasons[conv.inputs[0]] == "DRAM: feeds a DRAM-path conv"


def test_auto_keeps_convs_over_the_measured_input_window_on_the_dram_path():
    # 64 channels at 300x300 (176 KiB per bank) under a 3x3 window: never fits the all-in-L1 path on real ttnn
    module, _ = run_pipeline(conv_model(False, side=300, channels=64, kernel=3))
    conv = next(n for n in module.graph.nodes if n.op == "conv2d")
    assert layout_of(conv.outputs[0]).buffer == "dram" and layout_of(conv.inputs[0]).buffer == "dram"
    assert "slice_config" not in conv.attrs
    small = next(n for n in run_pipeline(conv_model(False, side=56, channels=64, kernel=3))[0].graph.nodes
                 if n.op == "conv2d")
    assert layout_of(small.outputs[0]).buffer == "l1"


def test_dram_policy_keeps_convs_off_the_all_in_l1_path(cnn_path):
    module, _ = run_pipeline(cnn_path, memory="dram")
    assert all("slice_config" not in n.attrs for n in module.graph.nodes if n.op == "conv2d")
    reasons = module.notes["place-memory"]["reasons"]
    assert reasons and all(r.endswith("DRAM: --memory dram") for r in reasons.values())  # views: "view of x: ..."


def test_l1_policy_keeps_weights_and_dram_path_convs_in_dram():
    module, _ = run_pipeline(conv_model(False, kernel=9), memory="l1")
    conv = next(n for n in module.graph.nodes if n.op == "conv2d")
    reasons = module.notes["place-memory"]["reasons"]
    assert layout_of(conv.outputs[0]).buffer == "dram"
    assert reasons[conv.outputs[0]] == "DRAM: producer conv2d writes DRAM only (conv on its DRAM path)"
    sigmoid = next(n for n in module.graph.nodes if n.op == "sigmoid").outputs[0]
    assert layout_of(sigmoid).buffer == "l1"
    assert reasons[sigmoid] == "L1 interleaved: fits beside the L1 buffers live over its range"
    assert not [n for n in module.graph.nodes if n.op == "to_memory_config"]  # only auto moves


def test_auto_cuts_dram_traffic_against_dram_and_l1(mlp_path, bert_path):
    for path in (mlp_path, bert_path):
        costs = {m: program_cost(run_pipeline(path, memory=m)[0].graph, get_device("n150"))
                 for m in ("dram", "l1", "auto")}
        assert costs["auto"].dram_bytes <= costs["l1"].dram_bytes < costs["dram"].dram_bytes
        assert costs["auto"].dram_bytes <= 0.5 * costs["dram"].dram_bytes
        assert costs["auto"].time_s <= costs["l1"].time_s


def test_bert_auto_plan_has_sharded_placements(bert_path):
    module, _ = run_pipeline(bert_path)
    assert module.notes["place-memory"]["sharded_buffers"] > 0
    assert "ttnn.TensorMemoryLayout.HEIGHT_SHARDED" in onnx2ttnn.convert(bert_path, memory="auto").source


def test_every_policy_gives_every_buffer_a_reason(cnn_path):
    module, ctx = run_pipeline(cnn_path, passes="decompose-layouts")
    device_tensors = [t for n in module.graph.nodes for t in n.outputs
                      if layout_of(t) is not None and layout_of(t).on_device]
    # auto also says where each conv's prepared weight and bias go (memory/conv_resident.py)
    conv_params = [t for n in module.graph.nodes if n.op == "conv2d" for t in n.inputs[1:3]]
    assert conv_params
    for policy in ("dram", "l1", "auto"):
        reasons = plan_memory(module.graph, ctx.device, policy).reasons
        extra = conv_params if policy == "auto" else []
        assert len(reasons) == len(device_tensors) + len(extra)
        assert all(reasons.get(t) for t in device_tensors + extra)


def _fragmenting_model() -> onnx.ModelProto:
    """x -> a = relu -> b = exp(a) -> c = a + b -> big = concat(c, c) -> y = concat(big, b), [1,1,32,2048] each
    (one tile per L1 bank; big two).  With room for four such tensors (auto) big fits the bytes left but not a
    block: a, b, c take the top three slots in turn and freeing a leaves a one-tile hole apart from the one-tile
    slot at the bottom.  The l1 policy puts x (the input, which a traced run holds to the end) in L1 first, so
    it gives big the same holes with room for five."""
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Exp", ["a"], ["b"]),
             helper.make_node("Add", ["a", "b"], ["c"]), helper.make_node("Concat", ["c", "c"], ["big"], axis=-1),
             helper.make_node("Concat", ["big", "b"], ["y"], axis=-1)]
    graph = helper.make_graph(nodes, "fragments",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 32, 2048])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 32, 6144])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_l1_and_auto_send_a_buffer_the_allocator_cannot_place_to_dram():
    for memory, slots in (("l1", 5), ("auto", 4)):
        device = dataclasses.replace(get_device("n150"),
                                     l1_bank_bytes=int((OP_SCRATCH_RESERVE + slots * 2048 + 100) / 0.95))
        module, _ = run_pipeline(_fragmenting_model(), memory=memory, device=device)
        big = next(n for n in module.graph.nodes if n.op == "concat").outputs[0]
        assert layout_of(big).buffer == "dram", memory
        reasons = module.notes["place-memory"]["reasons"]
        assert reasons[big] == "DRAM: demoted by the allocator replay (fragmentation)"
        assert module.notes["place-memory"]["demoted_by_allocator"] == 1
