"""What conv2d and conv_transpose2d put in L1_SMALL, and how much of it stays after the call.

The device opens with a large l1_small_size (256 KiB), so nothing is refused.  For each case the bytes per bank
allocated in L1_SMALL are read before the call, after it (what stays: owned by the op's program-cache entry), and
after device.clear_program_cache().  Then the least L1_SMALL the call needs is found: an L1_SMALL blocker takes
all but F bytes per bank and the call runs on an empty program cache; a binary search (to 16 B) finds the least F.
Prints the L1 and L1_SMALL bank sizes at that l1_small_size, `CASE name kept=K need=N` per case, and, for a row
of calls, what the cache holds in total.  Arguments: parts of case names to run only those; --no-row."""
import sys

from _common import *

SMALL = 256 * 1024
d = ttnn.open_device(device_id=0, l1_small_size=SMALL)
BT = ttnn.BufferType.L1_SMALL
for bt in ("L1", "L1_SMALL"):
    view = ttnn.get_memory_view(d, getattr(ttnn.BufferType, bt))
    print(f"BANK {bt} at l1_small_size={SMALL}: total_bytes_per_bank={int(view.total_bytes_per_bank)} "
          f"num_banks={int(view.num_banks)}", flush=True)


def small(d):
    return int(ttnn.get_memory_view(d, BT).total_bytes_allocated_per_bank)


def small_free(d):
    return int(ttnn.get_memory_view(d, BT).largest_contiguous_bytes_free_per_bank)


def call(d, case):
    kind, C, OC, H, W, k, s, p = case
    x = dev(d, (1, 1, H * W, C), layout=RM if C < 16 else TILE, mc=L1)
    if kind == "maxpool":
        y = ttnn.max_pool2d(x, batch_size=1, input_h=H, input_w=W, channels=C, kernel_size=[k, k], stride=[s, s],
                            padding=[p, p], ceil_mode=False, dilation=[1, 1], memory_config=L1)
    elif kind == "conv":
        wt = ttnn.from_torch(torch.randn(OC, C, k, k), dtype=ttnn.float32)
        y = ttnn.conv2d(input_tensor=x, weight_tensor=wt, device=d, in_channels=C, out_channels=OC, batch_size=1,
                        input_height=H, input_width=W, kernel_size=(k, k), stride=(s, s), padding=(p, p),
                        dilation=(1, 1), groups=1, memory_config=L1, slice_config=ttnn.Conv2dL1FullSliceConfig)
    else:
        wt = ttnn.from_torch(torch.randn(C, OC, k, k), dtype=ttnn.float32)
        y = ttnn.conv_transpose2d(input_tensor=x, weight_tensor=wt, device=d, in_channels=C, out_channels=OC,
                                  batch_size=1, input_height=H, input_width=W, kernel_size=(k, k), stride=(s, s),
                                  padding=(p, p), output_padding=(0, 0), dilation=(1, 1), groups=1,
                                  memory_config=ttnn.DRAM_MEMORY_CONFIG)
    ttnn.deallocate(x)
    ttnn.deallocate(y)


def blocker(d, per_bank):
    """A height-sharded L1_SMALL bf16 ROW_MAJOR tensor of `per_bank` bytes (16 B multiples) on each of the 8x8
    cores (L1_SMALL takes only sharded tensors)."""
    n = per_bank // 16 * 8
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(7, 7))})
    mc = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, BT,
                           ttnn.ShardSpec(grid, [1, n], ttnn.ShardOrientation.ROW_MAJOR))
    return dev(d, (1, 1, 64, n), layout=RM, mc=mc)


def runs_with(d, free, case):
    d.clear_program_cache()
    b = None
    try:
        take = small_free(d) - free
        if take > 0:
            b = blocker(d, take)
        call(d, case)
        return True
    except Exception:  # noqa: BLE001
        return False
    finally:
        if b is not None:
            ttnn.deallocate(b)
        d.clear_program_cache()


# (kind, C, OC, H, W, k, stride, pad): the PP-OCRv4 detector's convs at 320x320 and a few more
CASES = [
    ("conv", 3, 16, 320, 320, 3, 2, 1), ("conv", 16, 16, 160, 160, 3, 1, 1), ("conv", 16, 32, 160, 160, 1, 1, 0),
    ("conv", 32, 32, 160, 160, 3, 2, 1), ("conv", 32, 48, 80, 80, 1, 1, 0), ("conv", 48, 48, 80, 80, 3, 1, 1),
    ("conv", 96, 24, 80, 80, 3, 1, 1), ("conv", 96, 96, 40, 40, 3, 1, 1), ("conv", 192, 192, 20, 20, 5, 1, 2),
    ("conv", 384, 384, 10, 10, 5, 1, 2), ("conv", 96, 24, 10, 10, 3, 1, 1), ("conv", 96, 24, 1, 1, 1, 1, 0),
    ("conv", 64, 64, 56, 56, 3, 1, 1), ("conv", 64, 64, 112, 112, 3, 1, 1), ("conv", 64, 64, 224, 224, 3, 1, 1),
    ("conv", 16, 16, 160, 160, 5, 1, 2), ("conv", 16, 16, 320, 320, 3, 1, 1),
    ("convT", 24, 24, 80, 80, 2, 2, 0), ("convT", 24, 1, 160, 160, 2, 2, 0), ("convT", 24, 24, 40, 40, 2, 2, 0),
    ("convT", 16, 16, 160, 160, 4, 2, 1),
    ("maxpool", 64, 64, 112, 112, 3, 2, 1), ("maxpool", 32, 32, 160, 160, 2, 2, 0), ("maxpool", 192, 192, 28, 28, 3, 1, 1),
]
only = [o for o in sys.argv[1:] if o != "--no-row"]
total = 0
for case in CASES:
    name = "%s C%d->%d %dx%d k%d s%d p%d" % case
    if only and not any(o in name for o in only):
        continue
    d.clear_program_cache()
    before = small(d)
    try:
        call(d, case)
    except Exception as e:  # noqa: BLE001
        print(f"ERR  {name}: {type(e).__name__}: {errtext(e)}", flush=True)
        continue
    kept = small(d) - before
    d.clear_program_cache()
    cleared = small(d) - before
    lo, hi = 0, 64 * 1024
    if not runs_with(d, hi, case):
        print(f"CASE {name} kept={kept} cleared={cleared} need>{hi}", flush=True)
        continue
    while hi - lo > 16:
        mid = (lo + hi) // 2 // 16 * 16
        if runs_with(d, mid, case):
            hi = mid
        else:
            lo = mid
    print(f"CASE {name} kept={kept} cleared={cleared} need={hi}", flush=True)

# the cache keeps every call's tensors: the detector's convs in a row, without clearing
if "--no-row" in sys.argv:
    done(d)
d.clear_program_cache()
before = small(d)
n = 0
for case in CASES[:12] + CASES[17:19]:
    call(d, case)
    n += 1
print(f"ROW {n} calls without clearing: kept={small(d) - before}", flush=True)
for case in CASES[:12] + CASES[17:19]:
    call(d, case)
print(f"ROW the same {n} calls again: kept={small(d) - before}", flush=True)
d.clear_program_cache()
print(f"ROW after clear_program_cache: kept={small(d) - before}", flush=True)
done(d)
