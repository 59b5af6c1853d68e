"""How much L1 conv2d needs per core on its all-in-L1 path, beyond its input: circular buffers, the halo and
other intermediates, and its output.

For each conv, the input is placed first; a blocker tensor then takes all of L1 but F bytes per bank above the
bottom, and the conv runs (slice_config=Conv2dL1FullSliceConfig).  A binary search finds the least F that
works (to 4 KiB): what the planner must leave free at the conv.  Out of memory, and the launch check that
static circular buffers end below the lowest L1 buffer, are the two refusals.  Prints one line per case:
`NEED name in=.. out=.. F bytes_per_bank input=.. output=..` (the input's and output's bytes per bank)."""
import sys

from _common import *
from probe_conv_helpers import conv, free_per_bank, runs_with

converter_ir_on_path()

d = open_dev()
FULL = ttnn.Conv2dL1FullSliceConfig


TOTAL = ttnn.get_memory_view(d, ttnn.BufferType.L1).total_bytes_per_bank


# (name, C, OC, H, W, k, stride, groups)
CASES = [
    ("r50 stem 7x7/2 3->64 224", 3, 64, 224, 224, 7, 2, 1),
    ("r50 1x1 64->64 56", 64, 64, 56, 56, 1, 1, 1),
    ("r50 3x3 64->64 56", 64, 64, 56, 56, 3, 1, 1),
    ("r50 1x1 64->256 56", 64, 256, 56, 56, 1, 1, 1),
    ("r50 1x1 256->64 56", 256, 64, 56, 56, 1, 1, 1),
    ("r50 3x3/2 128->128 56", 128, 128, 56, 56, 3, 2, 1),
    ("r50 3x3 256->256 14", 256, 256, 14, 14, 3, 1, 1),
    ("r50 1x1 1024->2048/2 14", 1024, 2048, 14, 14, 1, 2, 1),
    ("r50 3x3 512->512 7", 512, 512, 7, 7, 3, 1, 1),
    ("r50 1x1 2048->512 7", 2048, 512, 7, 7, 1, 1, 1),
    ("mnv2 3x3/2 3->32 224", 3, 32, 224, 224, 3, 2, 1),
    ("mnv2 dw 3x3 32 112", 32, 32, 112, 112, 3, 1, 32),
    ("mnv2 dw 3x3/2 96 112", 96, 96, 112, 112, 3, 2, 96),
    ("mnv2 dw 3x3 144 56", 144, 144, 56, 56, 3, 1, 144),
    ("mnv2 1x1 16->96 112", 16, 96, 112, 112, 1, 1, 1),
    ("mnv2 dw 3x3 960 7", 960, 960, 7, 7, 3, 1, 960),
    ("mnv2 1x1 320->1280 7", 320, 1280, 7, 7, 1, 1, 1),
    ("effnet dw 3x3 64 300", 64, 64, 300, 300, 3, 1, 64),
    ("effnet dw 3x3 40 300", 40, 40, 300, 300, 3, 1, 40),
    ("effnet 3x3/2 3->40 600", 3, 40, 600, 600, 3, 2, 1),
    ("dw 3x3 64 150", 64, 64, 150, 150, 3, 1, 64),
    ("dw 3x3 192 150", 192, 192, 150, 150, 3, 1, 192),
    ("dw 5x5 240 75", 240, 240, 75, 75, 5, 1, 240),
    ("3x3 64->64 150", 64, 64, 150, 150, 3, 1, 1),
    ("1x1 64->64 300", 64, 64, 300, 300, 1, 1, 1),
    ("convnext dw 7x7 96 56", 96, 96, 56, 56, 7, 1, 96),
]
only = sys.argv[1:]
for name, C, OC, H, W, k, s, g in CASES:
    if only and not any(o in name for o in only):
        continue
    p = k // 2
    oh, ow = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
    for iname in ("L1", "HS"):
        imc = L1 if iname == "L1" else planner_height_sharded((1, 1, H * W, C))[1]
        omc = L1

        def make_input():
            return dev(d, (1, 1, H * W, C), layout=RM if C < 16 else TILE, mc=imc)

        def run(x):
            return conv(d, x, C, OC, 1, H, W, k=k, stride=s, padding=(p, p), groups=g, memory_config=omc,
                        slice_config=FULL)

        x = make_input()
        in_bytes = TOTAL - free_per_bank(d)
        ttnn.deallocate(x)
        lo, hi = 0, free_per_bank(d) - in_bytes
        if not runs_with(d, hi, make_input, run):
            print(f"NEVER {name} in={iname}: fails with all of L1 free", flush=True)
            continue
        while hi - lo > 4096:
            mid = (lo + hi) // 2
            if runs_with(d, mid, make_input, run):
                hi = mid
            else:
                lo = mid
        out_bytes = -(-(oh * ow) // 32) * -(-OC // 32) * 2048 // 64
        print(f"NEED {name} in={iname} out=L1 {hi} input={in_bytes} output={out_bytes}", flush=True)
done(d)
