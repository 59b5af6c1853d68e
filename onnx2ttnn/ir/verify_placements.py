"""The placement contracts of the IR verifier (ir/verify_ir.py): what place-memory and assign-memory-configs leave.

After place-memory: a sharded tensor is written and read only by ops the probed facts admit for its
sharding (ir/placements.py: the HEIGHT_SHARDING / WIDTH_SHARDING tables, the conv and matmul bounds, the
same padded 2-D shape where the facts ask it), no op mixes height- and width-sharded tensors (ops were
probed with one kind at a time), and ops that always write DRAM (conv_transpose2d, conv2d off its all-in-L1
path) have DRAM outputs.  After assign-memory-configs: every op taking a memory_config has the one its output
layout derives (memory_config_of).  Each check yields (node, tensor, message) for every problem it finds.
"""
from __future__ import annotations

import math
from typing import Iterator, Optional

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import Module, layout_of
from onnx2ttnn.ir.layout import TTNNLayout, bytes_per_bank, memory_config_of, physical_2d
from onnx2ttnn.ir.placements import (HEIGHT_SHARDING, WIDTH_SHARDING, conv_all_in_l1, conv_reads_height_sharded,
                                     matmul_reads_height_sharded)
from onnx2ttnn.ir.ttnn_ops import op_info

Found = Iterator[tuple[Optional[gs.Node], Optional[gs.Tensor], str]]
SHARD_FACTS = {"height_sharded": HEIGHT_SHARDING, "width_sharded": WIDTH_SHARDING}


def placements(module: Module, device) -> Found:
    """Sharding only where the op facts admit it; DRAM-only ops write DRAM."""
    for node in module.graph.nodes:
        kinds = {layout_of(t).memory_layout for t in list(node.inputs) + list(node.outputs)
                 if layout_of(t) is not None and layout_of(t).memory_layout in SHARD_FACTS}
        if len(kinds) > 1:
            yield node, None, f"mixes {' and '.join(sorted(kinds))} tensors (ops were probed with one kind)"
        for tensor in node.outputs:
            layout = layout_of(tensor)
            if layout is not None and layout.buffer != "dram" and _writes_dram_only(node, device):
                yield node, tensor, f"{layout} but ttnn.{node.op} writes DRAM here whatever memory_config says"
            if layout is not None and layout.memory_layout not in (None, "interleaved"):
                yield from _shard_readers(node, tensor, layout)


def _writes_dram_only(node: gs.Node, device) -> bool:
    if node.op == "conv2d" and device is not None:  # off its all-in-L1 path (ir/placements.conv_all_in_l1)
        x = node.inputs[0]
        l1 = layout_of(x).with_(buffer="l1", memory_layout="interleaved")
        return not conv_all_in_l1(node.attrs, bytes_per_bank(x.shape, l1, device.cores))
    return op_info(node.op).output_buffer == "dram"


def _shard_readers(producer: gs.Node, tensor: gs.Tensor, layout: TTNNLayout) -> Found:
    """The producer and every reader of a sharded tensor accept it (ir/placements.py facts)."""
    table = SHARD_FACTS.get(layout.memory_layout, {})
    facts = table.get(producer.op)
    if facts is None or not facts.output or not layout.is_tile:
        yield producer, tensor, f"{layout}: ttnn.{producer.op} does not write it (ir/placements.py)"
    for reader in tensor.outputs:
        for index in [i for i, t in enumerate(reader.inputs) if t is tensor]:
            facts = table.get(reader.op)
            refused = facts is None or index not in facts.inputs
            if reader.op == "conv2d":
                refused = refused or not conv_reads_height_sharded(reader.attrs)
            if reader.op in ("matmul", "linear") and index == 0 and not refused:
                other = reader.inputs[1].shape if len(reader.inputs) > 1 else []
                refused = not matmul_reads_height_sharded(tensor.shape, layout, b_batched=math.prod(other[:-2]) > 1,
                                                          activation=bool(reader.attrs.get("activation")))
            if not refused and facts.same_shape_inputs and reader.outputs:
                out = layout_of(reader.outputs[0])
                refused = out is None or physical_2d(reader.outputs[0].shape, out) != physical_2d(tensor.shape, layout)
            if refused:
                yield reader, tensor, (f"input {index} is {layout}, which ttnn.{reader.op} does not read "
                                       "(ir/placements.py)")


def memory_configs(module: Module, device) -> Found:
    """Every memory_config equals what its output layout derives."""
    for node in module.graph.nodes:
        layout = layout_of(node.outputs[0]) if node.outputs else None
        if not op_info(node.op).memory_config or layout is None:
            continue
        stored, derived = node.attrs.get("memory_config"), memory_config_of(layout)
        if stored != derived:
            yield node, node.outputs[0], f"memory_config {stored} but its layout {layout} derives {derived}"
