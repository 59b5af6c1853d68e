"""Step 2 of the auto policy: which L1 buffers become height- or width-sharded, and why the others do not.

An L1 buffer without views, produced by an op that writes the sharded kind and read only by ops that read
it (ir/placements.py HEIGHT_SHARDING / WIDTH_SHARDING, facts probed on real ttnn), has up to two candidate
layouts: height-sharded over the most cores its tile rows spread over (uneven splits allowed) and
width-sharded over the most cores its tile columns spread over (even splits only).  A candidate is out when
a matmul reading it refuses that shard layout (matmul_reads_height_sharded), another tensor of its producer
or readers is sharded the other way, or the larger per-bank reservation (a shard is reserved in every bank)
does not fit beside the L1 already planned.  Of the candidates left, the one the cost model (ir/cost.py)
gives the least time is taken if it cuts the modelled time of the ops whose time it changes (producer,
readers) to SHARD_GAIN of what it was.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from onnx2ttnn.ir.cost import node_cost
from onnx2ttnn.ir.device import DeviceSpec
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import TTNNLayout, bytes_per_bank, physical_2d
from onnx2ttnn.ir.placements import (HEIGHT_SHARDING, WIDTH_SHARDING, conv_reads_height_sharded,
                                     height_shard_layout, matmul_reads_height_sharded, width_shard_layout)
from onnx2ttnn.memory.buffers import BufferFacts, placer

# Not measured: a margin over the roofline cost model.  A sharded placement ties the buffer's readers to one
# shard layout and reserves a shard in every bank; a modelled gain under 2 % is within what the model leaves
# out (circular buffers, dispatch), so it is not taken.
SHARD_GAIN = 0.98


@dataclass
class _Trial:
    """One candidate shard layout tried against the plan: why it is out, or what it would change."""

    refusal: str = ""
    time_after: float = 0.0  # modelled time of the producer and readers with it
    extra: int = 0  # bytes per bank beyond the interleaved reservation
    saved: float = 0.0  # percent of the modelled time of the ops whose time it changes


def choose_shards(facts: list[BufferFacts], chosen: dict, headroom, device: DeviceSpec, why: dict) -> None:
    """Shard the L1 buffers of `chosen` (id(root) -> layout) where it pays; `headroom` (bytes per core left
    at each schedule index) shrinks by the extra bytes; `why` (id(root) -> reason) gets each L1 buffer's."""
    placed = placer([item.buf for item in facts], chosen)
    for item in facts:
        key = id(item.buf.root)
        if key not in chosen:
            continue
        best = None  # (layout, trial) of the least modelled time
        refused = []
        for sharded, refusal in _candidates(item, device):
            trial = _Trial(refusal) if refusal else _try(item, sharded, placed, chosen, headroom, device)
            if trial.refusal:
                refused.append(trial.refusal)
            elif best is None or trial.time_after < best[1].time_after:
                best = (sharded, trial)
        saves = f"L1 interleaved: saves {item.benefit} DRAM bytes"
        if best is not None:
            sharded, trial = best
            chosen[key] = sharded
            item.take(headroom, trial.extra)
            item.reserved += trial.extra
            kind = sharded.memory_layout.replace("_", "-")
            why[key] = f"{kind} {sharded.grid[0]}x{sharded.grid[1]}: modelled time -{trial.saved:.0f} %; {saves}"
        else:
            why[key] = f"{saves}; not sharded: {_joined(refused)}"


def _joined(refusals: list[str]) -> str:
    """The refusals of both kinds, said once when they are the same ("height: has views" and "width: has
    views" -> "has views")."""
    texts = {refusal.split(": ", 1)[1] for refusal in refusals}
    return texts.pop() if len(texts) == 1 else ", ".join(refusals)


