"""place-memory: choose the buffer of every device tensor under the --memory policy.

Reads: layouts (page, dtype), the schedule, buffer liveness with views (ir/liveness.py), the DeviceSpec.
Writes: buffer and memory layout in every device tensor's TTNNLayout; all views of a buffer share its
placement.  `dram`: everything DRAM interleaved.  `l1`: walking the schedule, a buffer goes to L1
interleaved when it fits beside the L1 buffers live at that point within the per-core budget
(DeviceSpec.l1_budget_per_bank less OP_SCRATCH_RESERVE for the ops' own circular buffers), else DRAM.
Weights, outputs of ops that always write DRAM (passes/memory_auto.py writes_dram_only) and inputs of convs
kept on their DRAM path stay in DRAM.  `auto` (passes/memory_auto.py):
L1 by DRAM bytes saved under the same budget over the liveness schedule, height sharding where the op facts
(ir/placements.py) allow it and the cost model (ir/cost.py) says it is faster, replayed on a model of the
allocator; outputs of ops that always write DRAM are moved to L1 (to_memory_config) where that pays.  Before: `y: tile<bf16> dram interleaved`; after (l1): `y: tile<bf16> l1 interleaved`;
after (auto, sharded): `y: tile<bf16> l1 height_sharded grid=4x1 shard=32x32`.
"""
from __future__ import annotations

from onnx2ttnn.ir.cost import program_cost
from onnx2ttnn.ir.graph import Module, layout_of, set_layout
from onnx2ttnn.ir.layout import bytes_per_bank
from onnx2ttnn.ir.liveness import buffers
from onnx2ttnn.passes.base import Pass, PassContext
from onnx2ttnn.passes.memory_auto import dram_only, feeds_dram_path_conv, plan_with_moves

OP_SCRATCH_RESERVE = 320 * 1024  # bytes per core kept free for op circular buffers


class PlaceMemory(Pass):
    name = "place-memory"

    def run(self, module: Module, ctx: PassContext) -> None:
        if ctx.options.memory == "auto":
            self._auto(module, ctx)
            return
        bufs = buffers(module.graph)
        in_l1, peak = (self._greedy_l1(bufs, ctx) if ctx.options.memory == "l1" else (set(), 0))
        for buf in bufs:
            buffer = "l1" if id(buf.root) in in_l1 else "dram"
            for tensor in buf.members:
                set_layout(tensor, layout_of(tensor).with_(buffer=buffer, memory_layout="interleaved"))
        module.notes[self.name] = {"l1_buffers": len(in_l1), "dram_buffers": len(bufs) - len(in_l1),
                                   "l1_peak_per_core": peak}

    def _auto(self, module: Module, ctx: PassContext) -> None:
        budget = ctx.device.l1_budget_per_bank - OP_SCRATCH_RESERVE
        plan, bufs, moves = plan_with_moves(module.graph, ctx.device, budget)
        for buf in bufs:
            chosen = plan.layouts.get(id(buf.root))
            for tensor in buf.members:
                layout = layout_of(tensor)
                if chosen is None:
                    layout = layout.with_(buffer="dram", memory_layout="interleaved")
                elif chosen.memory_layout == "interleaved":
                    layout = layout.with_(buffer="l1", memory_layout="interleaved")
                else:  # sharded buffers have no views (memory_auto._may_shard): the root's layout
                    layout = chosen
                set_layout(tensor, layout)
        module.notes[self.name] = {"l1_buffers": len(plan.layouts), "sharded_buffers": plan.sharded,
                                   "dram_buffers": len(bufs) - len(plan.layouts), "l1_peak_per_core": plan.peak,
                                   "demoted_by_allocator": plan.demoted, "moves_to_l1": moves,
                                   **program_cost(module.graph, ctx.device).summary()}

    @staticmethod
    def _greedy_l1(bufs, ctx: PassContext) -> tuple[set, int]:
        """Buffers that fit in L1 (first come, first served along the schedule) and the peak per core."""
        budget = ctx.device.l1_budget_per_bank - OP_SCRATCH_RESERVE
        banks = ctx.device.cores
        live: list = []
        used = peak = 0
        chosen = set()
        for buf in sorted((b for b in bufs if not b.is_param and not dram_only(b, banks)
                           and not feeds_dram_path_conv(b, banks)), key=lambda b: b.first):
            for other in [o for o in live if o.last < buf.first]:
                live.remove(other)
                used -= other.size
            buf.size = bytes_per_bank(buf.root.shape, layout_of(buf.root), banks)
            if used + buf.size <= budget:
                chosen.add(id(buf.root))
                live.append(buf)
                used += buf.size
                peak = max(peak, used)
        return chosen, peak


