"""Core coordinates, shard specs and memory configs (ttnn.MemoryConfig and friends).

Values compare equal by value and print like the real library's C++ reprs.  The rules that tie a memory
config to a tensor (shard shape vs tensor shape, cores vs device grid) live in `_placement.py`; this module
only describes configurations.
"""
from __future__ import annotations

import math

from ._types import BufferType, ShardOrientation, ShardStrategy, TensorMemoryLayout


class CoreCoord:
    """A core position (x = column, y = row) in the compute grid."""

    __slots__ = ("x", "y")

    def __init__(self, arg0, arg1=None, /):
        if arg1 is None:
            arg0, arg1 = arg0
        self.x, self.y = int(arg0), int(arg1)

    def __eq__(self, other):
        return isinstance(other, CoreCoord) and (self.x, self.y) == (other.x, other.y)

    def __hash__(self):
        return hash((self.x, self.y))

    def __lt__(self, other):
        return (self.y, self.x) < (other.y, other.x)

    def __repr__(self):
        return f"(x={self.x},y={self.y})"


class CoreRange:
    """An inclusive rectangle of cores from `start` to `end`."""

    __slots__ = ("start", "end")

    def __init__(self, start: CoreCoord, end: CoreCoord):
        if end.x < start.x or end.y < start.y:
            raise RuntimeError(f"TT_FATAL: Invalid core range for start: {start}, end: {end}")
        self.start, self.end = start, end

    def grid_size(self) -> CoreCoord:
        return CoreCoord(self.end.x - self.start.x + 1, self.end.y - self.start.y + 1)

    def num_cores(self) -> int:
        size = self.grid_size()
        return size.x * size.y

    def contains(self, core: CoreCoord) -> bool:
        return self.start.x <= core.x <= self.end.x and self.start.y <= core.y <= self.end.y

    def __eq__(self, other):
        return isinstance(other, CoreRange) and (self.start, self.end) == (other.start, other.end)

    def __hash__(self):
        return hash((self.start, self.end))

    def __repr__(self):
        return f"[{self.start} - {self.end}]"


class CoreRangeSet:
    """A set of core ranges (ttnn.CoreRangeSet)."""

    __slots__ = ("_ranges",)

    def __init__(self, core_ranges):
        ranges = sorted(set(core_ranges), key=lambda r: (r.start.y, r.start.x, r.end.y, r.end.x))
        for i, a in enumerate(ranges):
            for b in ranges[i + 1:]:
                if not (a.end.x < b.start.x or b.end.x < a.start.x or a.end.y < b.start.y or b.end.y < a.start.y):
                    raise RuntimeError(f"TT_FATAL: Cannot create CoreRangeSet with overlapping ranges {a} and {b}")
        self._ranges = tuple(ranges)

    def ranges(self) -> list:
        return list(self._ranges)

    def num_cores(self) -> int:
        return sum(r.num_cores() for r in self._ranges)

    def empty(self) -> bool:
        return not self._ranges

    def contains(self, core: CoreCoord) -> bool:
        return any(r.contains(core) for r in self._ranges)

    def bounding_box(self) -> CoreRange:
        return CoreRange(CoreCoord(min(r.start.x for r in self._ranges), min(r.start.y for r in self._ranges)),
                         CoreCoord(max(r.end.x for r in self._ranges), max(r.end.y for r in self._ranges)))

    def _cores(self, orientation: ShardOrientation) -> list:
        """The cores in shard-assignment order."""
        cores = []
        for r in self._ranges:
            if orientation is ShardOrientation.ROW_MAJOR:
                cores += [CoreCoord(x, y) for y in range(r.start.y, r.end.y + 1) for x in range(r.start.x, r.end.x + 1)]
            else:
                cores += [CoreCoord(x, y) for x in range(r.start.x, r.end.x + 1) for y in range(r.start.y, r.end.y + 1)]
        return cores

    def __eq__(self, other):
        return isinstance(other, CoreRangeSet) and self._ranges == other._ranges

    def __hash__(self):
        return hash(self._ranges)

    def __repr__(self):
        return "{" + ", ".join(repr(r) for r in self._ranges) + "}"


class CoreGrid:
    """A rectangular grid of y rows by x columns, starting at core (0, 0)."""

    __slots__ = ("x", "y")

    def __init__(self, *, x: int, y: int):
        self.x, self.y = int(x), int(y)

    @property
    def num_cores(self) -> int:
        return self.x * self.y

    def __eq__(self, other):
        return isinstance(other, CoreGrid) and (self.x, self.y) == (other.x, other.y)

    def __hash__(self):
        return hash((self.x, self.y))

    def __repr__(self):
        return f"ttnn.CoreGrid(x={self.x}, y={self.y})"


