"""The L1_SMALL region a program opens its device with: what its sliding-window ops keep there.

conv2d, conv_transpose2d and the 2-D pools of ttnn 0.81.1 build small uint16 config tensors on the host (the
halo's padding, local and remote copy lists, the conv's reader indices) and upload them height-sharded, one row
per core, into L1_SMALL.  The op's program-cache entry owns them: they stay after the call, a second call with
the same configuration reuses them, `device.clear_program_cache()` frees them (docs/ttnn-facts.md §40).  So
the region must hold the sum over the program's calls, and a full region refuses the next call ("Out of Memory:
Not enough space to allocate ... L1_SMALL buffer").  A plain 1x1 conv (stride 1, no padding) runs as a matmul
and keeps nothing.

The bound per call below is fitted above the measured bytes per bank (probe_l1_small.py, 13 convs, 3 pools, 3
conv_transposes): a conv keeps a fixed part, a little per kernel position, and about 0.3 B per input pixel one
core covers (its share of the output rows times the stride, plus the window's halo rows, whole padded rows: the
halo's copy lists and the reader indices); a conv_transpose2d runs as a conv over its zero-stuffed input, whose
copy lists grow with every output pixel a core computes.  The cores are those ttnn's conv picked in every probed
case: whole tiles of output pixels spread as evenly as the grid allows.  The region is
sized at the sum over every call (calls that repeat a configuration share one cache entry; counting them again
only leaves room), rounded up to 4 KiB, and never below the 16 KiB programs have always opened with.  L1_SMALL
is carved from the top of each core's L1, so the planner's L1 bank shrinks by the same amount
(DeviceSpec.with_l1_small).  Linear in the number of nodes.
"""
from __future__ import annotations

import math

from onnx2ttnn.ir.device import TILE, DeviceSpec

DEFAULT = 16384  # what every program opened its device with before: the least it opens with
STEP = 4096
SLIDING_WINDOW_OPS = ("conv2d", "conv_transpose2d", "max_pool2d", "avg_pool2d")
# bytes per bank, fitted above the probe's measurements (docs/ttnn-facts.md §40)
PER_CALL = 256  # a conv's or pool's fixed part: the config tensors' headers and their 16 B rows
PER_WINDOW_TAP = 8  # per kernel position
PER_INPUT_PIXEL_X10 = 3  # 0.3 B per input pixel (padded rows and columns) one core covers, halo included
TRANSPOSE_PER_CALL = 1280
TRANSPOSE_PER_PIXEL = 6  # per output pixel a core computes: the zero-stuffed input's padding runs and copies


def _pair(value) -> tuple[int, int]:
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]
    return (values[0], values[-1])


def _cores(rows: int, device: DeviceSpec) -> int:
    """How many cores a height-sharded sliding-window op spreads `rows` output rows (pixels) over: whole tiles
    of rows, as evenly as the grid allows (what ttnn's conv picked in every probed case)."""
    tiles = max(1, math.ceil(rows / TILE))
    return max(1, math.ceil(tiles / math.ceil(tiles / device.cores)))


def call_bytes(node, device: DeviceSpec) -> int:
    """The bound on what one sliding-window call keeps in L1_SMALL, bytes per bank (0 for a 1x1 conv that
    runs as a matmul, and for any other op)."""
    a = node.attrs
    if node.op not in SLIDING_WINDOW_OPS:
        return 0
    n = int(a.get("batch_size", 1))
    h, w = (int(a["input_height"]), int(a["input_width"])) if "input_height" in a else (int(a["input_h"]),
                                                                                          int(a["input_w"]))
    kh, kw = _pair(a.get("kernel_size", 1))
    dh, _ = _pair(a.get("dilation", 1))
    sh, sw = _pair(a.get("stride", 1))
    pads = [int(p) for p in a.get("padding", (0, 0))] if isinstance(a.get("padding"), (list, tuple)) else [0]
    if node.op == "conv2d" and (kh, kw, sh, sw) == (1, 1, 1, 1) and not any(pads):
        return 0
    out_shape = node.outputs[0].shape
    out_pixels = int(math.prod(int(d) for d in out_shape[:-1]))  # flattened [1, 1, N*OH*OW, C]
    per_core = math.ceil(out_pixels / _cores(out_pixels, device))
    if node.op == "conv_transpose2d":
        return TRANSPOSE_PER_CALL + TRANSPOSE_PER_PIXEL * per_core
    extent = (kh - 1) * dh + 1  # the window's rows
    out_w = max(1, (out_pixels // max(1, n)) // _out_height(h, extent, sh, pads))
    rows = min(n * (h + _pad_h(pads)), math.ceil(per_core / out_w) * sh + max(0, extent - sh))
    width = w + _pad_w(pads)
    return PER_CALL + PER_WINDOW_TAP * kh * kw + PER_INPUT_PIXEL_X10 * rows * width // 10


def _pad_h(pads: list[int]) -> int:
    """Rows of padding, top and bottom: `padding` is (h, w), or (top, bottom, left, right)."""
    return pads[0] + pads[1] if len(pads) == 4 else 2 * pads[0]


def _pad_w(pads: list[int]) -> int:
    return pads[2] + pads[3] if len(pads) == 4 else 2 * pads[-1]


def _out_height(h: int, kh: int, sh: int, pads: list[int]) -> int:
    return max(1, (h + _pad_h(pads) - kh) // sh + 1)


def l1_small_size(graph, device: DeviceSpec) -> int:
    """The l1_small_size a program of `graph` opens its device with: the sum of its calls' bounds, rounded up to
    4 KiB, at least 16 KiB."""
    total = sum(call_bytes(node, device) for node in graph.nodes)
    return max(DEFAULT, math.ceil(total / STEP) * STEP)