def _try(item: BufferFacts, sharded: TTNNLayout, placed, chosen: dict, headroom, device: DeviceSpec) -> _Trial:
    """The candidate against the plan: ops mixing kinds, room for a shard in every bank, modelled time."""
    kind = sharded.memory_layout.split("_")[0]
    clash = _mixed_with(item, sharded, placed)
    if clash:
        return _Trial(f"{kind}: {clash} has a tensor sharded the other way")
    extra = bytes_per_bank(item.buf.root.shape, sharded, device.cores) - item.reserved
    if not item.fits(headroom, extra):
        return _Trial(f"{kind}: no L1 room for a shard in every bank")
    nodes = list({id(n): n for n in [item.buf.root.inputs[0]] + [node for node, _ in item.reads]}.values())
    key = id(item.buf.root)
    before = [node_cost(n, device, layouts=placed).time_s for n in nodes]
    chosen[key] = sharded
    after = [node_cost(n, device, layouts=placed).time_s for n in nodes]
    chosen[key] = item.l1
    changed = [(b, a) for b, a in zip(before, after) if a != b]  # ops whose modelled time sharding moves
    if not changed:
        return _Trial(f"{kind}: changes no modelled time")
    changed_before = sum(b for b, _ in changed)  # modelled time of those ops, interleaved
    changed_after = sum(a for _, a in changed)  # and sharded
    if not changed_after < SHARD_GAIN * changed_before:
        return _Trial(f"{kind}: modelled time gain under {100 * (1 - SHARD_GAIN):.0f} %")
    return _Trial("", sum(after), extra, 100 * (1 - changed_after / changed_before))


def _candidates(item: BufferFacts, device: DeviceSpec) -> list[tuple]:
    """(sharded layout, why it is out or "") per kind the producer and readers accept (ir/placements.py);
    a kind that cannot be used at all gives (None, why)."""
    shape = item.buf.root.shape
    found = []
    refusal = _may_shard(item, HEIGHT_SHARDING, "height")
    if not refusal:
        height = height_shard_layout(shape, item.l1, device.grid_x, device.grid_y)
        if height is None:
            refusal = "height: no shard grid fits"
        else:
            found.append((height, _readers_take(item, height)))
    if refusal:
        found.append((None, refusal))
    refusal = _may_shard(item, WIDTH_SHARDING, "width")
    if not refusal:
        width = width_shard_layout(shape, item.l1, device.grid_x, device.grid_y)
        if width is None:
            refusal = "width: no even split over a full grid"
        else:
            found.append((width, ""))
    if refusal:
        found.append((None, refusal))
    return found


def _mixed_with(item: BufferFacts, sharded: TTNNLayout, placed) -> str:
    """The op among the buffer's producer and readers that has another tensor sharded the other way (height
    vs width), "" if none: ops were probed with one kind of sharding at a time, so kinds are not mixed."""
    members = {id(m) for m in item.buf.members}
    nodes = [item.buf.root.inputs[0]] + [node for node, _ in item.reads]
    for node in nodes:
        for tensor in list(node.inputs) + list(node.outputs):
            if id(tensor) in members:
                continue
            layout = placed(tensor)
            if layout is not None and layout.memory_layout not in (None, "interleaved", sharded.memory_layout):
                return node.op
    return ""


def _may_shard(item: BufferFacts, table: dict, kind: str) -> str:
    """Why the buffer may not be sharded the way `table` (ir/placements.py) describes, "" if it may."""
    root = item.buf.root
    if item.buf.is_param:
        return f"{kind}: a weight"
    if len(item.buf.members) != 1:
        return f"{kind}: has views"
    if not item.l1.is_tile:
        return f"{kind}: ROW_MAJOR"
    if not root.inputs:
        return f"{kind}: no producer"
    producer = table.get(root.inputs[0].op)
    if producer is None or not producer.output or root.inputs[0].op == "from_torch":
        return f"{kind}: producer {root.inputs[0].op} does not write it"
    shape_2d = physical_2d(root.shape, item.l1)
    for node, index in item.reads:
        facts = table.get(node.op)
        if facts is None or index not in facts.inputs:
            return f"{kind}: reader {node.op} does not accept it"
        if node.op == "conv2d" and not conv_reads_height_sharded(node.attrs):
            return f"{kind}: reader conv2d is outside the measured bounds"
        if facts.same_shape_inputs:
            out_layout = layout_of(node.outputs[0]) if node.outputs else None
            if (out_layout is None or not out_layout.is_tile
                    or physical_2d(node.outputs[0].shape, out_layout) != shape_2d):
                return f"{kind}: reader {node.op} has another 2-D shape"
    return ""


def _readers_take(item: BufferFacts, sharded: TTNNLayout) -> str:
    """Why a matmul / linear reading the buffer refuses this shard layout, "" if all accept it."""
    shape = item.buf.root.shape
    for node, index in item.reads:
        if node.op in ("matmul", "linear") and index == 0:
            other = node.inputs[1].shape if len(node.inputs) > 1 else []
            if not matmul_reads_height_sharded(shape, sharded, b_batched=math.prod(other[:-2]) > 1,
                                               activation=bool(node.attrs.get("activation"))):
                return f"height: reader {node.op} refuses this shard layout"
    return ""
