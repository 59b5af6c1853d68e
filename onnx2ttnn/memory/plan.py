"""plan_memory: where every device tensor of a ttnn graph lives under a --memory policy, and why.

A pure analysis: it reads the graph (layouts from assign-layouts, the schedule, buffer liveness with views)
through a PlanningView (view.py), runs the policy (policies.py) and returns a Plan; it changes nothing.
The place-memory pass writes the plan's layouts, the insert-moves pass puts its moves into the graph, and
`onnx2ttnn report` prints its reasons.  Reasons are per buffer (a view shares its buffer's), kept per
tensor; they read like

    L1 interleaved: saves 98304 DRAM bytes; not sharded: height: reader layer_norm does not accept it, ...
    height-sharded 8x8: modelled time -37 %; L1 interleaved: saves 786432 DRAM bytes
    L1 interleaved, resident: read once per forward, saves 131072 DRAM bytes per forward
    L1 interleaved, resident: read once per forward, saves 9792 DRAM bytes per forward (prepared by the conv's
      first call, moved to L1 after the first forward pass)
    DRAM: weight, 786432 B per bank, does not fit in the 450000 B per bank the activations leave
    DRAM: producer conv2d writes DRAM only (conv on its DRAM path); its readers read a copy in L1
    DRAM: feeds a DRAM-path conv
    DRAM: no L1 room over its live range
    DRAM: no L1 room over its live range at conv2d (conv1), which keeps its scratch reserve free
    DRAM: demoted by the allocator replay (fragmentation)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.device import DeviceSpec
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.memory import conv_resident
from onnx2ttnn.memory.buffers import compact_row, member_layout
from onnx2ttnn.memory.moves import MOVE
from onnx2ttnn.memory.policies import POLICIES
from onnx2ttnn.memory.view import PlanningView


class Reasons:
    """Why each tensor is placed where it is, keyed by the tensor itself: names are not unique in a ttnn
    graph (a graph output's device tensor, its NCHW copy and its host copy may share one)."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple] = {}  # id(tensor) -> (tensor, reason); the tensor keeps its id unique

    def add(self, tensor, reason: str) -> None:
        self._by_id[id(tensor)] = (tensor, reason)

    def get(self, tensor, default: str = "") -> str:
        found = self._by_id.get(id(tensor))
        return found[1] if found is not None else default

    def __getitem__(self, tensor) -> str:
        return self._by_id[id(tensor)][1]

    def __contains__(self, tensor) -> bool:
        return id(tensor) in self._by_id

    def __len__(self) -> int:
        return len(self._by_id)

    def items(self) -> list[tuple]:
        return list(self._by_id.values())

    def values(self) -> list[str]:
        return [reason for _, reason in self._by_id.values()]

    def __eq__(self, other: object) -> bool:
        """The same tensors (the very objects) with the same reasons."""
        return isinstance(other, Reasons) and {k: r for k, (_, r) in self._by_id.items()} == {
            k: r for k, (_, r) in other._by_id.items()}


@dataclass(frozen=True)
class PlannedMove:
    """A to_memory_config the plan adds after a DRAM-only output (insert-moves puts it in)."""

    tensor: gs.Tensor  # the DRAM-only output
    layout: TTNNLayout  # of its copy in L1
    reason: str  # why the copy is placed there


@dataclass
class Plan:
    """What a policy decided for one graph; nothing of it is applied yet."""

    policy: str
    layouts: list = field(default_factory=list)  # (tensor, TTNNLayout): every device tensor, the graph as it is
    moves: list = field(default_factory=list)  # PlannedMove per move, in schedule order
    reasons: Reasons = field(default_factory=Reasons)  # every device tensor of the graph as it is
    l1_buffers: int = 0
    sharded_buffers: int = 0
    dram_buffers: int = 0
    peak: int = 0  # bytes per core of L1 in use at the fullest point
    demoted: int = 0  # buffers the allocator replay sent back to DRAM
    resident_convs: list = field(default_factory=list)  # (conv2d, bytes per bank) whose prepared weights stay in L1
    retiled: list = field(default_factory=list)  # compact rows read from DRAM: uploaded TILE after all (_retiled)

    def notes(self) -> dict:
        """The plan as module notes: summary numbers, the moves and the reasons (insert-moves adds its copies')."""
        return {"l1_buffers": self.l1_buffers, "sharded_buffers": self.sharded_buffers,
                "dram_buffers": self.dram_buffers, "l1_peak_per_core": self.peak,
                "demoted_by_allocator": self.demoted, "moves_to_l1": len(self.moves),
                "resident_convs": len(self.resident_convs), "moves": list(self.moves),
                "reasons": self.reasons}


def plan_memory(graph: gs.Graph, device: DeviceSpec, policy: str) -> Plan:
    """The plan of `policy` ("dram", "l1" or "auto") for the graph on the device."""
    view = PlanningView(graph)
    choice = POLICIES[policy](view, device)
    plan = Plan(policy, peak=choice.peak, demoted=choice.demoted)
    for buf in choice.buffers:
        chosen = choice.l1.get(id(buf.root))
        reason = choice.why[id(buf.root)]
        if _retiled(buf, chosen):
            plan.retiled.append(buf.root.tensor)
            reason += "; TILE: a ROW_MAJOR row read from DRAM would be tilized there"
        for member in buf.members:
            if member.tensor is None:
                continue  # a moved copy: insert-moves creates it
            plan.reasons.add(member.tensor, reason if member is buf.root else f"view of {buf.root.name}: {reason}")
            # a view of a moved copy views the DRAM original until insert-moves puts the move in
            in_graph = chosen if buf.root.tensor is not None else None
            layout = member_layout(layout_of(member), in_graph)
            plan.layouts.append((member.tensor, layout.with_(page="tile") if _retiled(buf, chosen) else layout))
    for conv, size in conv_resident.resident_convs(choice.conv_weights, choice.l1, choice.why):
        plan.resident_convs.append((conv.node, size))
    for item in choice.conv_weights:  # the conv's host weight and bias: why their prepared copies are where
        for tensor in item.reads[0][0].inputs[1:3]:
            plan.reasons.add(tensor.tensor, choice.why[id(item.buf.root)])
    for move in choice.moves:
        src, moved = move.inputs[0], move.outputs[0]
        layout = member_layout(layout_of(moved), choice.l1[id(moved)])
        plan.moves.append(PlannedMove(src.tensor, layout, choice.why[id(moved)]))
    plan.l1_buffers = len(choice.l1) - len(plan.resident_convs)
    plan.sharded_buffers = sum(1 for lay in choice.l1.values() if lay.memory_layout != "interleaved")
    plan.dram_buffers = len(choice.buffers) - len(choice.l1)
    return plan


def _retiled(buf, chosen) -> bool:
    """A compact row (buffers.py compact_row) neither resident in L1 nor read only through a kept move into L1:
    uploaded TILE after all, as a ROW_MAJOR row in DRAM costs more DRAM bytes than a TILE one (ttnn-facts §47)."""
    root = buf.root
    return (chosen is None and root.tensor is not None and compact_row(root.tensor)
            and any(reader.op not in (MOVE, "deallocate") for reader in root.outputs))
