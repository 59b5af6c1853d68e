"""memory/budget.py: the one usable-L1-per-core figure, with the conv reserve at convs, and the plans and the
report that hold to it."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from onnx2ttnn.ir.device import get_device
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import bytes_per_bank
from onnx2ttnn.ir.liveness import buffers
from onnx2ttnn.ir.ttnn_ops import CONV_SCRATCH_EXTRA
from onnx2ttnn.memory.budget import OP_SCRATCH_RESERVE, usable_l1_per_core
from tests.memory.memory_models import chain, conv_model, run_pipeline


def test_usable_l1_is_the_budget_less_the_op_reserve_and_the_conv_reserve_at_convs():
    n150 = get_device("n150")
    assert n150.l1_budget_per_bank == int(1_376_928 * 0.95)
    assert usable_l1_per_core(n150) == n150.l1_budget_per_bank - 320 * 1024
    assert usable_l1_per_core(n150, "relu") == usable_l1_per_core(n150)
    for conv in ("conv2d", "conv_transpose2d"):
        assert usable_l1_per_core(n150, conv) == n150.l1_budget_per_bank - (320 + 640) * 1024
    # what the largest measured conv needs fits in the two reserves (budget.py docstring)
    assert OP_SCRATCH_RESERVE + CONV_SCRATCH_EXTRA >= 892_928


def test_auto_respects_per_core_capacity_over_the_schedule():
    # a device with room for little L1: 2048x64 bf16 = 2048 B/bank interleaved; allow about three at once
    device = dataclasses.replace(get_device("n150"), l1_bank_bytes=int((OP_SCRATCH_RESERVE + 3 * 2048 + 100) / 0.95))
    model = chain((1, 1, 2048, 64), ops=("Relu", "Exp", "Sigmoid", "Neg", "Abs"))
    module, ctx = run_pipeline(model, device=device)
    budget = usable_l1_per_core(device)
    assert budget == device.l1_budget_per_bank - OP_SCRATCH_RESERVE
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
    reasons = module.notes["place-memory"]["reasons"]
    assert any(r.startswith("DRAM: no L1 room over its live range") for r in reasons.values())


def _l1_in_use(module, device) -> np.ndarray:
    """Bytes per core of the L1 buffers live at each schedule index of the final program."""
    use = np.zeros(len(module.graph.nodes), dtype=np.int64)
    for buf in buffers(module.graph):
        layout = layout_of(buf.root)
        if layout.buffer == "l1":
            use[buf.first:buf.last + 1] += bytes_per_bank(buf.root.shape, layout, device.cores)
    return use


@pytest.mark.parametrize("memory", ["l1", "auto"])
def test_every_policy_keeps_the_conv_scratch_reserve_free_at_convs(memory):
    # 1x1 conv over 64 channels at 300x300: input and output 180,224 B per bank each, 360,448 B together,
    # more than the 325,041 B an n150 core has for tensors at a conv
    module, ctx = run_pipeline(conv_model(False, side=300, channels=64, kernel=1), memory=memory)
    use = _l1_in_use(module, ctx.device)
    convs = [i for i, n in enumerate(module.graph.nodes) if n.op == "conv2d"]
    assert convs and all(use[i] <= usable_l1_per_core(ctx.device, "conv2d") for i in convs)
    assert use.max() > 0  # one of the two still is in L1
    if memory == "l1":  # first come, first served: the uploaded input (a traced run holds it to the end) took
        conv = module.graph.nodes[convs[0]]  # the room, the conv's output did not fit
        upload = module.graph.nodes[0]
        assert upload.op == "from_torch" and layout_of(upload.outputs[0]).buffer == "l1"
        assert layout_of(conv.outputs[0]).buffer == "dram"
        assert module.notes["place-memory"]["reasons"][conv.outputs[0]].startswith(
            "DRAM: no L1 room over its live range at conv2d (")


def _padded_row(width: int):
    """x [1, 1, width] -> Relu -> Pad by 127 at both ends (ROW_MAJOR: front padding) -> Relu, and Neg of the first
    Relu after the pad (live across it)."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Pad", ["a", "pads"], ["p"]),
             helper.make_node("Relu", ["p"], ["y"]), helper.make_node("Neg", ["a"], ["z"])]
    graph = helper.make_graph(nodes, "row", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array([0, 0, 127, 0, 0, 127], np.int64), "pads")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_long_row_major_pad_keeps_its_circular_buffers_free():
    """docs/ttnn-facts.md §49: a ROW_MAJOR pad's circular buffers hold ~19 output rows; basic-pitch's float32 row
    of 44,098 needs more L1 than a core has beside any tensor, and real ttnn refused the launch."""
    from onnx2ttnn.memory.buffers import row_buffers_reserve

    cases = ((43844, "fp32", 1_058_915 - OP_SCRATCH_RESERVE),  # capped where the buffers stop growing
             (16000, "bf16", 16254 * 2 * 19 - OP_SCRATCH_RESERVE), (4000, "bf16", 0))
    for width, dtype, free in cases:
        module, ctx = run_pipeline(_padded_row(width), dtype=dtype)
        pad = next(i for i, n in enumerate(module.graph.nodes) if n.op == "pad")
        assert row_buffers_reserve(module.graph.nodes[pad]) == free
        use = _l1_in_use(module, ctx.device)
        assert use[pad] <= max(0, usable_l1_per_core(ctx.device, "pad") - free), (width, use[pad])
        if not free:
            assert use[pad] > 0  # a short row leaves the plan its L1


def test_weights_stay_in_dram_in_a_program_with_a_long_row_pad():
    """The allocator placed basic-pitch's resident weight (90,112 B per bank) at 447,776, inside the 0.99 MB its
    long pad's circular buffers take from the bottom of L1; the plan counts bytes, not addresses, so such a
    program keeps its weights in DRAM."""
    from onnx import TensorProto, helper, numpy_helper

    def model(width):
        w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32), "w")
        nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Pad", ["a", "pads"], ["y"]),
                 helper.make_node("MatMul", ["z", "w"], ["m"])]
        graph = helper.make_graph(nodes, "row", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, width]),
                                                 helper.make_tensor_value_info("z", TensorProto.FLOAT, [32, 64])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                                   helper.make_tensor_value_info("m", TensorProto.FLOAT, None)],
                                  [w, numpy_helper.from_array(np.array([0, 0, 127, 0, 0, 127], np.int64), "pads")])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

    def weight_reason(width):
        module, _ = run_pipeline(model(width), dtype="fp32")
        reasons = module.notes["place-memory"]["reasons"]
        return next(why for tensor, why in reasons.items() if tensor.name.startswith("w"))

    assert "fills most of L1 with its circular buffers" in weight_reason(43844)
    assert "resident" in weight_reason(2000)  # a short row: the weight is worth its L1
