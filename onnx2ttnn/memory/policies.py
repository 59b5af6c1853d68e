"""The --memory policies, as strategies over the same buffers, budget (budget.py) and allocator replay
(replay.py).  Each takes a PlanningView and returns a Choice: the L1 layout of every
buffer it puts in L1 (the others stay in DRAM interleaved) and, for every buffer, why.

- `dram`: every buffer in DRAM interleaved.
- `l1`: walking the schedule, a buffer goes to L1 interleaved when it fits beside the L1 buffers live over
  its range (first come, first served along the schedule); weights, and buffers pinned to DRAM (buffers.py
  dram_pin), stay in DRAM; then the allocator replay.
- `auto`: 1. residency: every activation that may live in L1 is worth the DRAM bytes it saves (its size
  times its write plus every read of it in the forward pass); buffers are taken by benefit per byte-per-bank
  per scheduled node, each only if it fits over its whole live range.  2. sharding where the op facts allow
  and the cost model pays (sharding.py).  3. the allocator replay of the activations.  4. resident weights
  in what the activations leave (resident.py; conv2d's prepared weights among them: conv_resident.py), replayed
  again with them first.  5. candidate moves out of
  DRAM (moves.py): planned like any buffer, kept where they pay; those that do not are removed and the rest
  replanned, up to MOVE_ROUNDS times.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from onnx2ttnn.ir.cost import CONV_OPS
from onnx2ttnn.ir.device import DeviceSpec
from onnx2ttnn.ir.liveness import Buffer, buffers
from onnx2ttnn.ir.traceable import persistent_buffers
from onnx2ttnn.memory import conv_resident
from onnx2ttnn.memory import moves as candidate_moves
from onnx2ttnn.memory.budget import usable_l1_per_core
from onnx2ttnn.memory.buffers import BufferFacts, describe, row_buffers_reserve, tilize_reserve
from onnx2ttnn.memory.replay import replay_extent
from onnx2ttnn.memory.resident import choose_resident
from onnx2ttnn.memory.sharding import choose_shards
from onnx2ttnn.memory.view import PlanningView

# Not measured: how many times auto replans after dropping the moves that do not pay (a round drops at least
# one).  If moves still do not pay after that, all are dropped and the graph replanned without them: the last
# plan assumed moves that would not be made.
MOVE_ROUNDS = 4
DEMOTED = "DRAM: demoted by the allocator replay (fragmentation)"


@dataclass
class Choice:
    """A policy's answer over the buffers of one view."""

    buffers: list[Buffer]
    l1: dict = field(default_factory=dict)  # id(root) -> TTNNLayout in L1; absent: DRAM interleaved
    why: dict = field(default_factory=dict)  # id(root) -> reason
    moves: list = field(default_factory=list)  # the candidate moves (view nodes) kept
    peak: int = 0  # bytes per core in use at the fullest point
    demoted: int = 0  # buffers the allocator replay sent back to DRAM
    conv_weights: list = field(default_factory=list)  # conv2d's prepared weights weighed for L1 (conv_resident.py)
    row_reserves: dict = field(default_factory=dict)  # schedule index -> a long pad's buffers (row_buffers_reserve)


def dram(view: PlanningView, device: DeviceSpec) -> Choice:
    bufs = buffers(view)
    return Choice(bufs, why={id(buf.root): "DRAM: --memory dram" for buf in bufs})


def l1(view: PlanningView, device: DeviceSpec) -> Choice:
    bufs = buffers(view)
    choice = Choice(bufs, row_reserves=_row_reserves(view))
    room = _room(view, device)
    persistent = persistent_buffers(view)
    taken = []
    for buf in sorted(bufs, key=lambda b: b.first):
        key = id(buf.root)
        facts = describe(buf, len(view.nodes) - 1, device, set(), persistent)  # no reads needed: size and pins
        pinned = "weight (the l1 policy keeps weights in DRAM)" if buf.is_param else facts.pinned
        if pinned:
            choice.why[key] = f"DRAM: {pinned}"
        elif facts.fits(room, facts.interleaved_bytes):
            facts.take(room, facts.interleaved_bytes)
            choice.l1[key] = facts.l1
            choice.why[key] = "L1 interleaved: fits beside the L1 buffers live over its range"
            taken.append(facts)
        else:
            choice.why[key] = _no_room(view, room, facts, facts.interleaved_bytes)
    _replay(taken, choice, device)
    return choice


def auto(view: PlanningView, device: DeviceSpec) -> Choice:
    moves = candidate_moves.insert_candidates(view, device.cores)
    for _ in range(MOVE_ROUNDS):
        choice = _auto_plan(view, device)
        paying = {id(m): candidate_moves.move_pays(m, view, choice.buffers, choice.l1, device) for m in moves}
        losing = [m for m in moves if not paying[id(m)]]
        if not losing:
            choice.moves = moves
            for move in moves:
                _explain_move(move, choice, paying[id(move)])
            return choice
        for move in losing:
            candidate_moves.remove(view, move)
            moves.remove(move)
    for move in moves:  # still changing after a few rounds: keep the plan honest, moves out
        candidate_moves.remove(view, move)
    return _auto_plan(view, device)


