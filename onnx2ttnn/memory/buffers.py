"""What the memory planner knows about each device buffer before it places it: live range, reads, bytes
per bank, the DRAM bytes L1 would save, and what pins it to DRAM.

A buffer is pinned to DRAM when its producer always writes DRAM (`writes_dram_only`: an op whose
ir/ttnn_ops.py output_buffer is "dram", such as conv_transpose2d, or a conv2d kept on its DRAM path by
ir/placements.py conv_all_in_l1), or when a conv kept on its DRAM path reads it (an L1 input would make
real ttnn take the all-in-L1 path, which that conv does not fit).  A weight (a parameter load_parameters
uploads to the device) lives over the whole schedule and across forward calls; in L1 it saves its bytes, at
its layout's dtype, once per read in every forward pass (policies.py weighs it after the activations).
"""
from __future__ import annotations

from dataclasses import dataclass

from onnx2ttnn.ir.aliases import is_view
from onnx2ttnn.ir.cost import CONV_OPS, activation_apart, tilized
from onnx2ttnn.ir.device import DeviceSpec
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import LAYOUT_DTYPES, TTNNLayout, bytes_per_bank, total_bytes
from onnx2ttnn.ir.liveness import Buffer
from onnx2ttnn.ir.placements import conv_all_in_l1
from onnx2ttnn.ir.ttnn_ops import OPS, op_info
from onnx2ttnn.memory.budget import OP_SCRATCH_RESERVE


@dataclass
class BufferFacts:
    """One buffer as the planner sees it."""

    buf: Buffer
    first: int  # live range in schedule indices (a weight lives over the whole program)
    last: int
    l1: TTNNLayout  # its layout in L1 interleaved
    interleaved_bytes: int  # bytes per L1 bank, interleaved
    reserved: int  # bytes per L1 bank of the placement chosen so far (interleaved, or one shard)
    benefit: int  # DRAM bytes per forward pass it saves in L1 (0: worth nothing or pinned to DRAM)
    reads: list  # (node, input index) over all members, views and deallocations excluded
    pinned: str = ""  # why it stays in DRAM whatever fits, "" when nothing pins it
    # its producer first writes an intermediate of its size in its memory, freed once it is written (a plain
    # linear's fused activation: ir/cost.py activation_apart; a ROW_MAJOR bias, added apart: ttnn-facts §47), so
    # at `first` it needs its bytes twice
    twin: bool = False

    @property
    def span(self) -> int:
        return self.last - self.first + 1

    def fits(self, room, size: int) -> bool:
        """Whether `size` bytes per core fit in `room` (bytes per core free at each schedule index) over its
        live range, twice at its birth when it has a twin."""
        return room[self.first:self.last + 1].min() >= size and (not self.twin or room[self.first] >= 2 * size)

    def take(self, room, size: int) -> None:
        """Take `size` bytes per core out of `room` over its live range (and its twin's at its birth)."""
        room[self.first:self.last + 1] -= size
        if self.twin:
            room[self.first] -= size


def describe(buf: Buffer, last_index: int, device: DeviceSpec, scheduled: set,
             persistent: frozenset = frozenset()) -> BufferFacts:
    """The facts of one buffer; `scheduled` holds id() of every node of the schedule; `persistent` id() of the
    buffer roots a traced run keeps allocated to the end of the forward (ir/traceable.py persistent_buffers)."""
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
    pinned = dram_pin(buf, device.cores)
    if buf.is_param:
        first, last = 0, last_index
        if pinned:
            return BufferFacts(buf, first, last, l1, size, size, 0, reads, pinned)
        if not reads:
            return BufferFacts(buf, first, last, l1, size, size, 0, reads, "weight never read")
        return BufferFacts(buf, first, last, l1, size, size, nbytes * len(reads), reads)
    if id(root) in persistent:
        last = last_index
    producer = root.inputs[0] if root.inputs else None
    twin = producer is not None and (activation_apart(producer) or (producer.op == "linear" and tilized(producer, 2)))
    return BufferFacts(buf, first, last, l1, size, size, 0 if pinned else nbytes * (1 + len(reads)), reads, pinned,
                       twin)


def dram_pin(buf: Buffer, banks: int) -> str:
    """Why the buffer must stay in DRAM, "" if nothing pins it there."""
    producer = buf.root.inputs[0] if buf.root.inputs else None
    if producer is not None and writes_dram_only(producer, banks):
        path = " (conv on its DRAM path)" if producer.op == "conv2d" else ""
        return f"producer {producer.op} writes DRAM only{path}"
    if feeds_dram_path_conv(buf, banks):
        return "feeds a DRAM-path conv"
    reader = next((node for member in buf.members for node in member.outputs
                   if any(node.inputs[i] is member for i in op_info(node.op).dram_inputs if i < len(node.inputs))),
                  None)
    if reader is not None:
        return f"{reader.op} reads it from DRAM only"
    copier = next((node for member in buf.members if layout_of(member).page == "tile" for node in member.outputs
                   if any(node.inputs[i] is member for i in op_info(node.op).copied_tile_inputs
                          if i < len(node.inputs))), None)
    return (f"{copier.op} copies it whole into a temporary as large as itself, in its own memory, at every call"
            if copier is not None else "")


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


