"""Matmul program configs: what one ttnn matmul program config says (ProgramConfig) and the one function that
chooses it for a matmul / linear call from its operands' shapes and placements (choose).

Which config fits which placement (ttnn 0.81.1; the class docstrings of the API, tt-metal
ttnn/cpp/ttnn/operations/matmul/device/config/matmul_program_config.cpp, tt-mlir
lib/Dialect/TTNN/Analysis/MatmulProgramConfig.cpp; each kind seen to validate on the real ttnn mock,
tools/ttnn_mock/probes/probe_program_configs.py, results/program_configs.txt):
- a height-sharded input_tensor_a against a 2-D weight: MatmulMultiCoreReuseMultiCast1DProgramConfig with
  mcast_in0=False (each core keeps its rows of a, the weight's columns are multicast), fuse_batch=True (the
  batch dims fold into M), the grid and per_core_M of a's shard grid and shard height, per_core_N all of N;
- a width-sharded input_tensor_a against a 2-D weight: the same class with mcast_in0=True (a's columns are
  multicast), per_core_M all of M, per_core_N the output columns spread over a's grid, in0_block_w a's shard
  width;
- a height-sharded input_tensor_a against a batched b (attention's two matmuls; the planner gives each core one
  whole batch: ir/placements.matmul_reads_height_sharded): MatmulMultiCoreReuseProgramConfig, the program
  ttnn picks itself for it (results/matmul_sharded.txt), per_core_M one batch's rows, per_core_N all of N.
Common to all: in0_block_w is the largest divisor of K in tiles whose circular buffers (circular_buffer_bytes,
an upper bound of the probe's measurements) fit the L1 the planner keeps free at every op, so the planner's
reserve covers them (a call whose buffers cannot fit even at in0_block_w=1 keeps ttnn's own program: K = 768
against N = 3072 on a height-sharded activation asked real ttnn for 5.4 MB of circular buffers at the full
K, K = 3072 against N = 768 for 445 KB at in0_block_w=1); out_subblock_h divides per_core_M and out_subblock_w divides
per_core_N; out_subblock_h * out_subblock_w tiles fit the destination register: 8 tiles with a Float16_b
destination, 4 with fp32_dest_acc_en (tt-metal's matmul validation, "out_subblock_w * out_subblock_h <=
available_reg_count"; its SUBBLOCK_HW_CHOICES table).  The subblock taken is the largest such, widest first.
Not chosen: the 2-D MatmulMultiCoreReuseMultiCastProgramConfig (block sharding, which the planner does not
plan) and MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig (DRAM-sharded weights, which no pass makes);
interleaved calls keep ttnn's own choice.  Standard library only (like ir/ttnn_ops).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence, Union

from onnx2ttnn.ir.layout import LAYOUT_DTYPES, TILE, TTNNLayout, padded_shape, physical_2d

MCAST_1D = "MatmulMultiCoreReuseMultiCast1DProgramConfig"
REUSE = "MatmulMultiCoreReuseProgramConfig"
KINDS = (MCAST_1D, REUSE)
HEIGHT, WIDTH = "height_sharded", "width_sharded"
DEST_TILES = 8  # destination-register tiles a subblock may fill with a Float16_b destination
DEST_TILES_FP32 = 4  # with fp32_dest_acc_en
FP32_TILE = 4096  # bytes of a float32 tile: the intermediate accumulation buffer, counted at its largest
MISC_BYTES = 4096  # what else the programs took beyond the blocks above (measured at most 2,650 B)


@dataclass(frozen=True)
class ProgramConfig:
    """The fields of one ttnn matmul program config the converter sets (the others keep their defaults:
    fused_activation None, gather_in0 False, ...)."""

    kind: str
    grid: tuple[int, int]  # compute_with_storage_grid_size (x, y)
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    per_core_M: int
    per_core_N: int
    mcast_in0: Optional[bool] = None  # MCAST_1D only
    fuse_batch: Optional[bool] = None  # MCAST_1D only

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown program config {self.kind!r}; known: {', '.join(KINDS)}")
        if (self.kind == MCAST_1D) != (self.mcast_in0 is not None and self.fuse_batch is not None):
            raise ValueError(f"{self.kind}: mcast_in0 and fuse_batch belong to {MCAST_1D} only")

    @property
    def CLASS(self) -> str:  # noqa: N802  (the ttnn class, like KernelConfig.CLASS)
        return self.kind

    @property
    def identifier(self) -> str:
        """The base of the program's name for it (matmul_1d_mcast_in1_4x1, ...; the namespace makes it unique)."""
        if self.kind == MCAST_1D:
            base = "MATMUL_1D_MCAST_IN0" if self.mcast_in0 else "MATMUL_1D_MCAST_IN1"
        else:
            base = "MATMUL_REUSE"
        return f"{base}_{self.grid[0]}x{self.grid[1]}_M{self.per_core_M}_N{self.per_core_N}_K{self.in0_block_w}"

    def arguments(self) -> str:
        """The constructor's keyword arguments, as the program writes them."""
        text = (f"compute_with_storage_grid_size=ttnn.CoreCoord({self.grid[0]}, {self.grid[1]}), "
                f"in0_block_w={self.in0_block_w}, out_subblock_h={self.out_subblock_h}, "
                f"out_subblock_w={self.out_subblock_w}, per_core_M={self.per_core_M}, per_core_N={self.per_core_N}")
        if self.kind == MCAST_1D:
            text += f", fuse_batch={self.fuse_batch}, mcast_in0={self.mcast_in0}"
        return text

    def __repr__(self) -> str:  # the call that constructs it
        return f"ttnn.{self.kind}({self.arguments()})"


