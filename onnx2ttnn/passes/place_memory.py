"""place-memory: place every device tensor where the --memory policy's plan says (DRAM or L1, interleaved or sharded).

Reads: layouts (page, dtype), the schedule, buffer liveness with views and the DeviceSpec, through the pure
analysis memory/plan.py plan_memory (the policies, budget and allocator replay live in onnx2ttnn/memory).
Sizes the L1_SMALL region first (memory/l1_small.py: module.l1_small_size, which the program opens its device
with) and plans on the L1 bank that leaves (the context's DeviceSpec from then on).
Writes: buffer, memory layout, grid and shard in every device tensor's TTNNLayout (all views of a buffer
share its placement; a compact row read from DRAM back to TILE, its readers' `_input_layouts` pins with it:
memory/plan.py `retiled`), `_resident_weights` on every conv2d whose prepared weights the plan keeps in L1
(memory/conv_resident.py), and the plan in module.notes["place-memory"]: summary numbers, `reasons` (memory/plan.py
Reasons: why each tensor is placed there, what `onnx2ttnn report` prints) and `moves` (PlannedMove: the
DRAM-only outputs to copy into L1, which insert-moves puts in).
Before: `y: tile<bf16> dram interleaved`; after (l1): `y: tile<bf16> l1 interleaved`;
after (auto, sharded): `y: tile<bf16> l1 height_sharded grid=4x1 shard=32x32`.
"""
from __future__ import annotations

from onnx2ttnn.ir.graph import Module, set_layout
from onnx2ttnn.ir.ttnn_ops import Page
from onnx2ttnn.memory.conv_resident import NOTE as RESIDENT
from onnx2ttnn.memory.l1_small import l1_small_size
from onnx2ttnn.memory.plan import plan_memory
from onnx2ttnn.passes.base import Pass, PassContext
from onnx2ttnn.passes.decompose_layouts import PAGE_REF


class PlaceMemory(Pass):
    name = "place-memory"

    def run(self, module: Module, ctx: PassContext) -> None:
        # the L1_SMALL region the program opens with (the convs' config tensors) is carved from L1: plan without it
        module.l1_small_size = l1_small_size(module.graph, ctx.device)
        ctx.device = ctx.device.with_l1_small(module.l1_small_size)
        plan = plan_memory(module.graph, ctx.device, ctx.options.memory)
        for tensor, layout in plan.layouts:
            set_layout(tensor, layout)
        for row in plan.retiled:  # a compact row read from DRAM goes back to TILE, and its readers' pins with it
            _pin_tile(row)
        for conv, size in plan.resident_convs:  # the program moves its prepared weights to L1 after the first forward
            conv.attrs["_" + RESIDENT] = size
        module.notes[self.name] = plan.notes()


def _pin_tile(row) -> None:
    """`row` is uploaded TILE and its readers read it so (their rule had pinned it ROW_MAJOR: `_input_layouts`)."""
    row.inputs[0].attrs["layout"] = PAGE_REF[Page.TILE]
    for reader in row.outputs:
        pins = list(reader.attrs.get("_input_layouts", ()))
        for index, tensor in enumerate(reader.inputs):
            if tensor is row and index < len(pins):
                pins[index] = Page.TILE
        if pins:
            reader.attrs["_input_layouts"] = tuple(pins)