def feeds_dram_path_conv(buf: Buffer, banks: int) -> bool:
    """A conv kept on its DRAM path reads the buffer (ir/placements.py conv_all_in_l1)."""
    return any(node.op in CONV_OPS and node.inputs and node.inputs[0] is member and not _on_l1_path(node, banks)
               for member in buf.members for node in member.outputs)


def _on_l1_path(node, banks: int) -> bool:
    """conv2d may take its all-in-L1 path (conv_transpose2d never does here)."""
    if node.op != "conv2d":
        return False
    x = node.inputs[0]
    l1 = layout_of(x).with_(buffer="l1", memory_layout="interleaved")
    return conv_all_in_l1(node.attrs, bytes_per_bank(x.shape, l1, banks))


def placer(bufs: list[Buffer], chosen: dict):
    """The layout each tensor gets when the buffers in `chosen` (id(root) -> L1 layout) are in L1 and the
    others in DRAM: what place-memory will write."""
    roots = {id(m): buf.root for buf in bufs for m in buf.members}

    def placed(tensor):
        layout = layout_of(tensor)
        if layout is None or not layout.on_device:
            return layout
        root = roots.get(id(tensor))
        layout_in_l1 = chosen.get(id(root)) if root is not None else None
        return member_layout(layout, layout_in_l1)
    return placed


def member_layout(layout: TTNNLayout, chosen) -> TTNNLayout:
    """The layout of one member of a buffer placed at `chosen` (None: DRAM).  Views share the buffer's
    placement; sharded buffers have no views (sharding.py), so a sharded member takes the chosen layout."""
    if chosen is None:
        return layout.with_(buffer="dram", memory_layout="interleaved")
    if chosen.memory_layout == "interleaved":
        return layout.with_(buffer="l1", memory_layout="interleaved")
    return chosen


def compact_row(tensor) -> bool:
    """A ROW_MAJOR weight every reader tilizes (ir/cost.py tilized: a coded linear's scale row, pinned ROW_MAJOR
    by its rule): in DRAM its readers would tilize it there, read, written padded and read again, more DRAM
    bytes than a TILE row; it is read from L1 (resident, or a planned move: moves.py) or turned back to TILE
    (plan.py; docs/ttnn-facts.md §47, docs/design.md §6.39)."""
    producer = tensor.inputs[0] if tensor.inputs else None
    layout = layout_of(tensor)
    if producer is None or producer.op != "from_torch" or not producer.attrs.get("_param") or layout is None \
            or not layout.on_device or layout.is_tile:
        return False
    readers = [(node, i) for node in tensor.outputs if node.op != "deallocate"
               for i, t in enumerate(node.inputs) if t is tensor]
    return bool(readers) and all(tilized(node, i) for node, i in readers)


# the most any ROW_MAJOR pad needed, its row of 44,098 float32 values (docs/ttnn-facts.md §49): the buffers stop
# growing near the L1 size, where 19 rows would be 3.4 MB
ROW_BUFFERS_MAX = 1_058_915


def row_buffers_reserve(node) -> int:
    """Bytes per L1 bank a ROW_MAJOR call's circular buffers take beyond OP_SCRATCH_RESERVE: the op table's
    row_buffer_rows times its output row, at most ROW_BUFFERS_MAX (a long row padded: docs/ttnn-facts.md §49)."""
    info = op_info(node.op) if node.op in OPS else None
    layout = layout_of(node.outputs[0]) if node.outputs else None
    if info is None or not info.row_buffer_rows or layout is None or layout.is_tile or not node.outputs[0].shape:
        return 0
    row = int(node.outputs[0].shape[-1]) * LAYOUT_DTYPES[layout.dtype][1]
    return max(0, min(info.row_buffer_rows * row, ROW_BUFFERS_MAX) - OP_SCRATCH_RESERVE)


def tilize_reserve(node, banks: int) -> int:
    """Bytes per L1 bank the call's tilized copies of ROW_MAJOR operands take while it runs (ir/cost.py
    tilized; allocated interleaved in the operand's buffer, L1 assumed: the planner keeps room for it)."""
    total = 0
    for index, tensor in enumerate(node.inputs):
        if tilized(node, index):
            tile = layout_of(tensor).with_(page="tile", buffer="l1", memory_layout="interleaved")
            total += bytes_per_bank(tensor.shape, tile, banks)
    return total
