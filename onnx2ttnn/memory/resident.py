"""Step 3 of the auto policy: which weights stay resident in L1 across forward calls, and why the others do not.

A weight (a parameter load_parameters uploads to the device) in L1 is uploaded there once and stays for the
whole program and every later forward pass, so each read of it in a forward pass is an L1 read instead of a
DRAM read: it saves its bytes (at its layout's dtype, whatever the weight format) times its reads per forward.
Weights are weighed after the activations are planned, against what the activations leave on every core:

    room = min(headroom over the whole schedule,      the bytes per core left at the fullest index, op and
                                                      conv scratch reserves kept free (policies.py _room)
               capacity - extent)                     the addresses below the lowest block the activations'
                                                      allocator replay placed (replay.py replay_extent)

The first bound keeps the byte sums of every op, its scratch reserve included; the second keeps the blocks:
load_parameters allocates the weights before the first activation, at the top of every bank (top-down
allocator, docs/ttnn-facts.md §2 "Placement"), and the activations then take the same blocks as without them,
each lower by the weights' bytes.  Weights are taken by DRAM bytes saved per byte per bank, best first, each
if it still fits (a greedy knapsack).  Resident weights are L1 interleaved: the ops that read weights (linear,
matmul, eltwise, norms, embedding) were probed with interleaved operands, not with sharded weights.
Reasons read like

    L1 interleaved, resident: read 2 times per forward, saves 16384 DRAM bytes per forward
    DRAM: weight, 786432 B per bank, does not fit in the 450000 B per bank the activations leave
    DRAM: weight never read
"""
from __future__ import annotations

from onnx2ttnn.memory.buffers import BufferFacts


def choose_resident(weights: list[BufferFacts], room: int, chosen: dict, why: dict) -> int:
    """Put the weights that pay best per byte into `chosen` (id(root) -> L1 layout) while they fit in `room`
    bytes per bank; `why` (id(root) -> reason) gets every weight's reason.  Returns the bytes per bank taken."""
    taken = 0
    for item in sorted(weights, key=_order):
        key = id(item.buf.root)
        if item.benefit == 0:
            why[key] = f"DRAM: {item.pinned}"
        elif taken + item.interleaved_bytes <= room:
            taken += item.interleaved_bytes
            chosen[key] = item.l1
            reads = "once" if len(item.reads) == 1 else f"{len(item.reads)} times"
            why[key] = f"L1 interleaved, resident: read {reads} per forward, saves {item.benefit} DRAM bytes per forward"
        else:
            why[key] = (f"DRAM: weight, {item.interleaved_bytes} B per bank, does not fit in the "
                        f"{max(0, room - taken)} B per bank the activations leave")
    return taken


def _order(item: BufferFacts) -> tuple:
    """Best DRAM bytes saved per byte per bank first; ties in schedule order of the first read."""
    return -item.benefit / max(1, item.interleaved_bytes), item.buf.first
