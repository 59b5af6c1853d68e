"""Where a device tensor's pages go: memory-config validation and buffer geometry.

A device buffer is a list of pages: a 32x32 tile (TILE; 1088 B for bfloat8_b) or one row of the last dim
(ROW_MAJOR, row bytes rounded up to the L1 or DRAM alignment).  Shards view the tensor as 2-D, height =
product of all dims but the last, width = the last dim, both tile-padded for TILE (docs/design.md §3.3).  The
checks and messages follow tt-metal's (the quoted ones were seen on the real library).
"""
from __future__ import annotations

import math

from ._memconfig import MemoryConfig, ShardSpec
from ._types import (BLOCK_FLOAT_BITS, BufferType, DataType, ELEMENT_SIZE, Layout, ShardOrientation, TILE, TILE_BYTES,
                     TensorMemoryLayout, padded_shape, tile_pad)

_cache: dict = {}


def physical_2d(shape: tuple, layout: Layout) -> tuple[int, int]:
    """(height, width) of the tensor seen as 2-D, tile-padded for TILE."""
    if layout is Layout.TILE:
        dims = list(padded_shape(shape, layout)) or [TILE]
        height = math.prod(dims[:-1]) if len(dims) >= 2 else TILE
        return height, dims[-1]
    dims = list(shape) or [1]
    return math.prod(dims[:-1]), dims[-1]


def check_dtype_layout(dtype: DataType, layout: Layout) -> None:
    """bfloat8_b and bfloat4_b exist only as tiles (docs/ttnn-facts.md §18)."""
    if dtype in BLOCK_FLOAT_BITS and layout is not Layout.TILE:
        raise RuntimeError("TT_FATAL: Layout must be Layout::TILE for bfloat8_b or bfloat4_b!")


def check_memory_config(mc: MemoryConfig, device) -> None:
    """Structural checks of a memory config on its own (before looking at the tensor)."""
    if not isinstance(mc, MemoryConfig):
        raise TypeError(f"memory_config must be a ttnn.MemoryConfig, got {type(mc).__name__}")
    if mc.buffer_type not in (BufferType.DRAM, BufferType.L1):
        raise RuntimeError(f"TT_FATAL: Unsupported buffer type {mc.buffer_type} for a device tensor")
    if not mc.is_sharded():
        if mc.shard_spec is not None:
            raise RuntimeError("TT_FATAL: Interleaved memory config must not have a shard spec, got "
                               f"{mc.shard_spec}")
        return
    if mc.shard_spec is None:
        raise RuntimeError(f"TT_FATAL: Sharded memory config ({mc.memory_layout.name}) requires a shard spec")
    if mc.buffer_type is not BufferType.L1:
        raise RuntimeError("TT_FATAL: the ttnn simulator models sharding in L1 only; DRAM sharding is "
                           "not simulated")
    gx, gy = device.spec.grid_x, device.spec.grid_y
    for r in mc.shard_spec.grid.ranges():
        if r.end.x >= gx or r.end.y >= gy:
            raise RuntimeError(f"TT_FATAL: Shard grid {mc.shard_spec.grid} is outside the device's compute "
                               f"grid of {gx}x{gy} cores (x < {gx}, y < {gy})")


def _check_shards(spec: ShardSpec, layout: TensorMemoryLayout, tile: bool, height: int, width: int) -> tuple:
    """Validate a shard spec against a tensor's 2-D shape; return (shards along height, along width)."""
    sh, sw = spec.shape
    if tile and (sh % TILE or sw % TILE):
        raise RuntimeError(f"TT_FATAL: Physical shard shape ({sh}, {sw}) must be tile {{{TILE}, {TILE}}} sized!")
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f"TT_FATAL: Shard shape ({sh}, {sw}) must be positive")
    cores = spec.grid.num_cores()
    n_h, n_w = math.ceil(height / sh), math.ceil(width / sw)
    if layout is TensorMemoryLayout.HEIGHT_SHARDED:
        if sw != width:
            raise RuntimeError(f"TT_FATAL: Shard width {sw} must match physical width {width} for height sharded")
        if n_h > cores:
            raise RuntimeError(f"TT_FATAL: Number of shards along height {n_h} must not exceed number of cores {cores}")
    elif layout is TensorMemoryLayout.WIDTH_SHARDED:
        if sh != height:
            raise RuntimeError(f"TT_FATAL: Shard height {sh} must match physical height {height} for width sharded")
        if n_w > cores:
            raise RuntimeError(f"TT_FATAL: Number of shards along width {n_w} must not exceed number of cores {cores}")
    else:
        box = spec.grid.bounding_box().grid_size()
        if spec.orientation is ShardOrientation.ROW_MAJOR:
            rows, cols, name = box.y, box.x, "row major"
        else:
            rows, cols, name = box.x, box.y, "column major"
        if n_h > rows:
            raise RuntimeError(f"TT_FATAL: Number of shards along height {n_h} must not exceed number of rows "
                               f"{rows} for {name} orientation!")
        if n_w > cols:
            raise RuntimeError(f"TT_FATAL: Number of shards along width {n_w} must not exceed number of columns "
                               f"{cols} for {name} orientation!")
    return n_h, n_w


