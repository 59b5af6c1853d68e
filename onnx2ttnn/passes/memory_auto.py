"""The `auto` memory policy: L1 residency chosen by DRAM bytes saved, then height sharding where it pays.

1. Residency.  Every device buffer (a tensor with its views, ir/liveness.py) that may live in L1 is worth
   the DRAM bytes it saves: its size times (its write + every read of it in the forward pass).  Buffers are
   taken by benefit per byte-per-bank per scheduled node, each only if the per-core L1 in use over its whole
   live range stays within the budget (DeviceSpec.l1_budget_per_bank less OP_SCRATCH_RESERVE for the ops'
   circular buffers, and CONV_SCRATCH_EXTRA more at convolutions).  Outputs of ops that always write DRAM
   (writes_dram_only: conv_transpose2d, and convs kept on their DRAM path by ir/placements.py conv_all_in_l1)
   stay DRAM (but see 4.), and so do those convs' inputs; other convs read and write L1 on their all-in-L1
   path.
   Weights stay DRAM unless small (<= SMALL_WEIGHT_BYTES per bank) and read at least twice, and then they
   hold L1 for the whole program.
2. Sharding.  An L1 buffer without views whose producer writes and whose every reader reads height-sharded
   (or width-sharded) tensors (ir/placements.py HEIGHT_SHARDING / WIDTH_SHARDING, facts probed on real
   ttnn) may become height-sharded over the most cores its tile rows spread over (uneven splits allowed),
   or width-sharded over the most cores its tile columns spread over.  Of the two, the one the cost model
   (ir/cost.py) gives the least time is taken, if it gives the producer and readers whose time it changes
   at least 2 % less device time in total, every matmul reading it accepts the shard layout
   (matmul_reads_height_sharded), no other tensor of those ops is sharded the other way, and the larger
   per-bank reservation (a shard is reserved in every bank) still fits.
3. Fragmentation.  The plan is replayed on a model of the real L1 allocator (top-down first fit, freed at
   the last use); a buffer that finds no contiguous block goes back to DRAM.
4. Conversions (plan_with_moves).  The output of an op that always writes DRAM is moved to L1 by a
   `to_memory_config` right after it, which its readers then read (the DRAM original is freed right after the
   move, passes/insert_deallocs.py).  Every candidate move is planned like any buffer (L1 interleaved or
   height-sharded); it is kept only when the cost model says it pays: its readers read less DRAM than the
   move costs (the move reads the tensor from DRAM once, each reader would have) or, DRAM traffic equal,
   the modelled time of the move and its readers beats that of the readers reading DRAM by MOVE_GAIN.
   Moves that do not pay, or whose output the plan leaves in DRAM, are removed and the rest replanned.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from onnx2ttnn.ir.aliases import is_view
from onnx2ttnn.ir.cost import CONV_OPS, node_cost
from onnx2ttnn.ir.device import DeviceSpec
from onnx2ttnn.ir.graph import layout_of, set_layout, ttnn_node
from onnx2ttnn.ir.layout import DTYPES, TILE, TTNNLayout, bytes_per_bank, total_bytes
from onnx2ttnn.ir.liveness import Buffer
from onnx2ttnn.ir.placements import (HEIGHT_SHARDING, WIDTH_SHARDING, conv_all_in_l1, conv_reads_height_sharded,
                                     height_shard_layout, matmul_reads_height_sharded, physical_2d,
                                     width_shard_layout)
from onnx2ttnn.ir.ttnn_ops import CONV_SCRATCH_EXTRA, op_info  # conv2d's own L1: ir/ttnn_ops/conv_pool.py

SMALL_WEIGHT_BYTES = 2048  # per bank: a weight this small may stay in L1 for the whole program
SHARD_GAIN = 0.98  # sharding must cut the modelled time of the ops it changes (producer, readers) by 2 %
MOVE_GAIN = 0.98  # a move that saves no DRAM bytes must cut the modelled time of it and its readers by 2 %
MOVE = "to_memory_config"


@dataclass
class Plan:
    """What the auto policy decided: L1 layout per buffer root, and how much per-core L1 it uses at peak."""

    layouts: dict = field(default_factory=dict)  # id(root) -> TTNNLayout in L1
    peak: int = 0
    demoted: int = 0  # buffers the allocator replay sent back to DRAM

    @property
    def sharded(self) -> int:
        return sum(1 for lay in self.layouts.values() if lay.memory_layout != "interleaved")


def plan_with_moves(graph, device: DeviceSpec, budget: int) -> tuple[Plan, list[Buffer], int]:
    """Insert the candidate moves out of DRAM, plan, drop the moves that do not pay, replan (section 4).

    Returns the plan, the buffers it was made over and the number of moves kept."""
    from onnx2ttnn.ir.liveness import buffers

    moves = insert_moves(graph, device.cores)
    for _ in range(4):
        bufs = buffers(graph)
        plan = plan_auto(graph, bufs, device, budget)
        losing = [m for m in moves if not _move_pays(m, graph, bufs, plan, device)]
        if not losing:
            return plan, bufs, len(moves)
        for move in losing:
            remove_move(graph, move)
            moves.remove(move)
    for move in moves:  # still changing after a few rounds: keep the plan honest, moves out
        remove_move(graph, move)
    bufs = buffers(graph)
    return plan_auto(graph, bufs, device, budget), bufs, 0


def insert_moves(graph, banks: int) -> list:
    """A to_memory_config after every DRAM-only output that a device op reads (not a graph output)."""
    outputs = {id(t) for t in graph.outputs}
    nodes, moves = [], []
    for node in graph.nodes:
        nodes.append(node)
        if not writes_dram_only(node, banks):
            continue
        for out in node.outputs:
            layout = layout_of(out)
            readers = [c for c in out.outputs if c.op != "deallocate"]
            if layout is None or not layout.on_device or not readers or id(out) in outputs:
                continue
            moved = type(out)(f"{out.name}_l1", dtype=out.dtype, shape=list(out.shape))
            set_layout(moved, layout.with_(buffer="l1", memory_layout="interleaved"))
            for consumer in readers:
                for index, tensor in enumerate(consumer.inputs):
                    if tensor is out:
                        consumer.inputs[index] = moved
            move = ttnn_node(MOVE, [out], [moved], node.attrs.get("_source", ""), _move=True)
            nodes.append(move)
            moves.append(move)
    graph.nodes = nodes
    return moves


def remove_move(graph, move) -> None:
    """Undo one inserted move: its readers read the DRAM original again."""
    src, moved = move.inputs[0], move.outputs[0]
    for consumer in list(moved.outputs):
        for index, tensor in enumerate(consumer.inputs):
            if tensor is moved:
                consumer.inputs[index] = src
    move.inputs.clear()
    move.outputs.clear()
    graph.nodes.remove(move)


def _move_pays(move, graph, bufs: list[Buffer], plan: Plan, device: DeviceSpec) -> bool:
    """The move's output is in L1 and the cost model says the move pays (module docstring, section 4)."""
    moved = move.outputs[0]
    buf = next((b for b in bufs if any(m is moved for m in b.members)), None)
    if buf is None or id(buf.root) not in plan.layouts:
        return False
    placed = _placer(bufs, plan)
    members = {id(m) for m in buf.members}

    def in_dram(tensor):
        layout = placed(tensor)
        return layout.with_(buffer="dram", memory_layout="interleaved") if id(tensor) in members else layout

    readers = _describe(buf, 0, device, {id(node) for node in graph.nodes}).reads
    nodes = list({id(node): node for node, _ in readers}.values())
    with_move = [node_cost(move, device, layouts=placed)] + [node_cost(n, device, layouts=placed) for n in nodes]
    without = [node_cost(n, device, layouts=in_dram) for n in nodes]
    dram_with = sum(c.dram_bytes for c in with_move)
    dram_without = sum(c.dram_bytes for c in without)
    if dram_with < dram_without:
        return True
    return dram_with == dram_without and (sum(c.time_s for c in with_move)
                                          < MOVE_GAIN * sum(c.time_s for c in without))


