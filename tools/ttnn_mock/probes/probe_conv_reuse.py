"""conv2d's prepared weights handed back (return_weights_and_bias=True) and passed to the next call of the
same conv: the return form, with and without bias, on the DRAM path and the all-in-L1 path, and what stays
allocated.  Prints one line per step."""
from _common import *

converter_ir_on_path()
d = open_dev()
FULL = ttnn.Conv2dL1FullSliceConfig


def call(x, w, b, **kw):
    return ttnn.conv2d(input_tensor=x, weight_tensor=w, bias_tensor=b, in_channels=32, out_channels=64, device=d,
                       kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=1, batch_size=1,
                       input_height=16, input_width=16, return_weights_and_bias=True, **kw)


for name, imc, kw in (("DRAM path", DR, {}), ("L1 full, out L1", L1, dict(memory_config=L1, slice_config=FULL)),
                      ("L1 full from DRAM, out L1", DR, dict(memory_config=L1, slice_config=FULL))):
    for bias in (True, False):
        w = ttnn.from_torch(torch.randn(64, 32, 3, 3), dtype=ttnn.float32)
        b = ttnn.from_torch(torch.randn(1, 1, 1, 64), dtype=ttnn.float32) if bias else None
        x = dev(d, (1, 1, 256, 32), mc=imc)
        before = per_bank(d, ttnn.BufferType.DRAM)
        r = step(f"{name} bias={bias}: first call returns", lambda: call(x, w, b, **kw))
        if r is None:
            continue
        print(f"     type={type(r).__name__} len={len(r)} inner={type(r[1]).__name__} "
              f"w={desc(r[1][0])} b={desc(r[1][1]) if r[1][1] is not None else None}", flush=True)
        y, (pw, pb) = r
        after_first = per_bank(d, ttnn.BufferType.DRAM)
        ttnn.deallocate(y)
        r2 = step(f"{name} bias={bias}: second call with the prepared weights", lambda: call(x, pw, pb, **kw))
        if r2 is not None:
            y2, (pw2, pb2) = r2
            print(f"     same weight object back: {pw2 is pw}; same address: "
                  f"{pw2.buffer_address() == pw.buffer_address()}; DRAM per bank before/first/second: {before}/"
                  f"{after_first}/{per_bank(d, ttnn.BufferType.DRAM)}", flush=True)
            ttnn.deallocate(y2)
        ttnn.deallocate(x)
done(d)