def _auto_plan(view: PlanningView, device: DeviceSpec) -> Choice:
    """Residency, sharding and the allocator replay over the view as it stands (module docstring)."""
    bufs = buffers(view)
    scheduled = {id(node) for node in view.nodes}
    persistent = persistent_buffers(view)
    described = [describe(buf, len(view.nodes) - 1, device, scheduled, persistent) for buf in bufs]
    convs = conv_resident.candidates(view.nodes, len(view.nodes) - 1, device)
    weights = [f for f in described if f.buf.is_param] + convs  # uploads first, then the moves after forward
    facts = [f for f in described if not f.buf.is_param]
    choice = Choice(bufs)
    choice.row_reserves = _row_reserves(view)
    headroom = _room(view, device)
    worth = [f for f in facts if f.benefit > 0]
    order = sorted(worth, key=lambda f: (-f.benefit / (f.interleaved_bytes * f.span), f.first))
    for item in order:
        if item.fits(headroom, item.interleaved_bytes):
            item.take(headroom, item.interleaved_bytes)
            choice.l1[id(item.buf.root)] = item.l1
        else:
            choice.why[id(item.buf.root)] = _no_room(view, headroom, item, item.interleaved_bytes)
    for item in facts:
        if item.benefit == 0:
            choice.why[id(item.buf.root)] = f"DRAM: {item.pinned}" if item.pinned else "DRAM: saves no DRAM bytes"
    choose_shards(facts, choice.l1, headroom, device, choice.why)
    extent = _replay([f for f in facts if id(f.buf.root) in choice.l1], choice, device)
    room = min(int(headroom.min()), usable_l1_per_core(device) - extent)
    crowded = view.nodes[min(choice.row_reserves)] if choice.row_reserves else None
    if crowded is not None:  # (the allocator placed basic-pitch's resident weight inside its long pad's buffers)
        for item in weights:
            choice.why[id(item.buf.root)] = (f"DRAM: weight; a {crowded.op} of a long row fills most of L1 with its "
                                             "circular buffers (docs/ttnn-facts.md §49)")
    elif choose_resident(weights, room, choice.l1, choice.why):
        placed = [f for f in weights + facts if id(f.buf.root) in choice.l1]  # weights first: load_parameters
        _replay(placed, choice, device)
    choice.conv_weights = convs
    return choice


def _row_reserves(view: PlanningView) -> dict:
    """Schedule index -> the bytes per bank a long ROW_MAJOR pad's buffers take there (the replay's lines)."""
    return {index: reserve for index, reserve in enumerate(map(row_buffers_reserve, view.nodes)) if reserve}


def _room(view: PlanningView, device: DeviceSpec) -> np.ndarray:
    """Bytes per core free for tensors at each schedule index, the conv scratch reserve kept free at convs, the
    tilized copies of ROW_MAJOR operands at their readers and a long ROW_MAJOR row's circular buffers at its pad
    (one slot more for the end of the program)."""
    room = [usable_l1_per_core(device, node.op) - tilize_reserve(node, device.cores) - row_buffers_reserve(node)
            for node in view.nodes]
    return np.array(room + [usable_l1_per_core(device, "")], dtype=np.int64)


def _no_room(view: PlanningView, room: np.ndarray, item: BufferFacts, size: int) -> str:
    """Why a buffer of `size` bytes per core does not fit over its live range; names the conv when the conv
    scratch reserve is all that is in the way, the producer's intermediate when it is."""
    first, last = item.first, item.last
    short = [first + int(i) for i in np.flatnonzero(room[first:last + 1] < size)]
    if not short:  # (only its twin did not fit)
        return f"DRAM: no L1 room at {view.nodes[first].op} for its result and the intermediate it writes first"
    nodes = [view.nodes[i] for i in short if i < len(view.nodes)]
    if nodes and len(nodes) == len(short) and all(node.op in CONV_OPS for node in nodes):
        source = nodes[0].attrs.get("_source", "")
        conv = f"{nodes[0].op} ({source})" if source else nodes[0].op
        return f"DRAM: no L1 room over its live range at {conv}, which keeps its scratch reserve free"
    return "DRAM: no L1 room over its live range"


def _replay(items: list[BufferFacts], choice: Choice, device: DeviceSpec) -> int:
    """Demote the L1 buffers the allocator replay finds no block for; record the peak; return the extent
    (replay.py replay_extent)."""
    lines = {index: usable_l1_per_core(device) - reserve for index, reserve in choice.row_reserves.items()}
    demoted, choice.peak, extent = replay_extent(items, usable_l1_per_core(device), lines)
    for item in demoted:
        del choice.l1[id(item.buf.root)]
        choice.why[id(item.buf.root)] = DEMOTED
    choice.demoted += len(demoted)
    return extent


def _explain_move(move, choice: Choice, pays: str) -> None:
    """The reason of a kept move's copy names the move; its DRAM original says it was moved."""
    src, moved = move.inputs[0], move.outputs[0]
    roots = {id(m): buf.root for buf in choice.buffers for m in buf.members}
    key = id(roots[id(moved)])
    choice.why[key] = f"{choice.why[key]} (moved out of DRAM after {src.inputs[0].op}: {pays})"
    original = id(roots[id(src)])
    choice.why[original] = f"{choice.why[original]}; its readers read a copy in L1"


POLICIES = {"dram": dram, "l1": l1, "auto": auto}