def _placer(bufs: list[Buffer], plan: Plan):
    """The layout a tensor gets under the plan (what place-memory will write)."""
    roots = {id(m): buf.root for buf in bufs for m in buf.members}

    def placed(tensor):
        layout = layout_of(tensor)
        if layout is None or not layout.on_device:
            return layout
        root = roots.get(id(tensor))
        chosen = plan.layouts.get(id(root)) if root is not None else None
        if chosen is None:
            return layout.with_(buffer="dram", memory_layout="interleaved")
        return chosen if chosen.memory_layout != "interleaved" else layout.with_(buffer="l1", memory_layout="interleaved")
    return placed


def plan_auto(graph, bufs: list[Buffer], device: DeviceSpec, budget: int) -> Plan:
    last_index = len(graph.nodes) - 1
    scheduled = {id(node) for node in graph.nodes}
    info = [_describe(buf, last_index, device, scheduled) for buf in bufs]
    plan = Plan()
    # per-core L1 in use at each node, starting from what the op itself needs beyond OP_SCRATCH_RESERVE
    usage = np.array([CONV_SCRATCH_EXTRA if n.op in CONV_OPS else 0 for n in graph.nodes] + [0], dtype=np.int64)
    order = sorted((i for i in info if i.benefit > 0), key=lambda i: (-i.benefit / (i.size * i.span), i.first))
    for item in order:
        if usage[item.first:item.last + 1].max() + item.size <= budget:
            usage[item.first:item.last + 1] += item.size
            plan.layouts[id(item.buf.root)] = item.l1
    _shard(graph, info, plan, usage, device, budget)
    _replay(info, plan, budget)
    return plan


