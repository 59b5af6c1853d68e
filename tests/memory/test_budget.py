"""memory/budget.py: the one usable-L1-per-core figure, with the conv reserve at convs, and the plans and the
report that hold to it."""
from __future__ import annotations

import dataclasses

import numpy as np

from onnx2ttnn.ir.device import get_device
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import bytes_per_bank
from onnx2ttnn.ir.liveness import buffers
from onnx2ttnn.memory.budget import CONV_SCRATCH_RESERVE, OP_SCRATCH_RESERVE, usable_l1_per_core
from tests.memory.memory_models import chain, run_pipeline


def test_usable_l1_is_the_budget_less_the_op_reserve_and_the_conv_reserve_at_convs():
    n150 = get_device("n150")
    assert n150.l1_budget_per_bank == int(1_376_928 * 0.95)
    assert usable_l1_per_core(n150) == n150.l1_budget_per_bank - 320 * 1024
    assert usable_l1_per_core(n150, "relu") == usable_l1_per_core(n150)
    for conv in ("conv2d", "conv_transpose2d"):
        assert usable_l1_per_core(n150, conv) == n150.l1_budget_per_bank - (320 + 640) * 1024
    # what the largest measured conv needs fits in the two reserves (budget.py docstring)
    assert OP_SCRATCH_RESERVE + CONV_SCRATCH_RESERVE >= 892_928


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