def tiles(n: int) -> int:
    """How many tiles `n` elements span."""
    return -(-int(n) // TILE)


def subblock(per_core_m: int, per_core_n: int, dest_tiles: int) -> tuple[int, int]:
    """(out_subblock_h, out_subblock_w): the most tiles that fit the destination register, dividing the
    per-core block, widest first (tt-metal's SUBBLOCK_HW_CHOICES order for a given area)."""
    best = (1, 1)
    for w in range(1, min(per_core_n, dest_tiles) + 1):
        if per_core_n % w:
            continue
        for h in range(1, min(per_core_m, dest_tiles // w) + 1):
            if per_core_m % h == 0 and (h * w, w) > (best[0] * best[1], best[1]):
                best = (h, w)
    return best


def circular_buffer_bytes(per_core_m: int, per_core_n: int, in0_block_w: int, k_tiles: int, tile_bytes: int) -> int:
    """An upper bound of the L1 per core a configured call's circular buffers take: in0 (a double-buffered
    block, or the whole per-core rows of K, whichever is larger: the 1-D program held all of K, 96 tiles, at
    in0_block_w=1), in1 double-buffered, the output block, a float32 intermediate block and MISC_BYTES.
    Against the measured needs of every config the probe accepted (results/program_configs.txt, NEED less
    the output tensor's own bytes) it is never under; real ttnn's exact sizes (tt-metal's matmul program
    factories) are not modelled."""
    in0 = per_core_m * max(2 * in0_block_w, k_tiles) * tile_bytes
    in1 = 2 * in0_block_w * per_core_n * tile_bytes
    return in0 + in1 + per_core_m * per_core_n * (tile_bytes + FP32_TILE) + MISC_BYTES


def choose(a_shape: Sequence[int], a_layout: Optional[TTNNLayout], b_shape: Sequence[int],
           fp32_dest: bool, l1_limit: int) -> Union[ProgramConfig, str]:
    """The program config of a matmul / linear whose input_tensor_a has this shape and layout against a b of
    `b_shape` (not transposed), whose circular buffers take at most `l1_limit` bytes per core (the L1 the
    planner keeps free at every op, memory/budget.py), or why it gets none (a short reason)."""
    if a_layout is None or a_layout.memory_layout not in (HEIGHT, WIDTH) or not a_layout.is_tile:
        return "input_tensor_a is not height- or width-sharded"
    if len(b_shape) < 2 or len(a_shape) < 2:
        return "an operand of rank < 2"
    dest = DEST_TILES_FP32 if fp32_dest else DEST_TILES
    tile_bytes = max(LAYOUT_DTYPES[a_layout.dtype][2], LAYOUT_DTYPES["bf16"][2])
    k_tiles, n_tiles = tiles(b_shape[-2]), tiles(b_shape[-1])
    batched = math.prod(b_shape[:-2]) > 1
    shard_h, shard_w = a_layout.shard[0] // TILE, a_layout.shard[1] // TILE
    grid = a_layout.grid
    if a_layout.memory_layout == HEIGHT:
        if shard_w != k_tiles:
            return f"shard width {a_layout.shard[1]} is not K ({b_shape[-2]})"
        rows = padded_shape(a_shape, a_layout)[-2] // TILE
        if batched and shard_h != rows:
            return "a height shard does not hold exactly one batch"
        block_w = _block_width(k_tiles, shard_h, n_tiles, tile_bytes, l1_limit)
        if isinstance(block_w, str):
            return block_w
        sub = subblock(shard_h, n_tiles, dest)
        if batched:
            return ProgramConfig(REUSE, grid, block_w, sub[0], sub[1], shard_h, n_tiles)
        return ProgramConfig(MCAST_1D, grid, block_w, sub[0], sub[1], shard_h, n_tiles,
                             mcast_in0=False, fuse_batch=True)
    if batched:
        return "a width-sharded input_tensor_a against a batched input_tensor_b"
    cores = grid[0] * grid[1]
    if n_tiles % cores:
        return f"N ({n_tiles} tiles) does not split evenly over the {cores} cores of a's grid"
    m_tiles = physical_2d(a_shape, a_layout)[0] // TILE
    per_core_n = n_tiles // cores
    need = circular_buffer_bytes(m_tiles, per_core_n, shard_w, k_tiles, tile_bytes)
    if need > l1_limit:
        return f"its circular buffers (~{need} B per core) exceed the L1 kept free at each op ({l1_limit} B)"
    sub = subblock(m_tiles, per_core_n, dest)
    return ProgramConfig(MCAST_1D, grid, shard_w, sub[0], sub[1], m_tiles, per_core_n,
                         mcast_in0=True, fuse_batch=True)


def _block_width(k_tiles: int, per_core_m: int, per_core_n: int, tile_bytes: int, l1_limit: int):
    """in0_block_w: the largest divisor of K (in tiles) whose circular buffers fit `l1_limit`, or why none does."""
    for width in range(k_tiles, 0, -1):
        need = circular_buffer_bytes(per_core_m, per_core_n, width, k_tiles, tile_bytes)
        if k_tiles % width == 0 and need <= l1_limit:
            return width
    need = circular_buffer_bytes(per_core_m, per_core_n, 1, k_tiles, tile_bytes)
    return f"its circular buffers (~{need} B per core at in0_block_w=1) exceed the L1 kept free at each op " \
           f"({l1_limit} B)"
