"""How much free L1 per bank conv2d needs on its DRAM-sliced path (input and output in DRAM, no slice config),
by the format its weights are prepared in (Conv2dConfig weights_dtype unset = float32, bfloat16, bfloat8_b,
bfloat4_b): EfficientNet-B7's depthwise 5x5 convs over 1344 channels at 38x38 (stride 1 and 2), where bf16
prepared weights once clashed with the L1 the program held.  A blocker leaves F bytes per bank free at the
bottom of L1; a binary search (to 1 KiB) finds the least F that works.  Prints
`NEED name weights=W F` or `NEVER name weights=W`."""
import sys

from _common import *
from probe_conv_helpers import conv

d = open_dev()
TOTAL = ttnn.get_memory_view(d, ttnn.BufferType.L1).total_bytes_per_bank


def free_per_bank():
    return int(ttnn.get_memory_view(d, ttnn.BufferType.L1).largest_contiguous_bytes_free_per_bank)


def runs_with(free, run):
    blocker = None
    try:
        take = free_per_bank() - free
        if take > 0:
            pages = max(1, take // 64) * 64
            blocker = dev(d, (1, 1, pages, 32), layout=RM, mc=L1)
        y = run()
        ttnn.deallocate(y)
        return True
    except Exception:  # noqa: BLE001
        return False
    finally:
        if blocker is not None:
            ttnn.deallocate(blocker)


# (name, C, H, W, k, stride)
CASES = [("effnet-b7 dw 5x5 1344 38", 1344, 38, 38, 5, 1), ("effnet-b7 dw 5x5/2 1344 38", 1344, 38, 38, 5, 2)]
FORMATS = [("float32", None), ("bfloat16", ttnn.bfloat16), ("bfloat8_b", ttnn.bfloat8_b), ("bfloat4_b", ttnn.bfloat4_b)]
only = sys.argv[1:]
for name, C, H, W, k, s in CASES:
    x = dev(d, (1, 1, H * W, C), mc=DR)
    for wname, wdtype in FORMATS:
        if only and wname not in only:
            continue
        kw = {} if wdtype is None else {"conv_config": ttnn.Conv2dConfig(weights_dtype=wdtype)}

        def run():
            return conv(d, x, C, C, 1, H, W, k=k, stride=s, padding=(k // 2, k // 2), groups=C, **kw)

        lo, hi = 0, free_per_bank()
        if not runs_with(hi, run):
            print(f"NEVER {name} weights={wname}", flush=True)
            continue
        while hi - lo > 1024:
            mid = (lo + hi) // 2
            if runs_with(mid, run):
                hi = mid
            else:
                lo = mid
        print(f"NEED {name} weights={wname} {hi}", flush=True)
    ttnn.deallocate(x)
done(d)
