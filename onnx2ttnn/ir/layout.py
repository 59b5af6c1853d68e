"""TTNNLayout — the layout annotation every tensor (value info) carries — and the MemoryConfig derived from it.

A layout says how and where a tensor lives: page layout (tile / row_major), dtype, buffer (host, dram, l1),
memory layout (interleaved or height/width/block sharded), core grid and shard shape.  It prints compactly
and parses back:

    tile<bf16> dram interleaved
    tile<bf16> l1 height_sharded grid=8x8 shard=32x64
    row_major<f32> host
    tile<bf16> dram interleaved mesh=replicated
    row_major<f32> host mesh=shard0

On a mesh of chips (docs/design.md §6.19) the layout also carries the tensor's placement over the chips,
`mesh=`: `replicated` (each chip holds the whole tensor) or `shard<d>` (dim d split over all chips, chip i
holding the i-th piece; `shard<d>@<a>` along mesh axis a only), and the shape is one chip's.  Tensor
parallel (§6.21) adds a part along mesh axis 1: `shard<d>@1` (dim d split along it) or `partial@1` (each
chip holds a partial sum), alone or after the batch's part: `shard0@0,partial@1`.  A host tensor `shard<d>` is the whole tensor the program's caller sees, the chips' pieces joined on
dim d.  Single-chip programs carry no placement.

The memory config pass derives each op's `memory_config` from its output layout with `memory_config_of`;
the layout stays the single source of truth.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Optional, Sequence

# the side of a tile in elements: a TILE-layout page holds TILE x TILE values, and TILE tensors pad their last two
# dims to multiples of it (a size, not the page-layout name: that is "tile", ir/ttnn_ops Page.TILE)
TILE = 32

PAGE_LAYOUTS = ("tile", "row_major")
BUFFERS = ("host", "dram", "l1")
MEMORY_LAYOUTS = ("interleaved", "height_sharded", "width_sharded", "block_sharded")

# a layout's storage dtype: short name -> (ttnn DataType name, bytes per element for ROW_MAJOR pages, bytes per
# 32x32 tile).  Not the --dtype option's names (options.COMPUTE_DTYPES: bf16 | fp32, fp32 stored as f32).
LAYOUT_DTYPES: dict[str, tuple[str, int, int]] = {
    "bf16": ("bfloat16", 2, 2048),
    "f32": ("float32", 4, 4096),
    "bfp8": ("bfloat8_b", 1, 1088),
    "bfp4": ("bfloat4_b", 1, 576),  # TILE only (ROW_MAJOR bytes unused); ttnn.tile_size 576 (ttnn-facts §20)
    "u32": ("uint32", 4, 4096),
    "i32": ("int32", 4, 4096),
    "u16": ("uint16", 2, 2048),
    "u8": ("uint8", 1, 1024),
}
BLOCK_FLOATS = ("bfp8", "bfp4")  # block-float dtypes: TILE only, one exponent per 16 values


TP_AXIS = 1  # tensor parallel runs along the mesh's columns (axis 1); data parallel along its rows on a 2-D mesh
PARTIAL = "partial"


@dataclass(frozen=True)
class MeshPlacement:
    """How a tensor is spread over the chips of a mesh: replicated, or dim `dim` split (over all chips, or
    along mesh axis `axis` only); `tp`, along the tensor-parallel axis (TP_AXIS): None (replicated along it),
    a dim split along it, or PARTIAL (each chip holds a partial sum, docs/design.md §6.21)."""

    dim: Optional[int] = None  # None: replicated
    axis: Optional[int] = None
    tp: Optional[object] = None  # None | int dim | PARTIAL

    @property
    def replicated(self) -> bool:
        return self.dim is None and self.tp is None

    @property
    def partial(self) -> bool:
        return self.tp == PARTIAL

    def __str__(self) -> str:
        parts = []
        if self.dim is not None:
            parts.append(f"shard{self.dim}" + (f"@{self.axis}" if self.axis is not None else ""))
        if self.tp is not None:
            parts.append(f"{PARTIAL}@{TP_AXIS}" if self.partial else f"shard{self.tp}@{TP_AXIS}")
        return ",".join(parts) or "replicated"

    @classmethod
    def parse(cls, text: str) -> "MeshPlacement":
        if text == "replicated":
            return cls()
        dim = axis = tp = None
        for part in text.split(","):
            m = re.fullmatch(r"shard(\d+)(?:@(\d+))?|partial@(\d+)", part)
            if not m or (m[3] is not None and int(m[3]) != TP_AXIS):
                raise LayoutError(f"cannot parse mesh placement {text!r}")
            if m[3] is not None:
                tp = PARTIAL
            elif m[2] is not None and int(m[2]) == TP_AXIS:
                tp = int(m[1])
            else:
                dim, axis = int(m[1]), int(m[2]) if m[2] else None
        return cls(dim, axis, tp)


REPLICATED = MeshPlacement()


class LayoutError(ValueError):
    """A layout that breaks a rule of docs/design.md §3.2 (the text says which)."""


@dataclass(frozen=True)
class TTNNLayout:
    """How and where one tensor lives on the device (or on the host)."""

    page: str = "tile"
    dtype: str = "bf16"
    buffer: str = "dram"
    memory_layout: Optional[str] = "interleaved"
    grid: Optional[tuple[int, int]] = None  # (x, y) cores, sharded layouts only
    shard: Optional[tuple[int, int]] = None  # (height, width) elements, sharded layouts only
    mesh: Optional[MeshPlacement] = None  # placement over the chips of a mesh (None: a one-chip program)

    def __post_init__(self) -> None:
        if self.page not in PAGE_LAYOUTS:
            raise LayoutError(f"unknown page layout {self.page!r}")
        if self.dtype not in LAYOUT_DTYPES:
            raise LayoutError(f"unknown dtype {self.dtype!r}")
        if self.buffer not in BUFFERS:
            raise LayoutError(f"unknown buffer {self.buffer!r}")
        if self.dtype in BLOCK_FLOATS and self.page != "tile":
            raise LayoutError(f"{LAYOUT_DTYPES[self.dtype][0]} exists only in TILE layout")
        if self.mesh is not None and not isinstance(self.mesh, MeshPlacement):
            raise LayoutError(f"mesh placement {self.mesh!r} is not a MeshPlacement")
        if self.buffer == "host":
            if self.memory_layout is not None or self.grid or self.shard:
                raise LayoutError("host tensors have no memory layout, grid or shard")
            return
        if self.memory_layout not in MEMORY_LAYOUTS:
            raise LayoutError(f"unknown memory layout {self.memory_layout!r}")
        sharded = self.memory_layout != "interleaved"
        if sharded and (self.grid is None or self.shard is None):
            raise LayoutError("a sharded layout needs a grid and a shard shape")
        if not sharded and (self.grid is not None or self.shard is not None):
            raise LayoutError("interleaved layouts have no grid or shard shape")
        if sharded and self.buffer != "l1":
            raise LayoutError("sharded tensors live in L1 here")
        if sharded and self.page == "tile" and (self.shard[0] % TILE or self.shard[1] % TILE):
            raise LayoutError(f"Physical shard shape {self.shard} must be tile {{32, 32}} sized!")

    # --- queries -------------------------------------------------------------------------------
    @property
    def on_device(self) -> bool:
        return self.buffer != "host"

    @property
    def is_tile(self) -> bool:
        return self.page == "tile"

    @property
    def ttnn_dtype(self) -> str:
        return LAYOUT_DTYPES[self.dtype][0]

    def with_(self, **changes) -> "TTNNLayout":
        """A copy with some fields changed (shard fields dropped when leaving a sharded layout)."""
        if changes.get("memory_layout") == "interleaved" or changes.get("buffer") == "host":
            changes.setdefault("grid", None)
            changes.setdefault("shard", None)
        if changes.get("buffer") == "host":
            changes.setdefault("memory_layout", None)
        elif changes.get("buffer") in ("dram", "l1") and self.buffer == "host":
            changes.setdefault("memory_layout", "interleaved")
        return replace(self, **changes)

    # --- text form -----------------------------------------------------------------------------
    def __str__(self) -> str:
        text = f"{self.page}<{self.dtype}> {self.buffer}"
        if self.memory_layout:
            text += f" {self.memory_layout}"
        if self.grid:
            text += f" grid={self.grid[0]}x{self.grid[1]}"
        if self.shard:
            text += f" shard={self.shard[0]}x{self.shard[1]}"
        if self.mesh is not None:
            text += f" mesh={self.mesh}"
        return text

    @classmethod
    def parse(cls, text: str) -> "TTNNLayout":
        """Inverse of str(): `tile<bf16> l1 height_sharded grid=8x8 shard=32x64`."""
        m = re.fullmatch(
            r"\s*(\w+)<(\w+)>\s+(\w+)(?:\s+(\w+))?(?:\s+grid=(\d+)x(\d+))?(?:\s+shard=(\d+)x(\d+))?"
            r"(?:\s+mesh=(\S+))?\s*", text
        )
        if not m:
            raise LayoutError(f"cannot parse layout {text!r}")
        page, dtype, buffer, mem, gx, gy, sh, sw, mesh = m.groups()
        if mem and mem.startswith("mesh"):
            raise LayoutError(f"cannot parse layout {text!r}")
        grid = (int(gx), int(gy)) if gx else None
        shard = (int(sh), int(sw)) if sh else None
        return cls(page, dtype, buffer, mem, grid, shard, MeshPlacement.parse(mesh) if mesh else None)


HOST_F32 = TTNNLayout("row_major", "f32", "host", None)


# --- sizes -----------------------------------------------------------------------------------------
def padded_shape(shape: Sequence[int], layout: TTNNLayout) -> tuple[int, ...]:
    """The shape after TILE padding of the last two dims (ROW_MAJOR pads nothing)."""
    shape = tuple(int(d) for d in shape) or (1,)
    if not layout.is_tile:
        return shape
    if len(shape) == 1:
        return (_round_up(shape[0], TILE),)
    return shape[:-2] + (_round_up(shape[-2], TILE), _round_up(shape[-1], TILE))


def physical_2d(shape: Sequence[int], layout: TTNNLayout) -> tuple[int, int]:
    """(height, width) of the tensor seen as 2-D, the view pages and shards are cut from: height = product
    of all padded dims but the last, width = the last.  A rank-1 TILE tensor is one tile row high."""
    dims = padded_shape(shape, layout)
    if len(dims) == 1:
        return (TILE if layout.is_tile else 1), dims[0]
    return math.prod(dims[:-1]), dims[-1]


def pages(shape: Sequence[int], layout: TTNNLayout) -> tuple[int, int]:
    """(number of pages, bytes per page) of an interleaved tensor: a page is a tile or a row."""
    _, elem_bytes, tile_bytes = LAYOUT_DTYPES[layout.dtype]
    if layout.is_tile:
        return math.prod(padded_shape(shape, layout)) // (TILE * TILE), tile_bytes
    h, w = physical_2d(shape, layout)
    return h, w * elem_bytes


def bytes_per_bank(shape: Sequence[int], layout: TTNNLayout, banks: int, alignment: int = 32) -> int:
    """Bytes the tensor reserves in each bank of its buffer (docs/ttnn-facts.md section 2).

    Interleaved over `banks` banks: pages go round-robin, every bank reserves the fullest bank's pages.
    Sharded (`banks` unused): one shard's pages, reserved in every L1 bank, shard cores or not."""
    if layout.memory_layout not in (None, "interleaved"):
        height, width = layout.shard
        _, elem_bytes, tile_bytes = LAYOUT_DTYPES[layout.dtype]
        if layout.is_tile:
            return (height // TILE) * (width // TILE) * tile_bytes
        return height * _round_up(width * elem_bytes, alignment)
    n_pages, page_bytes = pages(shape, layout)
    page_bytes = _round_up(page_bytes, alignment)
    return math.ceil(n_pages / banks) * page_bytes


def total_bytes(shape: Sequence[int], layout: TTNNLayout) -> int:
    n_pages, page_bytes = pages(shape, layout)
    return n_pages * page_bytes


def _round_up(value: int, multiple: int) -> int:
    return (value + multiple - 1) // multiple * multiple


# --- memory config ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryConfig:
    """The `memory_config` argument of a ttnn call, as the compiler stores it in a node attribute."""

    memory_layout: str
    buffer: str
    grid: Optional[tuple[int, int]] = None
    shard: Optional[tuple[int, int]] = None

    def __str__(self) -> str:
        text = f"{self.buffer} {self.memory_layout}"
        if self.grid:
            text += f" grid={self.grid[0]}x{self.grid[1]} shard={self.shard[0]}x{self.shard[1]}"
        return text


def memory_config_of(layout: TTNNLayout) -> Optional[MemoryConfig]:
    """The memory config a ttnn op must be given to produce a tensor with this layout (None for host)."""
    if not layout.on_device:
        return None
    return MemoryConfig(layout.memory_layout, layout.buffer, layout.grid, layout.shard)
