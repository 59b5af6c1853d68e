"""conv2d helpers shared by the conv probes."""
from _common import L1, RM, desc, dev, errtext
import torch
import ttnn


def conv(d, x, C, OC, N, H, W, k=3, stride=1, padding=(1, 1), groups=1, **kw):
    wt = ttnn.from_torch(torch.randn(OC, C // groups, k, k), dtype=ttnn.float32)
    bt = ttnn.from_torch(torch.randn(1, 1, 1, OC), dtype=ttnn.float32)
    return ttnn.conv2d(input_tensor=x, weight_tensor=wt, bias_tensor=bt, in_channels=C, out_channels=OC, device=d,
                       kernel_size=(k, k), stride=(stride, stride), padding=padding, dilation=(1, 1), groups=groups,
                       batch_size=N, input_height=H, input_width=W, **kw)


def cstep(name, fn):
    try:
        r = fn()
        print(f"OK   {name}: {desc(r)}", flush=True)
        return r
    except Exception as e:  # noqa: BLE001
        print(f"ERR  {name}: {type(e).__name__}: {errtext(e)}", flush=True)
        return None


def free_per_bank(d):
    """The largest contiguous free L1 per bank."""
    return int(ttnn.get_memory_view(d, ttnn.BufferType.L1).largest_contiguous_bytes_free_per_bank)


def runs_with(d, free, make_input, run):
    """Does the conv `run(x)` run with `free` bytes per bank of L1 left below everything else (x = make_input())?
    A blocker takes the rest; the input, the blocker and the output are released after."""
    x = make_input()
    blocker = None
    try:
        take = free_per_bank(d) - free
        if take > 0:
            blocker = block(d, take)
        y = run(x)
        ttnn.deallocate(y)
        return True
    except Exception:  # noqa: BLE001
        return False
    finally:
        if blocker is not None:
            ttnn.deallocate(blocker)
        if x.is_allocated():
            ttnn.deallocate(x)


def block(d, per_bank):
    """An L1 interleaved ROW_MAJOR tensor taking `per_bank` bytes (rounded down to 64 B pages) in every bank."""
    pages = max(1, per_bank // 64) * 64  # one 64-byte page per bank row, 64 banks
    return dev(d, (1, 1, pages, 32), layout=RM, mc=L1)
