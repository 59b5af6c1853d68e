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
