"""Compact rows (memory/buffers.py compact_row: a coded linear's ROW_MAJOR scale or bias row, which its reader
tilizes in the row's own buffer, ttnn-facts §47): resident in L1, or moved into L1 before its reader by a
planned to_memory_config, or back to TILE; never read ROW_MAJOR from DRAM by the op that tilizes it."""
from __future__ import annotations

from dataclasses import replace

from onnx2ttnn.ir.cost import node_cost, tilized
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.ir.graph import layout_of
from tests.lowering.test_weight_codes import qdq_gemm
from tests.memory.memory_models import run_pipeline

N150 = get_device("n150")


def _placements(l1_bank_bytes: int):
    device = replace(N150, l1_bank_bytes=l1_bank_bytes)
    module, _ = run_pipeline(qdq_gemm(), device=device, dtype="fp32")
    rows = [n.outputs[0] for n in module.graph.nodes if n.op == "from_torch" and n.attrs.get("_param")
            and n.outputs[0].name.endswith(("_scale", "_bias"))]
    return module, rows


def test_a_row_major_row_is_never_tilized_in_dram_whatever_the_l1_room():
    """Around the L1 size where the rows stop fitting beside the activations, every placement the planner
    makes: resident (ROW_MAJOR, L1), moved (ROW_MAJOR in DRAM, read only by a move into L1), or TILE."""
    kinds = set()
    for eighths in range(0, 40):  # 322 KB .. 327 KB per bank for tensors (the transition for this model)
        module, rows = _placements(N150.l1_small_size + 322 * 1024 + eighths * 128)
        for row in rows:
            layout = layout_of(row)
            readers = [n for n in row.outputs if n.op != "deallocate"]
            if layout.is_tile:
                kinds.add("tile")
            elif layout.buffer == "l1":
                kinds.add("resident")
            else:
                assert all(n.op == "to_memory_config" for n in readers), (row.name, [n.op for n in readers])
                copies = [n.outputs[0] for n in readers]
                assert all(layout_of(c).buffer == "l1" and not layout_of(c).is_tile for c in copies)
                kinds.add("moved")
            for node in module.graph.nodes:  # no op tilizes a ROW_MAJOR operand from DRAM
                for i, t in enumerate(node.inputs):
                    assert not (tilized(node, i) and layout_of(t).buffer == "dram"), (node.op, t.name)
    assert kinds == {"tile", "resident", "moved"}, kinds


def test_a_moved_row_costs_its_content_in_dram_not_its_tile_padding():
    """ROW_MAJOR in DRAM, moved into L1 before its reader: 4 N DRAM bytes per forward (the move's read), where a
    TILE row costs 128 N and a ROW_MAJOR row tilized in DRAM 4 N + 256 N."""
    for eighths in range(0, 40):
        module, rows = _placements(N150.l1_small_size + 322 * 1024 + eighths * 128)
        moves = [n for n in module.graph.nodes if n.op == "to_memory_config" and n.inputs[0] in rows]
        if moves:
            break
    else:
        raise AssertionError("no L1 size in the range gave a move")
    for move in moves:
        n = move.inputs[0].shape[-1]
        assert node_cost(move, N150).dram_read == 4 * n
        copy = move.outputs[0]
        reader = next(c for c in copy.outputs if c.op != "deallocate")
        in_dram = lambda t: layout_of(t).with_(buffer="dram") if t is copy else layout_of(t)  # noqa: E731
        here, there = node_cost(reader, N150), node_cost(reader, N150, layouts=in_dram)
        # read from DRAM the reader would read the row and its padded copy, and write the copy
        assert (there.dram_read - here.dram_read, there.dram_write - here.dram_write) == (4 * n + 128 * n, 128 * n)
        assert layout_of(copy).buffer == "l1"