def _shard_cores(spec: ShardSpec, layout: TensorMemoryLayout, n_h: int, n_w: int) -> list:
    """The core holding each shard, in shard order."""
    if layout is not TensorMemoryLayout.BLOCK_SHARDED:
        count = n_h if layout is TensorMemoryLayout.HEIGHT_SHARDED else n_w
        return spec.grid._cores(spec.orientation)[:count]
    start = spec.grid.bounding_box().start
    cores = []
    for r in range(n_h):
        for c in range(n_w):
            if spec.orientation is ShardOrientation.ROW_MAJOR:
                cores.append((start.x + c, start.y + r))
            else:
                cores.append((start.x + r, start.y + c))
    return cores


def plan(device, shape: tuple, dtype: DataType, layout: Layout, mc: MemoryConfig) -> dict:
    """Validated buffer geometry: keyword arguments for Device.allocate (minus description/created_by)."""
    spec = device.spec
    key = (tuple(shape), dtype, layout, mc, spec.name, device.l1.bank_size)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    check_dtype_layout(dtype, layout)
    check_memory_config(mc, device)
    height, width = physical_2d(shape, layout)
    tile = layout is Layout.TILE
    align = device.l1_alignment if mc.buffer_type is BufferType.L1 else device.dram_alignment
    if not mc.is_sharded():
        if tile:
            page, pages = TILE_BYTES[dtype], (height // TILE) * (width // TILE)
        else:
            page, pages = width * ELEMENT_SIZE[dtype], height
        aligned = -(-page // align) * align
        banks = device.l1.num_banks if mc.buffer_type is BufferType.L1 else device.dram.num_banks
        per_bank_pages, extra = divmod(pages, banks)
        size_per_bank = (per_bank_pages + (1 if extra else 0)) * aligned
        bank_data = {b: (per_bank_pages + (1 if b < extra else 0)) * aligned
                     for b in range(banks) if per_bank_pages or b < extra}
        result = dict(size=pages * aligned, size_per_bank=size_per_bank, page_size=page, num_pages=pages,
                      num_banks=banks, bank_data=bank_data)
    else:
        n_h, n_w = _check_shards(mc.shard_spec, mc.memory_layout, tile, height, width)
        sh, sw = mc.shard_spec.shape
        if tile:
            page, shard_pages = TILE_BYTES[dtype], (sh // TILE) * (sw // TILE)
        else:
            page, shard_pages = sw * ELEMENT_SIZE[dtype], sh
        aligned = -(-page // align) * align
        shard_bytes = shard_pages * aligned
        cores = _shard_cores(mc.shard_spec, mc.memory_layout, n_h, n_w)
        bank_data = {}
        for core in cores:
            x, y = (core.x, core.y) if hasattr(core, "x") else core
            bank_data[y * spec.grid_x + x] = shard_bytes
        result = dict(size=len(cores) * shard_bytes, size_per_bank=shard_bytes, page_size=page,
                      num_pages=len(cores) * shard_pages, num_banks=mc.shard_spec.num_cores(), bank_data=bank_data)
    if len(_cache) > 4096:
        _cache.clear()
    _cache[key] = result
    return result


def adapt_shard_spec(mc: MemoryConfig, shape: tuple, layout: Layout) -> MemoryConfig:
    """The same sharding strategy and grid, with a shard shape computed for a tensor of `shape`."""
    spec = mc.shard_spec
    height, width = physical_2d(shape, layout)
    cores = spec.grid.num_cores()
    box = spec.grid.bounding_box().grid_size()
    rows, cols = (box.y, box.x) if spec.orientation is ShardOrientation.ROW_MAJOR else (box.x, box.y)
    round_ = tile_pad if layout is Layout.TILE else (lambda n: n)
    if mc.memory_layout is TensorMemoryLayout.HEIGHT_SHARDED:
        shard = (round_(math.ceil(height / cores)), width)
    elif mc.memory_layout is TensorMemoryLayout.WIDTH_SHARDED:
        shard = (height, round_(math.ceil(width / cores)))
    else:
        shard = (round_(math.ceil(height / rows)), round_(math.ceil(width / cols)))
    return MemoryConfig(mc.memory_layout, mc.buffer_type, ShardSpec(spec.grid, shard, spec.orientation))
