"""The cost of collective communication (CCL) between the chips of a mesh: ring bytes per chip and the choice
between the forms of a sum over the chips.

ccl_bytes: the bytes each chip sends over its ethernet links for a CCL op (ir/cost.py node_cost times them at
DeviceSpec.ethernet_gbps x ethernet_links, ir/device.py); reduction_seconds / cheaper_reduction: the modelled
time of all_reduce against reduce_scatter + all_gather, which passes/split_tensor_parallel.py reads.
"""
from __future__ import annotations

from onnx2ttnn.ir.device import DeviceSpec


def ccl_bytes(op: str, out_bytes: int, chips: int) -> int:
    """Bytes each of `chips` chips sends for a CCL op writing `out_bytes` per chip, by the bandwidth-optimal
    ring algorithms (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
    workstations", 2009): reduce_scatter and all_gather send (chips - 1) pieces of 1 / chips of the whole,
    all_reduce both in turn.  How ttnn 0.81.1 schedules them over a line was not measured; this is the
    lower bound any schedule pays."""
    if chips <= 1:
        return 0
    whole = out_bytes * chips if op == "reduce_scatter" else out_bytes  # reduce_scatter writes one piece
    steps = 2 if op == "all_reduce" else 1
    return steps * (chips - 1) * whole // chips


REDUCTIONS = (("all_reduce",), ("reduce_scatter", "all_gather"))  # the forms of a sum over the chips


def reduction_seconds(calls: tuple, out_bytes: int, chips: int, device: DeviceSpec) -> float:
    """Modelled time of summing a [out_bytes per chip] partial result over `chips` chips with `calls` (one of
    REDUCTIONS): each call's ring bytes over the links to a neighbour (ccl_bytes), its device launch and its host
    dispatch.  reduce_scatter writes 1 / chips of the tensor, all_gather reads that piece back."""
    total = 0.0
    for op in calls:
        written = out_bytes // chips if op == "reduce_scatter" else out_bytes
        wire = ccl_bytes(op, written, chips) / (device.ethernet_gbps * device.ethernet_links * 1e9)
        total += wire + (device.op_launch_us + device.host_dispatch_us) * 1e-6
    return total


def cheaper_reduction(out_bytes: int, chips: int, device: DeviceSpec) -> tuple:
    """The form (REDUCTIONS) the model finds fastest for a row-parallel linear's partial sums; all_reduce on a
    tie (one call).  The ring bytes are the same, 2 (chips - 1) / chips of the tensor either way, so the pair
    always pays one more launch and dispatch (docs/design.md §6.29; ttnn's all_reduce itself runs a
    reduce_scatter and an all_gather when a dim splits into whole tiles per chip)."""
    return min(REDUCTIONS, key=lambda calls: (reduction_seconds(calls, out_bytes, chips, device), len(calls)))
