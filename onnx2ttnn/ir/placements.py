"""Sharded L1 layouts the memory planner uses, and the measured bounds on which ops take them.

The layouts: height_shard_layout / width_shard_layout spread a TILE tensor's tile rows / columns over the most
cores (shard_grid, shard_count; the 2-D view is ir/layout.py physical_2d).  The bounds, measured on the real
ttnn 0.81.1 in mock mode (n150) for facts that depend on a call's attributes or shapes:
conv_reads_height_sharded (probe_conv_sharded.py,
results/conv_sharded.txt), conv_all_in_l1 (probe_conv_cb.py, results/conv_cb.txt) and
matmul_reads_height_sharded (probe_matmul_sharded.py, results/matmul_sharded.txt; probe_epilogues.py,
results/epilogues.txt).

Which ops take height- and width-sharded tensors at all, and how, is each op's entry in the op table
(ir/ttnn_ops: OpInfo.height / OpInfo.width, with the probe that proved it).  HEIGHT_SHARDING and
WIDTH_SHARDING below are views derived from it for the planner, not facts of their own.
Only TILE tensors are sharded here, on a grid that is one row of n <= grid_x cores or whole rows.
"""
from __future__ import annotations

from typing import Optional, Sequence

from onnx2ttnn.ir.layout import TILE, TTNNLayout, padded_shape, physical_2d
from onnx2ttnn.ir.ttnn_ops import OpFacts, ShardFacts  # noqa: F401  (ShardFacts: the values of the views)

HEIGHT_SHARDED = "height_sharded"
WIDTH_SHARDED = "width_sharded"

# Derived from the op table (ir/ttnn_ops), read from it at every use: op name -> ShardFacts for the ops that take
# height- / width-sharded L1 tensors (kept importable here for the planner; the facts live only in the table).
HEIGHT_SHARDING = OpFacts(lambda info: info.height)
WIDTH_SHARDING = OpFacts(lambda info: info.width)