class ShardSpec:
    """Which cores hold the shards and the 2-D shape [height, width] of each shard."""

    __slots__ = ("grid", "shape", "orientation")

    def __init__(self, grid: CoreRangeSet, shard_shape, shard_orientation: ShardOrientation):
        if not isinstance(grid, CoreRangeSet):
            raise TypeError("ShardSpec: grid must be a ttnn.CoreRangeSet")
        shape = tuple(int(d) for d in shard_shape)
        if len(shape) != 2:
            raise RuntimeError(f"TT_FATAL: Shard shape must have 2 dimensions, got {list(shape)}")
        self.grid, self.shape, self.orientation = grid, shape, shard_orientation

    def num_cores(self) -> int:
        return self.grid.num_cores()

    def __eq__(self, other):
        return isinstance(other, ShardSpec) and (self.grid, self.shape, self.orientation) == (
            other.grid, other.shape, other.orientation)

    def __hash__(self):
        return hash((self.grid, self.shape, self.orientation))

    def __repr__(self):
        return (f"ShardSpec(grid={self.grid},shape={{{self.shape[0]}, {self.shape[1]}}},"
                f"orientation=ShardOrientation::{self.orientation.name})")


class MemoryConfig:
    """Buffer type + memory layout (+ shard spec for sharded layouts) of a device tensor."""

    __slots__ = ("memory_layout", "buffer_type", "shard_spec")

    def __init__(self, memory_layout: TensorMemoryLayout = TensorMemoryLayout.INTERLEAVED,
                 buffer_type: BufferType = BufferType.DRAM, shard_spec: ShardSpec | None = None):
        if not isinstance(memory_layout, TensorMemoryLayout) or not isinstance(buffer_type, BufferType):
            raise TypeError("MemoryConfig(memory_layout: ttnn.TensorMemoryLayout, buffer_type: ttnn.BufferType, "
                            "shard_spec: ttnn.ShardSpec | None)")
        self.memory_layout, self.buffer_type, self.shard_spec = memory_layout, buffer_type, shard_spec

    def is_sharded(self) -> bool:
        return self.memory_layout is not TensorMemoryLayout.INTERLEAVED

    @property
    def interleaved(self) -> bool:
        return not self.is_sharded()

    def __eq__(self, other):
        return isinstance(other, MemoryConfig) and (self.memory_layout, self.buffer_type, self.shard_spec) == (
            other.memory_layout, other.buffer_type, other.shard_spec)

    def __hash__(self):
        return hash((self.memory_layout, self.buffer_type, self.shard_spec))

    def __repr__(self):
        spec = "std::nullopt" if self.shard_spec is None else repr(self.shard_spec)
        return (f"MemoryConfig(memory_layout=TensorMemoryLayout::{self.memory_layout.name},"
                f"buffer_type=BufferType::{self.buffer_type.name},shard_spec={spec})")


DRAM_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.DRAM)
L1_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.L1)
L1_HEIGHT_SHARDED_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1)
L1_WIDTH_SHARDED_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.WIDTH_SHARDED, BufferType.L1)
L1_BLOCK_SHARDED_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.BLOCK_SHARDED, BufferType.L1)

_STRATEGY_LAYOUT = {
    ShardStrategy.HEIGHT: TensorMemoryLayout.HEIGHT_SHARDED,
    ShardStrategy.WIDTH: TensorMemoryLayout.WIDTH_SHARDED,
    ShardStrategy.BLOCK: TensorMemoryLayout.BLOCK_SHARDED,
}


def create_sharded_memory_config(shape, core_grid, strategy: ShardStrategy, orientation=None,
                                 use_height_and_width_as_shard_shape: bool = False) -> MemoryConfig:
    """An L1 sharded MemoryConfig for a tensor of `shape` viewed as [prod(shape[:-1]), shape[-1]]."""
    shape = [int(d) for d in shape]
    if len(shape) < 2:
        raise RuntimeError("Tensor shape must have at least 2 dimensions")
    orientation = orientation or ShardOrientation.ROW_MAJOR
    if isinstance(core_grid, CoreGrid):
        grid_x, grid_y = core_grid.x, core_grid.y
        grid = CoreRangeSet({CoreRange(CoreCoord(0, 0), CoreCoord(grid_x - 1, grid_y - 1))})
    elif isinstance(core_grid, CoreRangeSet):
        grid = core_grid
        box = grid.bounding_box().grid_size()
        grid_x, grid_y = box.x, box.y
    else:
        raise RuntimeError("core_grid must be a ttnn.CoreGrid or a ttnn.CoreRangeSet")
    if strategy not in _STRATEGY_LAYOUT:
        raise RuntimeError(f"Invalid sharding strategy {strategy}")
    if use_height_and_width_as_shard_shape:
        shard = (shape[-2], shape[-1])
    else:
        height, width = math.prod(shape[:-1]), shape[-1]
        cores = grid.num_cores()
        if strategy is ShardStrategy.HEIGHT:
            shard = (math.ceil(height / cores), width)
        elif strategy is ShardStrategy.WIDTH:
            shard = (height, math.ceil(width / cores))
        elif orientation is ShardOrientation.ROW_MAJOR:
            shard = (math.ceil(height / grid_y), math.ceil(width / grid_x))
        else:
            shard = (math.ceil(height / grid_x), math.ceil(width / grid_y))
    return MemoryConfig(_STRATEGY_LAYOUT[strategy], BufferType.L1, ShardSpec(grid, shard, orientation))
