"""memory/plan.py: plan_memory is a pure analysis; its plan names every tensor's layout, the moves to insert
and, for every buffer, the reason for its placement."""
from __future__ import annotations

import dataclasses
import math

from onnx2ttnn.ir.device import get_device
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.memory.budget import OP_SCRATCH_RESERVE
from onnx2ttnn.memory.plan import plan_memory
from tests.memory.memory_models import chain, conv_model, run_pipeline, shared_weight_model


def _snapshot(graph):
    """Everything a plan could touch: the schedule, each node's tensors, each tensor's consumers and layout."""
    tensors = {id(t): t for n in graph.nodes for t in list(n.inputs) + list(n.outputs)}
    return ([id(n) for n in graph.nodes], [[id(t) for t in n.inputs] for n in graph.nodes],
            {k: ([id(c) for c in t.outputs], layout_of(t)) for k, t in tensors.items()})


def test_plan_changes_nothing_in_the_graph_even_while_it_plans_moves():
    module, ctx = run_pipeline(conv_model(True), passes="decompose-layouts")
    before = _snapshot(module.graph)
    plan = plan_memory(module.graph, ctx.device, "auto")
    assert plan.moves  # the plan moved the conv output, in its planning view only
    assert _snapshot(module.graph) == before
    assert not [n for n in module.graph.nodes if n.op == "to_memory_config"]


def test_plan_moves_a_conv_output_read_twice_and_says_why():
    module, ctx = run_pipeline(conv_model(True), passes="decompose-layouts")
    plan = plan_memory(module.graph, ctx.device, "auto")
    conv = next(n for n in module.graph.nodes if n.op == "conv2d").outputs[0]
    assert [move.tensor for move in plan.moves] == [conv]
    assert plan.moves[0].layout.buffer == "l1" and plan.moves[0].layout.dtype == layout_of(conv).dtype
    assert plan.reasons[conv] == ("DRAM: producer conv2d writes DRAM only (conv on its DRAM path); "
                                  "its readers read a copy in L1")
    copy = plan.moves[0].reason
    assert "(moved out of DRAM after conv2d: its readers read " in copy and "fewer DRAM bytes)" in copy
    notes = plan.notes()
    assert notes["moves"] == plan.moves and notes["reasons"] is plan.reasons and notes["moves_to_l1"] == 1


def test_plan_gives_a_layout_for_every_device_tensor_and_a_reason_for_every_buffer():
    module, ctx = run_pipeline(chain((1, 1, 2048, 64)), passes="decompose-layouts")
    plan = plan_memory(module.graph, ctx.device, "auto")
    device = [t for n in module.graph.nodes for t in n.outputs if layout_of(t) is not None and layout_of(t).on_device]
    assert {id(t) for t, _ in plan.layouts} == {id(t) for t in device}
    relu = next(n for n in module.graph.nodes if n.op == "relu").outputs[0]
    assert plan.reasons[relu].startswith("height-sharded 8x8: modelled time -")
    assert (plan.l1_buffers, plan.sharded_buffers, plan.dram_buffers) == (len(device), 3, 0)


def _weight_reasons(model, policy="auto", **options):
    module, ctx = run_pipeline(model, passes="decompose-layouts", **options)
    plan = plan_memory(module.graph, ctx.device, policy)
    return [plan.reasons[n.outputs[0]] for n in module.graph.nodes
            if n.op == "from_torch" and n.attrs.get("_param")]


def _device_leaving(room):
    """n150 with a bank small enough that the op scratch reserve leaves `room` bytes per core for tensors."""
    n150 = get_device("n150")
    return dataclasses.replace(n150, l1_bank_bytes=math.ceil((OP_SCRATCH_RESERVE + room) / n150.l1_safety))


def test_weights_are_resident_in_l1_when_they_fit_beside_the_activations_and_the_plan_says_why(mlp_path):
    # 512x512 bf16: 256 tiles over 64 banks, 8192 B per bank, read by both matmuls: 2 x 524288 B saved
    assert _weight_reasons(shared_weight_model(512), weights="bf16") == [
        "L1 interleaved, resident: read 2 times per forward, saves 1048576 DRAM bytes per forward"]
    assert {r.split(":")[0] for r in _weight_reasons(mlp_path)} == {"L1 interleaved, resident"}
    assert _weight_reasons(shared_weight_model(64), "l1") == ["DRAM: weight (the l1 policy keeps weights in DRAM)"]
    assert _weight_reasons(shared_weight_model(64), "dram") == ["DRAM: --memory dram"]


def test_a_weight_stays_in_dram_when_the_activations_leave_too_little_l1_and_the_plan_says_why():
    module, _ = run_pipeline(shared_weight_model(512), passes="decompose-layouts", weights="bf16")
    # the activations ([32, 512] bf16: 2048 B per bank each) peak at 6144 B per bank (x, which a traced run holds
    # to the end, with h and r, then with r and y)
    small = plan_memory(module.graph, _device_leaving(6144 + 8191), "auto")
    weight = next(n for n in module.graph.nodes if n.op == "from_torch" and n.attrs.get("_param")).outputs[0]
    assert small.reasons[weight] == ("DRAM: weight, 8192 B per bank, does not fit in the 8191 B per bank "
                                     "the activations leave")
    assert not [r for t, r in small.reasons.items() if not r.startswith("L1") and t is not weight]
    fits = plan_memory(module.graph, _device_leaving(6144 + 8192), "auto")
    assert fits.reasons[weight].startswith("L1 interleaved, resident: read 2 times")
    assert fits.peak == 6144 + 8192 and small.peak == 6144  # the resident weight holds its bytes throughout