def width_shard_layout(shape: Sequence[int], layout: TTNNLayout, grid_x: int, grid_y: int) -> Optional[TTNNLayout]:
    """The width-sharded L1 layout spreading the tensor's tile columns over the most cores, or None.

    Each core holds the whole padded height and `per_core` tile columns; only even splits on grids with no
    idle core (one row of n <= grid_x cores, or whole rows) are used, the only ones probed."""
    if not layout.is_tile:
        return None
    height, width = physical_2d(shape, layout)
    cols = width // TILE
    for per_core in range(max(1, -(-cols // (grid_x * grid_y))), cols + 1):
        if cols % per_core:
            continue
        n = cols // per_core
        grid = shard_grid(n, grid_x, grid_y)
        if grid is not None:
            return layout.with_(buffer="l1", memory_layout=WIDTH_SHARDED, grid=grid, shard=(height, per_core * TILE))
    return None


CONV_MAX_WEIGHT_ELEMENTS = 307200  # in_channels / groups * kh * kw * out_channels, largest accepted
CONV_MAX_DEPTHWISE_CHANNELS = 144  # depthwise (groups = in_channels > 1) convolutions, largest accepted


def conv_reads_height_sharded(attrs: dict) -> bool:
    """conv2d with these attributes accepts a height-sharded input (bounds measured, module docstring)."""
    kh, kw = attrs.get("kernel_size", (1, 1))
    groups = max(1, int(attrs.get("groups", 1)))
    channels = int(attrs.get("in_channels", 0))
    weights = channels // groups * kh * kw * int(attrs.get("out_channels", 0))
    if groups > 1 and (channels > CONV_MAX_DEPTHWISE_CHANNELS or kh * kw > 9):
        return False  # ConvNeXt's depthwise 7x7 over 96 channels never fits from a sharded input (conv_cb.txt)
    return 0 < weights <= CONV_MAX_WEIGHT_ELEMENTS


CONV_L1_MAX_KERNEL_AREA = 49  # kh * kw of the largest kernel measured on conv2d's all-in-L1 path (7x7)
# input bytes per L1 bank (interleaved) times kernel area: the largest measured convs that fit the all-in-L1
# path are under it, those that never fit (even with all of L1 free) over it (results/conv_cb.txt)
CONV_L1_MAX_WINDOW_BYTES = 640 * 1024
# what a conv admitted by conv_all_in_l1 was measured to need beyond its input, output included: at most
# 532,511 B per bank (results/conv_cb.txt); the planner keeps that free at convs (memory/budget.py)


def conv_all_in_l1(attrs: dict, input_bytes_per_bank: int) -> bool:
    """conv2d with these attributes, on an input of this many bytes per L1 bank (interleaved), may read and
    write L1 (module docstring).  probe_conv_cb.py measured what each conv needs beyond its input: EfficientNet's
    depthwise 3x3 over 64 channels at 300x300 (180 KiB/bank of input) fails with all of L1 free; kernels over
    7x7 run out of L1 too (ViT-B/16's patch conv)."""
    kh, kw = attrs.get("kernel_size", (1, 1))
    return kh * kw <= CONV_L1_MAX_KERNEL_AREA and input_bytes_per_bank * kh * kw <= CONV_L1_MAX_WINDOW_BYTES


def matmul_reads_height_sharded(shape: Sequence[int], layout: TTNNLayout, b_batched: bool = False,
                                activation: bool = False) -> bool:
    """matmul / linear accept input_tensor_a of this shape in this height-sharded layout.

    Never with an `activation=` (fuse-epilogues): "Sharded matmul run with UnaryOpType::GELU activation: this
    should be placed in the program config's fused_activation field" (probe_epilogues.py, results/epilogues.txt).

    Against an unbatched B (a weight) every planner layout is accepted, uneven grids included.  Against a
    batched B (attention's activations) ttnn's batched program asks that shards hold whole batches' rows
    ("per_core_M, 2, must divide M, 3"), that the rows of several batches not share a shard
    ("out_subblock_h (2) needs to divide M (3)") and that its output blocks divide over the grid's cores
    ("num_output_blocks (12) must be evenly divisible by ... (16)"); only one batch per shard, on a grid with
    no idle core, was accepted (probe_matmul_sharded.py, results/matmul_sharded.txt)."""
    if activation:
        return False
    if not b_batched:
        return True
    dims = padded_shape(shape, layout)
    rows_per_batch = dims[-2] // TILE if len(dims) >= 2 else 1
    grid_cores = layout.grid[0] * layout.grid[1]
    return layout.shard[0] // TILE == rows_per_batch and shard_count(shape, layout) == grid_cores


def shard_grid(cores: int, grid_x: int, grid_y: int) -> Optional[tuple[int, int]]:
    """The (x, y) core grid of `cores` cores: one row of up to grid_x cores, or whole rows (None if neither)."""
    if 1 <= cores <= grid_x:
        return cores, 1
    if cores % grid_x == 0 and cores // grid_x <= grid_y:
        return grid_x, cores // grid_x
    return None


def height_shard_layout(shape: Sequence[int], layout: TTNNLayout, grid_x: int, grid_y: int,
                        max_cores: Optional[int] = None) -> Optional[TTNNLayout]:
    """The height-sharded L1 layout spreading the tensor's tile rows over the most cores, or None.

    Shards are whole tile rows (tt-metal: "Physical shard shape ... must be tile {32, 32} sized!"): each of
    n = ceil(rows / per_core) shards holds `per_core` rows, the last one possibly fewer (an uneven split),
    on the smallest grid of one row of cores or whole rows that has at least n cores (cores past the last
    shard hold nothing: "Number of shards along height must not exceed number of cores").
    """
    if not layout.is_tile:
        return None
    height, width = physical_2d(shape, layout)
    rows = height // TILE
    limit = min(max_cores or grid_x * grid_y, grid_x * grid_y)
    for per_core in range(max(1, -(-rows // limit)), rows + 1):
        n = -(-rows // per_core)
        grid = (n, 1) if n <= grid_x else (grid_x, -(-n // grid_x))
        if grid[1] <= grid_y and grid[0] * grid[1] <= limit:
            return layout.with_(buffer="l1", memory_layout=HEIGHT_SHARDED, grid=grid,
                                shard=(per_core * TILE, width))
    return None


def shard_count(shape: Sequence[int], layout: TTNNLayout) -> int:
    """How many cores hold a shard of a height-sharded tensor (the last grid cores may hold none)."""
    height, _ = physical_2d(shape, layout)
    return -(-height // layout.shard[0])
