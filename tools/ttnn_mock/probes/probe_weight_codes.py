"""Q43: a QDQ linear on its int8 codes (lowering/weight_codes.py).  (a) Does ttnn's host-side bfloat8_b packing
give integer codes -127..127 back exactly, in groups of 16 of any mix of magnitudes, and -128 (needs a step of 2)
not?  The packing runs on the host (from_torch without a device), so the mock's values are real.  (b) Does
real ttnn accept the calls the program makes: linear(float32 x, bfloat8_b codes, bias=float32 [1, N],
HiFi4 + fp32_dest_acc_en), then multiply by a float32 [1, N] row (values not checked: the mock device computes
nothing)."""
from _common import *

print("--- Q43a bfloat8_b packing of integer codes (host)", flush=True)
g = torch.Generator().manual_seed(0)
cases = {
    "uniform -127..127": torch.randint(-127, 128, (64, 256), generator=g),
    "small codes -3..3 next to 127": torch.where(torch.arange(256) % 16 == 0, 127,
                                                  torch.randint(-3, 4, (64, 256), generator=g)),
    "codes 1..9 only": torch.randint(1, 10, (64, 256), generator=g),
    "with -128 and odd codes": torch.where(torch.arange(256) % 16 == 0, -128,
                                           torch.randint(-127, 128, (64, 256), generator=g) | 1),
}
for name, codes in cases.items():
    x = codes.to(torch.float32)
    t = ttnn.from_torch(x, dtype=ttnn.bfloat8_b, layout=TILE)
    back = ttnn.to_torch(t).to(torch.float32)
    wrong = int((back != x).sum())
    print(f"OK   {name}: {x.numel()} values, {wrong} changed by the packing"
          + (f" (e.g. {x[back != x][:3].tolist()} -> {back[back != x][:3].tolist()})" if wrong else ""), flush=True)

print("--- Q43b the coded linear's calls", flush=True)
d = open_dev()
x = dev(d, (1, 1, 224, 768), dtype=ttnn.float32)
codes = dev(d, (768, 768), dtype=ttnn.bfloat8_b)
bias = dev(d, (1, 768), dtype=ttnn.float32)
row = dev(d, (1, 768), dtype=ttnn.float32)
cfg = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, math_approx_mode=False,
                                       fp32_dest_acc_en=True, packer_l1_acc=False)
y = step("linear float32 x, bfloat8_b codes, float32 bias, HiFi4 fp32 dest",
         lambda: ttnn.linear(x, codes, bias=bias, compute_kernel_config=cfg))
if y is not None:
    step("multiply by a float32 [1, 768] row", lambda: ttnn.multiply(y, row))
    step("multiply by a float32 [1, 768] row into L1", lambda: ttnn.multiply(y, row, memory_config=L1))
done(d)
