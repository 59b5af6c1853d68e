"""Candidate moves out of DRAM, planned in a PlanningView: a `to_memory_config` right after an op that always
writes DRAM, or after a compact row's upload (buffers.py compact_row: a ROW_MAJOR weight its readers tilize,
which they would tilize in DRAM), whose copy in L1 the readers then read.

`insert_candidates` puts one after every DRAM-only output a device op reads (not a graph output) and after
every compact row;
`remove` takes one out again.  A move is kept when its copy is in L1 under the plan and the cost model
(ir/cost.py) says it pays (`move_pays`): its readers read fewer DRAM bytes than without it (the move
reads the tensor from DRAM once, as each reader would have) or, DRAM bytes equal, the modelled time of
the move and its readers is under MOVE_GAIN of the readers' time reading DRAM.  The insert-moves pass
(passes/insert_moves.py) puts the kept moves into the graph the same way.
"""
from __future__ import annotations

from onnx2ttnn.ir.cost import node_cost
from onnx2ttnn.ir.device import DeviceSpec
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.liveness import Buffer
from onnx2ttnn.memory.buffers import compact_row, describe, placer, writes_dram_only
from onnx2ttnn.memory.view import PlanningView, ViewNode

MOVE = "to_memory_config"
MOVED_SUFFIX = "_l1"  # the copy of tensor `x` is named `x_l1`
# Not measured: the same margin over the roofline cost model as sharding.py SHARD_GAIN.  A move that saves
# no DRAM bytes adds an op; a modelled gain under 2 % does not pay for it.
MOVE_GAIN = 0.98


def insert_candidates(view: PlanningView, banks: int) -> list[ViewNode]:
    """A move after every DRAM-only output that a device op reads (not a graph output) and after every compact
    row, in schedule order."""
    outputs = {id(t) for t in view.outputs}
    nodes, moves = [], []
    for node in view.nodes:
        nodes.append(node)
        if not writes_dram_only(node, banks) and not (node.outputs and compact_row(node.outputs[0])):
            continue
        for out in node.outputs:
            layout = layout_of(out)
            readers = [c for c in out.outputs if c.op != "deallocate"]
            if layout is None or not layout.on_device or not readers or id(out) in outputs:
                continue
            in_l1 = layout.with_(buffer="l1", memory_layout="interleaved")
            moved = view.new_tensor(out.name + MOVED_SUFFIX, out, in_l1)
            for consumer in readers:
                for index, tensor in enumerate(consumer.inputs):
                    if tensor is out:
                        view.set_input(consumer, index, moved)
            source = node.attrs.get("_source", "")
            attrs = {"_move": True, **({"_source": source} if source else {})}
            move = view.new_node(MOVE, [out], [moved], attrs)
            nodes.append(move)
            moves.append(move)
    view.nodes = nodes
    return moves


def remove(view: PlanningView, move: ViewNode) -> None:
    """Undo one candidate move: its readers read the DRAM original again."""
    src, moved = move.inputs[0], move.outputs[0]
    for consumer in list(moved.outputs):
        for index, tensor in enumerate(consumer.inputs):
            if tensor is moved:
                view.set_input(consumer, index, src)
    view.detach(move)


def move_pays(move: ViewNode, view: PlanningView, bufs: list[Buffer], chosen: dict,
              device: DeviceSpec) -> str:
    """Why the move pays under the plan `chosen` (id(root) -> L1 layout), "" when it does not."""
    moved = move.outputs[0]
    buf = next((b for b in bufs if any(m is moved for m in b.members)), None)
    if buf is None or id(buf.root) not in chosen:
        return ""
    placed = placer(bufs, chosen)
    members = {id(m) for m in buf.members}
    source = placed(move.inputs[0])  # DRAM for a DRAM-only output; a compact row may be resident in L1

    def in_dram(tensor):
        layout = placed(tensor)
        return layout.with_(buffer=source.buffer, memory_layout="interleaved") if id(tensor) in members else layout

    readers = describe(buf, 0, device, {id(node) for node in view.nodes}).reads
    nodes = list({id(node): node for node, _ in readers}.values())
    with_move = [node_cost(move, device, layouts=placed)] + [node_cost(n, device, layouts=placed) for n in nodes]
    without = [node_cost(n, device, layouts=in_dram) for n in nodes]
    dram_with = sum(c.dram_bytes for c in with_move)
    dram_without = sum(c.dram_bytes for c in without)
    if dram_with < dram_without:
        return f"its readers read {dram_without - dram_with} fewer DRAM bytes"
    time_with = sum(c.time_s for c in with_move)
    time_without = sum(c.time_s for c in without)
    if dram_with == dram_without and time_with < MOVE_GAIN * time_without:
        return f"modelled time of it and its readers -{100 * (1 - time_with / time_without):.0f} %"
    return ""
