"""A model of ttnn's L1 allocator, replayed over a plan: the check that the buffers a policy put in L1 also
find contiguous room, not only enough bytes in total.

The real allocator gives every L1 buffer the same range of addresses in every bank, taken top-down, first
fit, and frees it at the buffer's deallocation (docs/ttnn-facts.md section 2, "Placement").  The replay
walks the schedule: at each index it places the buffers born there (in the order given), then frees those
whose last use it is (weights are never freed).  A buffer that finds no block is demoted to DRAM.  A buffer
with a twin (buffers.py BufferFacts.twin) takes a block for its producer's intermediate first, given back
once the buffer has its own block below it, as ttnn allocates and frees them.  Weights
resident in L1 are given first: load_parameters allocates them before the forward pass's first tensor, so
they hold the top of every bank and the activations' blocks lie below them, each as far below as the
weights take (`extent` tells how far down the activations reach without them).
"""
from __future__ import annotations


def replay(items: list, capacity: int) -> tuple[list, int]:
    """The items (with `first`, `last`, `reserved` bytes per bank and `buf.is_param`) that find no block in
    `capacity` bytes per bank, and the peak bytes per bank in use."""
    demoted, peak, _ = replay_extent(items, capacity)
    return demoted, peak


def replay_extent(items: list, capacity: int, lines: dict | None = None) -> tuple[list, int, int]:
    """replay's answer and the extent: how far below the bank top the lowest block placed reaches.  `lines`
    (schedule index -> bytes below the bank top) bounds the blocks of the buffers live at that index: an op
    whose circular buffers fill L1 from the bottom (a long ROW_MAJOR pad, buffers.row_buffers_reserve) clashes
    with any block reaching below its line, so a buffer first fit would place there is demoted."""
    starts: dict[int, list] = {}
    ends: dict[int, list] = {}
    for item in items:
        starts.setdefault(item.first, []).append(item)
        ends.setdefault(item.last, []).append(item)
    free = [(0, capacity)]  # (offset from the bank top, length), sorted by offset
    where: dict[int, tuple] = {}
    demoted = []
    used = peak = extent = 0
    for index in sorted(set(starts) | set(ends)):
        for item in starts.get(index, []):
            has_twin = getattr(item, "twin", False)
            twin = _take(free, item.reserved) if has_twin else None
            offset = _take(free, item.reserved) if twin is not None or not has_twin else None
            limit = min([capacity] + [line for at, line in (lines or {}).items() if item.first <= at <= item.last])
            if offset is not None and offset + item.reserved > limit:  # it would reach into an op's buffers
                free = _release(free, offset, item.reserved)
                offset = None
            if offset is None:
                demoted.append(item)
            else:
                where[id(item)] = (offset, item.reserved)
                used += item.reserved
                peak = max(peak, used + (item.reserved if twin is not None else 0))
                extent = max(extent, offset + item.reserved, (twin or 0) + item.reserved)
            if twin is not None:  # the producer's intermediate, freed once the item is written
                free = _release(free, twin, item.reserved)
        for item in ends.get(index, []):
            if id(item) in where and not item.buf.is_param:
                free = _release(free, *where.pop(id(item)))
                used -= item.reserved
    return demoted, peak, extent


def _take(free: list, size: int):
    """The offset of the first free block of `size` bytes (top-down, first fit), taken out of `free`; None
    when no block is large enough."""
    for k, (offset, length) in enumerate(free):
        if length >= size:
            free[k] = (offset + size, length - size)
            return offset
    return None


def _release(free: list, offset: int, length: int) -> list:
    """The free list with the block at `offset` given back, merged with its free neighbours."""
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
