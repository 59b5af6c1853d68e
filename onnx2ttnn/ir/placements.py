"""Which ttnn ops accept height- and width-sharded L1 tensors, as data: the op-constraint facts the memory
planner obeys (width sharding: WIDTH_SHARDING below).

Every entry is a fact measured on the real ttnn 0.81.1 in mock-device mode (n150):
tools/ttnn_mock/probes/probe_sharding.py reads this table, calls each op in the form named by `probe` on
tensors of several shapes ([1,1,256,64] on 8 cores, [1,16,64] on 1, [1,4,16,16] on 4, [1,1,2048,64] on 64,
[1,1,512,96] on 16), and prints whether the library agrees (results/sharding.txt);
tests/real_ttnn/test_placements.py reruns a sample.  Facts it established, in short:
- unary and binary eltwise ops and `where` read height-sharded inputs (a binary op's other operand
  may be interleaved L1 or DRAM, or a broadcast row) and write a height-sharded output from any input
  placement, the output's shard spec given as memory_config;
- softmax reads and writes height-sharded; layer_norm writes height-sharded but refuses such an input
  ("Height sharded inputs are not supported.");
- typecast converts a height-sharded input only into a height-sharded output and an interleaved one only
  into an interleaved one (zoo RoBERTa on the mock), so it is kept interleaved;
- matmul/linear read a height-sharded input_tensor_a (not b: "Input B memory layout must be INTERLEAVED")
  into an interleaved output, against a batched b only in whole batches per shard
  (matmul_reads_height_sharded); a sharded output from an interleaved input depends on the batch shape
  ("Number of shards along height 4 must not exceed number of cores 1"), so it is not used;
- conv2d reads a height-sharded input_tensor in the planner's layout (uneven splits too) and writes DRAM
  as asked, while its circular buffers fit: refused ("Statically allocated circular buffers ... beyond max
  L1 size") for 1x1 2048->512, 1024->512 and 320->1280, 3x3 512->512, depthwise 3x3 over 960 channels;
  accepted up to 960->320 (307200 weight elements) and depthwise over 144 channels
  (probe_conv_sharded.py, results/conv_sharded.txt), hence conv_reads_height_sharded's bounds;
- conv2d writes L1, interleaved or height-sharded in the planner's layout, from an interleaved DRAM or L1
  input, when called with slice_config=Conv2dL1FullSliceConfig (its all-in-L1 path; without it a DRAM input
  takes the DRAM slicing path and writes DRAM whatever memory_config says): accepted for ResNet-50's 7x7/2
  stem, 1x1 and 3x3 convs and MobileNetV2's depthwise convs up to 960 channels and its 1x1 320->1280
  (probe_conv_l1_out.py, results/conv_l1_out.txt).  Large convs stay on the DRAM path (conv_all_in_l1):
  kernels over 7x7 (ViT-B/16's 16x16/16 patch conv runs out of L1) and large input windows
  (probe_conv_cb.py measures what each conv needs; results/conv_cb.txt);
- reshape to the same 2-D shape is a view that keeps the shard spec; permute reads a sharded input into an
  interleaved output; to_memory_config converts both ways; to_torch and deallocate take sharded tensors.
Only TILE tensors are sharded here, on a grid that is one row of n <= grid_x cores or whole rows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from onnx2ttnn.ir.layout import TILE, TTNNLayout, padded_shape, physical_2d

HEIGHT_SHARDED = "height_sharded"


@dataclass(frozen=True)
class ShardFacts:
    """What one ttnn op does with L1 tensors sharded one way (height in HEIGHT_SHARDING, width in WIDTH_SHARDING)."""

    inputs: tuple[int, ...]  # input positions that may be sharded that way
    output: bool  # may write an output sharded that way whatever its inputs' placements
    probe: str  # how probe_sharding.py calls it
    same_shape_inputs: bool = True  # a sharded input must have the output's padded 2-D shape


UNARY = ("relu", "relu6", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "neg", "abs", "erf", "gelu",
         "reciprocal", "sin", "cos", "floor", "ceil", "sign", "logical_not", "silu", "isnan")
BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "eq", "ne", "gt", "ge", "lt", "le",
          "logical_and", "logical_or")

HEIGHT_SHARDING: dict[str, ShardFacts] = {
    **{op: ShardFacts((0,), True, "unary") for op in UNARY},
    **{op: ShardFacts((0, 1), True, "binary") for op in BINARY},
    "where": ShardFacts((0, 1, 2), True, "where"),
    # input and output memory layouts must match ("Typecast operation requires Input and Output memory layout
    # to match"), a coupling this table cannot state: typecast neither reads nor writes height-sharded here
    "typecast": ShardFacts((), False, "typecast"),
    "softmax": ShardFacts((0,), True, "softmax"),
    "layer_norm": ShardFacts((), True, "layer_norm"),
    "matmul": ShardFacts((0,), False, "matmul", same_shape_inputs=False),
    "linear": ShardFacts((0,), False, "linear", same_shape_inputs=False),
    "permute": ShardFacts((0,), False, "permute", same_shape_inputs=False),
    "reshape": ShardFacts((0,), False, "reshape_view"),  # a view keeps the spec; copies are not sharded
    # reads within conv_reads_height_sharded; writes on its all-in-L1 path (conv_all_in_l1)
    "conv2d": ShardFacts((0,), True, "conv2d", same_shape_inputs=False),
    "to_memory_config": ShardFacts((0,), True, "to_memory_config", same_shape_inputs=False),
    "to_torch": ShardFacts((0,), False, "to_torch", same_shape_inputs=False),
    "deallocate": ShardFacts((0,), False, "deallocate", same_shape_inputs=False),
    "from_torch": ShardFacts((), True, "from_torch"),
}


# Width sharding (probe_width.py, results/width.txt): eltwise ops read and write width-sharded L1 tensors in
# the planner's layout (whole padded height, whole tile columns per core, no idle core), from and into any
# placement, the other operand of a binary op interleaved, DRAM or a broadcast row too; to_memory_config
# converts both ways; to_torch and deallocate take them.  Other ops are not used with it.
WIDTH_SHARDED = "width_sharded"
WIDTH_SHARDING: dict[str, ShardFacts] = {
    **{op: ShardFacts((0,), True, "unary") for op in UNARY},
    **{op: ShardFacts((0, 1), True, "binary") for op in BINARY},
    "to_memory_config": ShardFacts((0,), True, "to_memory_config", same_shape_inputs=False),
    "to_torch": ShardFacts((0,), False, "to_torch", same_shape_inputs=False),
    "deallocate": ShardFacts((0,), False, "deallocate", same_shape_inputs=False),
    "from_torch": ShardFacts((), True, "from_torch"),
}


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


def matmul_reads_height_sharded(shape: Sequence[int], layout: TTNNLayout, b_batched: bool = False) -> bool:
    """matmul / linear accept input_tensor_a of this shape in this height-sharded layout.

    Against an unbatched B (a weight) every planner layout is accepted, uneven grids included.  Against a
    batched B (attention's activations) ttnn's batched program asks that shards hold whole batches' rows
    ("per_core_M, 2, must divide M, 3"), that the rows of several batches not share a shard
    ("out_subblock_h (2) needs to divide M (3)") and that its output blocks divide over the grid's cores
    ("num_output_blocks (12) must be evenly divisible by ... (16)"); only one batch per shard, on a grid with
    no idle core, was accepted (probe_matmul_sharded.py, results/matmul_sharded.txt)."""
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
