"""memory/resident.py: weights resident in L1 by DRAM bytes saved per byte per bank, while they fit, each
with its reason."""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.liveness import Buffer
from onnx2ttnn.memory.buffers import BufferFacts
from onnx2ttnn.memory.resident import choose_resident


def _weight(name, size, benefit, reads=1, first=0, pinned=""):
    root = gs.Variable(name, dtype=np.float32, shape=[1])
    layout = f"{name} in L1"  # stands for its L1 layout: choose_resident only hands it on
    return BufferFacts(Buffer(root, first, first, [root], is_param=True), 0, 9, layout, size, size, benefit,
                       [None] * reads, pinned)


def _run(weights, room):
    chosen, why = {}, {}
    taken = choose_resident(weights, room, chosen, why)
    return taken, [w.buf.root.name for w in weights if id(w.buf.root) in chosen], {
        w.buf.root.name: why[id(w.buf.root)] for w in weights}


def test_best_dram_bytes_per_byte_first_and_a_smaller_one_still_fills_what_a_larger_one_leaves():
    a = _weight("a", 600, 600 * 64)  # 64 DRAM bytes saved per byte per bank
    b = _weight("b", 500, 500 * 64 * 2, reads=2)  # 128: read twice
    c = _weight("c", 300, 300 * 64, first=1)  # 64, weighed after a (read later), fits where a does not
    taken, resident, why = _run([a, b, c], room=1000)
    assert resident == ["b", "c"] and taken == 800
    assert why["b"] == "L1 interleaved, resident: read 2 times per forward, saves 64000 DRAM bytes per forward"
    assert why["c"] == "L1 interleaved, resident: read once per forward, saves 19200 DRAM bytes per forward"
    # a was weighed when b had taken 500 of the 1000
    assert why["a"] == "DRAM: weight, 600 B per bank, does not fit in the 500 B per bank the activations leave"


def test_nothing_resident_without_room_and_a_weight_never_read_says_so():
    taken, resident, why = _run([_weight("a", 10, 640), _weight("z", 10, 0, reads=0, pinned="weight never read")],
                                room=0)
    assert (taken, resident) == (0, [])
    assert why == {"a": "DRAM: weight, 10 B per bank, does not fit in the 0 B per bank the activations leave",
                   "z": "DRAM: weight never read"}


def _embedding_model(rows: int = 512, width: int = 256):
    """y = table[ids] + 1: a Gather from a constant table (ttnn.embedding), ids [1, 16] int64."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    table = numpy_helper.from_array(np.random.default_rng(0).standard_normal((rows, width)).astype(np.float32), "t")
    one = numpy_helper.from_array(np.ones((1,), np.float32), "one")
    nodes = [helper.make_node("Gather", ["t", "ids"], ["g"]), helper.make_node("Add", ["g", "one"], ["y"])]
    graph = helper.make_graph(nodes, "embed", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, width])], [table, one])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_tile_embedding_table_stays_in_dram_and_a_row_major_one_may_be_resident():
    # ttnn.embedding copies a TILE table whole into a temporary of its bf16 size in the table's own memory at
    # every call (docs/ttnn-facts.md §32: BERT-base's bfloat8_b table made the embedding clash in L1 on p150)
    from onnx2ttnn.ir.graph import layout_of
    from tests.memory.memory_models import run_pipeline

    for weights, page, buffer in (("bfp8", "tile", "dram"), ("bf16", "row_major", "l1")):
        module, _ = run_pipeline(_embedding_model(), weights=weights)
        embedding = next(n for n in module.graph.nodes if n.op == "embedding")
        table = embedding.inputs[1]
        assert (layout_of(table).page, layout_of(table).buffer) == (page, buffer), weights
        reason = module.notes["place-memory"]["reasons"][table]
        if buffer == "dram":
            assert reason == ("DRAM: embedding copies it whole into a temporary as large as itself, in its own "
                              "memory, at every call")
        else:
            assert reason.startswith("L1 interleaved, resident")