@dataclass
class _Item:
    buf: Buffer
    first: int
    last: int
    l1: TTNNLayout
    size: int  # bytes per bank in L1 interleaved
    benefit: int  # DRAM bytes saved per forward pass in L1
    reads: list  # (node, input index) over all members, views and deallocations excluded

    @property
    def span(self) -> int:
        return self.last - self.first + 1


def _describe(buf: Buffer, last_index: int, device: DeviceSpec, scheduled: set) -> _Item:
    root = buf.root
    l1 = layout_of(root).with_(buffer="l1", memory_layout="interleaved")
    members = {id(m) for m in buf.members}
    reads = []
    for member in buf.members:
        for consumer in member.outputs:
            if id(consumer) not in scheduled or consumer.op == "deallocate" or (
                    consumer.outputs and is_view(consumer) and id(consumer.outputs[0]) in members):
                continue
            reads += [(consumer, i) for i, t in enumerate(consumer.inputs) if t is member]
    size = bytes_per_bank(root.shape, l1, device.cores)
    nbytes = total_bytes(root.shape, l1)
    first, last = buf.first, buf.last
    if buf.is_param:
        benefit = nbytes * len(reads) if size <= SMALL_WEIGHT_BYTES and len(reads) >= 2 else 0
        first, last = 0, last_index
    else:
        kept_in_dram = dram_only(buf, device.cores) or feeds_dram_path_conv(buf, device.cores)
        benefit = 0 if kept_in_dram else nbytes * (1 + len(reads))
    return _Item(buf, first, last, l1, size, benefit, reads)


def feeds_dram_path_conv(buf: Buffer, banks: int) -> bool:
    """A conv kept on its DRAM path reads the buffer: it stays in DRAM (an L1 input would make real ttnn take
    the all-in-L1 path, which that conv does not fit; ir/placements.py conv_all_in_l1)."""
    return any(node.op in CONV_OPS and node.inputs and node.inputs[0] is member and not _on_l1_path(node, banks)
               for member in buf.members for node in member.outputs)


def _on_l1_path(node, banks: int) -> bool:
    """conv2d may take its all-in-L1 path (conv_transpose2d never does here)."""
    if node.op != "conv2d":
        return False
    x = node.inputs[0]
    l1 = layout_of(x).with_(buffer="l1", memory_layout="interleaved")
    return conv_all_in_l1(node.attrs, bytes_per_bank(x.shape, l1, banks))


def writes_dram_only(node, banks: int) -> bool:
    """The ttnn call always writes its output to DRAM: its op does (ir/ttnn_ops.py output_buffer), or it is a
    conv2d kept on its DRAM path."""
    if node.op == "conv2d":
        return not _on_l1_path(node, banks)
    return op_info(node.op).output_buffer == "dram"


def dram_only(buf: Buffer, banks: int) -> bool:
    """The buffer's producer always writes DRAM (writes_dram_only)."""
    producer = buf.root.inputs[0] if buf.root.inputs else None
    return producer is not None and writes_dram_only(producer, banks)


def _shard(graph, info: list[_Item], plan: Plan, usage, device: DeviceSpec, budget: int) -> None:
    placed = _placer([item.buf for item in info], plan)

    for item in info:
        if id(item.buf.root) not in plan.layouts:
            continue
        best = None  # (modelled time of the ops it changes, layout, extra bytes per bank)
        for sharded in _candidates(item, device):
            if _mixes_kinds(item, sharded, placed):
                continue
            extra = _shard_bytes(sharded) - item.size
            if usage[item.first:item.last + 1].max() + extra > budget:
                continue
            nodes = list({id(n): n for n in [item.buf.root.inputs[0]] + [node for node, _ in item.reads]}.values())
            before = [node_cost(n, device, layouts=placed).time_s for n in nodes]
            plan.layouts[id(item.buf.root)] = sharded
            after = [node_cost(n, device, layouts=placed).time_s for n in nodes]
            plan.layouts[id(item.buf.root)] = item.l1
            changed = [(b, a) for b, a in zip(before, after) if a != b]  # ops whose modelled time sharding moves
            gain = sum(a for _, a in changed)
            if changed and gain < SHARD_GAIN * sum(b for b, _ in changed) and (best is None or sum(after) < best[0]):
                best = (sum(after), sharded, extra)
        if best is not None:
            _, sharded, extra = best
            plan.layouts[id(item.buf.root)] = sharded
            usage[item.first:item.last + 1] += extra
            item.size += extra


