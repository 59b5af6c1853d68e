"""How much L1 a ROW_MAJOR ttnn.pad needs per core while it runs, by the length of the padded row.

The input is placed in DRAM (so only the pad's own L1 counts); a blocker then takes all of L1 but F bytes per
bank above the bottom, and the pad runs with an L1 output.  A binary search finds the least F that works (to
1 KiB): circular buffers plus the output's pages.  Prints `NEED shape dtype pads F out_per_bank`."""
from _common import *
from probe_conv_helpers import free_per_bank, runs_with

d = open_dev()


def need(shape, padding, dtype):
    def make():
        return ttnn.from_torch(torch.randn(shape), dtype=dtype, layout=RM, device=d, memory_config=DR)

    def run(x):
        return ttnn.pad(x, padding=padding, value=0.0, memory_config=L1)

    lo, hi = 0, free_per_bank(d)
    if not runs_with(d, hi, make, run):
        return None
    while hi - lo > 1024:
        mid = (lo + hi) // 2
        if runs_with(d, mid, make, run):
            hi = mid
        else:
            lo = mid
    return hi


for shape, pads in (((1, 1, 4096), [[0, 0], [0, 0], [127, 127]]), ((1, 1, 16384), [[0, 0], [0, 0], [127, 127]]),
                    ((1, 1, 43844), [[0, 0], [0, 0], [127, 127]]), ((1, 8, 4096), [[0, 0], [0, 0], [127, 127]]),
                    ((1, 43844, 1), [[0, 0], [127, 127], [0, 0]])):
    for dtype in (ttnn.bfloat16, ttnn.float32):
        out = 1
        for i, n in enumerate(shape):
            out *= n + sum(pads[i])
        per_bank = out * (2 if dtype == ttnn.bfloat16 else 4) // 64
        print(f"NEED {shape} {dtype} pads={pads} F={need(shape, pads, dtype)} out_per_bank~{per_bank}", flush=True)
