"""Conv2dConfig's shard_layout and act_block_h_override at the zoo's conv shapes: which real ttnn accepts on the
planner's all-in-L1 path (input and output L1 interleaved, slice_config=Conv2dL1FullSliceConfig, the calls
ir/placements.conv_all_in_l1 admits), and how much L1 per bank each needs beyond its input (probe_conv_cb.py's
method: a blocker leaves F bytes per bank free, a binary search finds the least F to 4 KiB; the output included).

Variants per conv: ttnn's own choice (shard_layout None), HEIGHT_SHARDED, BLOCK_SHARDED and WIDTH_SHARDED, and
HEIGHT_SHARDED with act_block_h_override 32 and 64.  Prints `OK|ERR name variant | NEED F` per case."""
import sys

from _common import *
from probe_conv_helpers import conv, free_per_bank, runs_with

d = open_dev()
FULL = ttnn.Conv2dL1FullSliceConfig
TOTAL = ttnn.get_memory_view(d, ttnn.BufferType.L1).total_bytes_per_bank
TML = ttnn.TensorMemoryLayout

# (name, C, OC, H, W, k, stride, groups)
CASES = [
    ("r50 3x3 64->64 56", 64, 64, 56, 56, 3, 1, 1),
    ("r50 1x1 64->256 56", 64, 256, 56, 56, 1, 1, 1),
    ("r50 3x3 256->256 14", 256, 256, 14, 14, 3, 1, 1),
    ("r50 1x1 2048->512 7", 2048, 512, 7, 7, 1, 1, 1),
    ("mnv2 dw 3x3 144 56", 144, 144, 56, 56, 3, 1, 144),
]
VARIANTS = [("own", {}), ("height", dict(shard_layout=TML.HEIGHT_SHARDED)),
            ("block", dict(shard_layout=TML.BLOCK_SHARDED)), ("width", dict(shard_layout=TML.WIDTH_SHARDED)),
            ("height act_block_h=32", dict(shard_layout=TML.HEIGHT_SHARDED, act_block_h_override=32)),
            ("height act_block_h=64", dict(shard_layout=TML.HEIGHT_SHARDED, act_block_h_override=64)),
            ("own act_block_h=32", dict(act_block_h_override=32))]
only = sys.argv[1:]
for name, C, OC, H, W, k, s, g in CASES:
    if only and not any(o in name for o in only):
        continue
    p = k // 2

    def make_input():
        return dev(d, (1, 1, H * W, C), layout=TILE, mc=L1)

    x = make_input()
    in_bytes = TOTAL - free_per_bank(d)
    ttnn.deallocate(x)
    for vname, fields in VARIANTS:
        def run(x, fields=fields):
            config = ttnn.Conv2dConfig(**fields)
            return conv(d, x, C, OC, 1, H, W, k=k, stride=s, padding=(p, p), groups=g, memory_config=L1,
                        slice_config=FULL, conv_config=config)

        x = make_input()
        try:
            y = run(x)
            kind = str(y.memory_config().memory_layout).split(".")[-1]
            ttnn.deallocate(y)
            err = None
        except Exception as e:  # noqa: BLE001
            err = f"{type(e).__name__}: {errtext(e, 2)}"
        finally:
            if x.is_allocated():
                ttnn.deallocate(x)
        if err is not None:
            print(f"ERR {name} {vname} | {err}", flush=True)
            continue
        lo, hi = 0, free_per_bank(d) - in_bytes
        while hi - lo > 4096:
            mid = (lo + hi) // 2
            if runs_with(d, mid, make_input, run):
                hi = mid
            else:
                lo = mid
        print(f"OK  {name} {vname} (output {kind}) | NEED {hi} B/bank input={in_bytes}", flush=True)
done(d)
