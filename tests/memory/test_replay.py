"""memory/replay.py: the model of ttnn's top-down first-fit L1 allocator the plans are replayed on."""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.liveness import Buffer
from onnx2ttnn.memory.buffers import BufferFacts
from onnx2ttnn.memory.replay import replay, replay_extent


def _item(name, first, last, size, is_param=False):
    root = gs.Variable(name, dtype=np.float32, shape=[1])
    return BufferFacts(Buffer(root, first, last, [root], is_param=is_param), first, last, None, size, size, 1, [])


def test_replay_demotes_a_buffer_the_fragmented_allocator_cannot_place():
    """Three buffers of 1, 1 and 2 units: freeing the first leaves two 1-unit holes, no room for 2 contiguous."""
    a, b, c, big = _item("a", 0, 1, 1), _item("b", 0, 5, 1), _item("c", 0, 5, 1), _item("big", 2, 3, 2)
    # budget 4: a, b, c take units 0..2; a frees unit 0; free: unit 0 and unit 3, not 2 contiguous
    demoted, peak = replay([a, b, c, big], capacity=4)
    assert demoted == [big]
    assert peak == 3


def test_replay_reuses_a_freed_block_and_never_frees_weights():
    weight, a, b = _item("w", 0, 1, 2, is_param=True), _item("a", 0, 1, 2), _item("b", 2, 3, 2)
    demoted, peak = replay([weight, a, b], capacity=4)
    assert demoted == [] and peak == 4  # b takes a's block once a is freed at 1
    demoted, _ = replay([weight, a, b, _item("c", 2, 3, 2)], capacity=4)
    assert [item.buf.root.name for item in demoted] == ["c"]  # the weight still holds its block


def test_replay_extent_is_how_far_down_the_lowest_block_reaches_and_weights_first_shift_it():
    a, b, c = _item("a", 0, 1, 2), _item("b", 1, 3, 1), _item("c", 2, 3, 1)
    # a takes 0..1, b 2, a frees 0..1, c takes 0: the lowest block reached is b's, ending at 3
    assert replay_extent([a, b, c], capacity=8) == ([], 3, 3)
    # a weight given first holds the top 2 units; the same blocks, each 2 lower
    weight = _item("w", 0, 3, 2, is_param=True)
    assert replay_extent([weight, a, b, c], capacity=8) == ([], 5, 5)
    # without room for that shift, the activation reaching lowest is the one demoted
    assert [item.buf.root.name for item in replay_extent([weight, a, b, c], capacity=4)[0]] == ["b"]


def test_a_buffer_with_a_twin_takes_a_block_for_its_producer_s_intermediate_first():
    # y (2 units) is written through an intermediate of its size (a linear's fused activation): the
    # intermediate takes units 1..2, y 3..4 below it, then the intermediate is given back
    x = _item("x", 0, 3, 1)
    y = _item("y", 1, 3, 2)
    y.twin = True
    assert replay_extent([x, y], capacity=5) == ([], 5, 5)
    after = _item("z", 2, 3, 2)  # fits in the intermediate's freed block
    assert replay_extent([x, y, after], capacity=5)[0] == []
    assert replay_extent([x, y], capacity=4)[0] == [y]  # 1 + 2 + 2 units do not fit in 4
    y.twin = False
    assert replay_extent([x, y], capacity=4) == ([], 3, 3)


def test_fits_and_take_count_a_twin_at_its_birth_only():
    room = np.array([4, 4, 4, 4])
    item = _item("y", 1, 2, 2)
    item.twin = True
    assert item.fits(room, 2) and not item.fits(room, 3)
    item.take(room, 2)
    assert room.tolist() == [4, 0, 2, 4]
    assert not item.fits(room, 1)  # no room left at its birth for a second one


def test_a_line_demotes_the_buffers_that_would_reach_below_it_while_it_stands():
    """An op whose circular buffers fill L1 from the bottom (a long ROW_MAJOR pad at index 2, its line 3 units
    below the top): a buffer live there that first fit puts lower is demoted; one freed before it is not, and the
    block the demoted one took is free again for the next."""
    a, b, c = _item("a", 0, 3, 2), _item("b", 0, 3, 2), _item("c", 0, 1, 2)
    demoted, _, extent = replay_extent([a, b, c], capacity=8, lines={2: 3})
    assert [item.buf.root.name for item in demoted] == ["b"] and extent == 4  # a 0..1, b would be 2..3; c 2..3
    assert replay_extent([a, b, c], capacity=8)[0] == []  # no line: all three placed