def _candidates(item: _Item, device: DeviceSpec) -> list[TTNNLayout]:
    """The sharded layouts the buffer's producer and readers all accept (ir/placements.py)."""
    shape = item.buf.root.shape
    found = []
    if _may_shard(item, HEIGHT_SHARDING):
        height = height_shard_layout(shape, item.l1, device.grid_x, device.grid_y)
        if height is not None and _readers_take(item, height):
            found.append(height)
    if _may_shard(item, WIDTH_SHARDING):
        width = width_shard_layout(shape, item.l1, device.grid_x, device.grid_y)
        if width is not None:
            found.append(width)
    return found


def _mixes_kinds(item: _Item, sharded: TTNNLayout, placed) -> bool:
    """Another tensor of the buffer's producer or readers is sharded the other way (height vs width): ops
    were probed with one kind of sharding at a time, so kinds are not mixed within an op."""
    members = {id(m) for m in item.buf.members}
    nodes = [item.buf.root.inputs[0]] + [node for node, _ in item.reads]
    for node in nodes:
        for tensor in list(node.inputs) + list(node.outputs):
            if id(tensor) in members:
                continue
            layout = placed(tensor)
            if layout is not None and layout.memory_layout not in (None, "interleaved", sharded.memory_layout):
                return True
    return False


def _may_shard(item: _Item, table: dict) -> bool:
    """Producer and every reader accept the buffer sharded the way `table` (ir/placements.py) describes."""
    root = item.buf.root
    if item.buf.is_param or len(item.buf.members) != 1 or not item.l1.is_tile or not root.inputs:
        return False
    producer = table.get(root.inputs[0].op)
    if producer is None or not producer.output or root.inputs[0].op == "from_torch":
        return False
    shape_2d = physical_2d(root.shape, item.l1)
    for node, index in item.reads:
        facts = table.get(node.op)
        if facts is None or index not in facts.inputs:
            return False
        if node.op == "conv2d" and not conv_reads_height_sharded(node.attrs):
            return False
        if facts.same_shape_inputs:
            out_layout = layout_of(node.outputs[0]) if node.outputs else None
            if out_layout is None or not out_layout.is_tile or physical_2d(node.outputs[0].shape, out_layout) != shape_2d:
                return False
    return True


def _readers_take(item: _Item, sharded: TTNNLayout) -> bool:
    """Every matmul / linear reading the buffer accepts this very shard layout (ir/placements.py)."""
    shape = item.buf.root.shape
    for node, index in item.reads:
        if node.op in ("matmul", "linear") and index == 0:
            other = node.inputs[1].shape if len(node.inputs) > 1 else []
            if not matmul_reads_height_sharded(shape, sharded, b_batched=math.prod(other[:-2]) > 1):
                return False
    return True


def _shard_bytes(layout: TTNNLayout) -> int:
    """Bytes a height-sharded TILE tensor reserves in every L1 bank (docs/ttnn-facts.md §2)."""
    h, w = layout.shard
    return (h // TILE) * (w // TILE) * DTYPES[layout.dtype][2]


def _replay(info: list[_Item], plan: Plan, budget: int) -> None:
    """Replay the schedule on a top-down first-fit allocator; buffers that find no block go to DRAM."""
    chosen = [item for item in info if id(item.buf.root) in plan.layouts]
    starts: dict[int, list] = {}
    ends: dict[int, list] = {}
    for item in chosen:
        starts.setdefault(item.first, []).append(item)
        ends.setdefault(item.last, []).append(item)
    free = [(0, budget)]  # (offset from the bank top, length), sorted by offset
    where: dict[int, tuple] = {}
    used = peak = 0
    for index in sorted(set(starts) | set(ends)):
        for item in starts.get(index, []):
            for k, (offset, length) in enumerate(free):
                if length >= item.size:
                    where[id(item)] = (offset, item.size)
                    free[k] = (offset + item.size, length - item.size)
                    used += item.size
                    peak = max(peak, used)
                    break
            else:
                del plan.layouts[id(item.buf.root)]
                plan.demoted += 1
        for item in ends.get(index, []):
            if id(item) in where and not item.buf.is_param:
                free = _release(free, *where.pop(id(item)))
                used -= item.size
    plan.peak = peak


def _release(free: list, offset: int, length: int) -> list:
    blocks = sorted(free + [(offset, length)])
    merged = []
    for start, size in blocks:
        if size == 0:
            continue
        if merged and merged[-1][0] + merged[-1][1] == start:
            merged[-1] = (merged[-1][0], merged[-1][1] + size)
        else:
            merged.append((start, size))
    return merged
