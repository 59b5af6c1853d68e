"""conv2d helpers shared by the conv probes."""
from _common import desc, errtext
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
