"""How much free L1 per bank conv2d needs on its DRAM-sliced path (input and output in DRAM, no slice config),
by the format its weights are prepared in (Conv2dConfig weights_dtype unset = float32, bfloat16, bfloat8_b,
bfloat4_b): EfficientNet-B7's depthwise 5x5 convs over 1344 channels at 38x38 (stride 1 and 2), where bf16
prepared weights once clashed with the L1 the program held.  A blocker leaves F bytes per bank free at the
bottom of L1; a binary search (to 1 KiB) finds the least F that works.  Prints
`NEED name weights=W F` or `NEVER name weights=W`."""
import sys

from _common import *
from probe_conv_helpers import conv, free_per_bank, runs_with

d = open_dev()


# (name, C, H, W, k, stride)
CASES = [("effnet-b7 dw 5x5 1344 38", 1344, 38, 38, 5, 1), ("effnet-b7 dw 5x5/2 1344 38", 1344, 38, 38, 5, 2)]
FORMATS = [("float32", None), ("bfloat16", ttnn.bfloat16), ("bfloat8_b", ttnn.bfloat8_b), ("bfloat4_b", ttnn.bfloat4_b)]
only = sys.argv[1:]
for name, C, H, W, k, s in CASES:
    for wname, wdtype in FORMATS:
        if only and wname not in only:
            continue
        kw = {} if wdtype is None else {"conv_config": ttnn.Conv2dConfig(weights_dtype=wdtype)}

        def make_input():
            return dev(d, (1, 1, H * W, C), mc=DR)

        def run(x):
            return conv(d, x, C, C, 1, H, W, k=k, stride=s, padding=(k // 2, k // 2), groups=C, **kw)

        lo, hi = 0, free_per_bank(d)
        if not runs_with(d, hi, make_input, run):
            print(f"NEVER {name} weights={wname}", flush=True)
            continue
        while hi - lo > 1024:
            mid = (lo + hi) // 2
            if runs_with(d, mid, make_input, run):
                hi = mid
            else:
                lo = mid
        print(f"NEED {name} weights={wname} {hi}", flush=True)
done(d)
