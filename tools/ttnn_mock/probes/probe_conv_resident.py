"""Conv weights resident in L1 (memory/conv_resident.py): conv2d's prepared bfloat8_b weights and bias, handed back
in DRAM by its first call (return_weights_and_bias), moved to L1 interleaved while L1 holds nothing else, with
to_memory_config (drops the padding conv2d gave them) and with ttnn.clone (keeps it), are taken by the next call
of the same conv, for the conv kinds of ResNet-50 and MobileNetV2 as the
converter emits them (Conv2dConfig weights_dtype=bfloat8_b, a HiFi2 compute config; the all-in-L1 path from an L1
interleaved or height-sharded input; the 7x7/2 stem on the DRAM path from a DRAM input).  Prints, per conv, the
prepared shapes, the L1 bytes per bank the moved weight and bias reserve, their addresses, and whether the second
call hands them back at the same address.  Then the moves' placement once an activation-free L1 already holds a
resident weight: they land right below it (the bank top, as load_parameters' uploads do)."""
from _common import *

converter_ir_on_path()
d = open_dev()
FULL = ttnn.Conv2dL1FullSliceConfig
HIFI2 = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi2, fp32_dest_acc_en=False,
                                         packer_l1_acc=False, math_approx_mode=False)
# (name, C, OC, H, W, k, stride, padding, groups, input: "L1" | "HS" | "DRAM")
CASES = [("resnet stem 7x7/2 3->64 224x224 (DRAM path)", 3, 64, 224, 224, 7, 2, (3, 3), 1, "DRAM"),
         ("resnet 1x1 64->256 56x56", 64, 256, 56, 56, 1, 1, (0, 0), 1, "L1"),
         ("resnet 3x3 64->64 56x56 (height-sharded in/out)", 64, 64, 56, 56, 3, 1, (1, 1), 1, "HS"),
         ("resnet 3x3/2 128->128 56x56", 128, 128, 56, 56, 3, 2, (1, 1), 1, "L1"),
         ("resnet 1x1/2 1024->2048 14x14", 1024, 2048, 14, 14, 1, 2, (0, 0), 1, "L1"),
         ("resnet 3x3 512->512 7x7", 512, 512, 7, 7, 3, 1, (1, 1), 1, "L1"),
         ("mobilenet dw 3x3/2 96 112x112", 96, 96, 112, 112, 3, 2, (1, 1), 96, "L1"),
         ("mobilenet dw 3x3 144 56x56 (height-sharded in/out)", 144, 144, 56, 56, 3, 1, (1, 1), 144, "HS"),
         ("mobilenet 1x1 160->960 7x7", 160, 960, 7, 7, 1, 1, (0, 0), 1, "L1"),
         ("mobilenet dw 3x3 960 7x7", 960, 960, 7, 7, 3, 1, (1, 1), 960, "L1"),
         ("mobilenet 1x1 320->1280 7x7", 320, 1280, 7, 7, 1, 1, (0, 0), 1, "L1")]
MOVES = (("to_memory_config", lambda t: ttnn.to_memory_config(t, L1)),
         ("clone", lambda t: ttnn.clone(t, memory_config=L1)))


def run_conv(x, w, b, C, OC, H, W, k, s, p, g, mc):
    kw = {} if mc is None else {"memory_config": mc, "slice_config": FULL}
    return ttnn.conv2d(input_tensor=x, weight_tensor=w, bias_tensor=b, in_channels=C, out_channels=OC, device=d,
                       kernel_size=(k, k), stride=(s, s), padding=p, dilation=(1, 1), groups=g, batch_size=1,
                       input_height=H, input_width=W, conv_config=ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat8_b),
                       compute_config=HIFI2, return_weights_and_bias=True, **kw)


for (name, C, OC, H, W, k, s, p, g, where), (how, move) in [(case, m) for case in CASES for m in MOVES]:
    oh, ow = (H + 2 * p[0] - k) // s + 1, (W + 2 * p[1] - k) // s + 1
    _, hs_in = planner_height_sharded((1, 1, H * W, C))
    _, hs_out = planner_height_sharded((1, 1, oh * ow, OC))
    imc = {"L1": L1, "HS": hs_in, "DRAM": DR}[where]
    omc = {"L1": L1, "HS": hs_out, "DRAM": None}[where]

    def make_input():
        return dev(d, (1, 1, H * W, C), layout=RM if C < 16 else TILE, mc=imc)

    x = make_input()
    w0 = ttnn.from_torch(torch.randn(OC, C // g, k, k), dtype=ttnn.float32)
    b0 = ttnn.from_torch(torch.randn(1, 1, 1, OC), dtype=ttnn.float32)
    first = step(f"{name}: first call", lambda: run_conv(x, w0, b0, C, OC, H, W, k, s, p, g, omc))
    if first is None:
        continue
    y, (pw, pb) = first
    ttnn.deallocate(y)
    if x.is_allocated():
        ttnn.deallocate(x)
    before = per_bank(d, ttnn.BufferType.L1)
    pw_l1 = step(f"  prepared weight moved to L1 ({how})", lambda: move(pw))
    after_w = per_bank(d, ttnn.BufferType.L1)
    pb_l1 = step(f"  prepared bias moved to L1 ({how})", lambda: move(pb))
    after_b = per_bank(d, ttnn.BufferType.L1)
    print(f"     L1 per bank: weight {after_w - before} B, bias {after_b - after_w} B", flush=True)
    ttnn.deallocate(pw)
    ttnn.deallocate(pb)
    x = make_input()
    second = step(f"  second call with the L1 prepared weights ({how})",
                  lambda: run_conv(x, pw_l1, pb_l1, C, OC, H, W, k, s, p, g, omc))
    if second is not None:
        y2, (pw2, pb2) = second
        same = pw2.buffer_address() == pw_l1.buffer_address() and pb2.buffer_address() == pb_l1.buffer_address()
        print(f"     handed back in L1 at the same addresses: {same}", flush=True)
        ttnn.deallocate(y2)
    if x.is_allocated():
        ttnn.deallocate(x)
    ttnn.deallocate(pw_l1)
    ttnn.deallocate(pb_l1)
    print(f"     L1 per bank after release: {per_bank(d, ttnn.BufferType.L1)}", flush=True)

# the moves' placement: a resident weight uploaded first (load_parameters), a forward's conv, its activations
# released, then the prepared weights moved
resident = dev(d, (768, 768), dtype=ttnn.bfloat8_b, mc=L1)
x = dev(d, (1, 1, 56 * 56, 64), mc=L1)
w0 = ttnn.from_torch(torch.randn(256, 64, 1, 1), dtype=ttnn.float32)
b0 = ttnn.from_torch(torch.randn(1, 1, 1, 256), dtype=ttnn.float32)
out = step("placement: 1x1 64->256 first call beside a resident weight",
           lambda: run_conv(x, w0, b0, 64, 256, 56, 56, 1, 1, (0, 0), 1, L1))
if out is not None:
    y, (pw, pb) = out
    ttnn.deallocate(y)
    ttnn.deallocate(x)
    base = per_bank(d, ttnn.BufferType.L1)
    pw_l1 = ttnn.clone(pw, memory_config=L1)
    wbytes = per_bank(d, ttnn.BufferType.L1) - base
    pb_l1 = ttnn.clone(pb, memory_config=L1)
    ttnn.deallocate(pw)
    ttnn.deallocate(pb)
    print(f"     resident weight at {resident.buffer_address()}, moved weight ({wbytes} B per bank) at "
          f"{pw_l1.buffer_address()}, bias at {pb_l1.buffer_address()}; the weight ends right at the resident one: "
          f"{pw_l1.buffer_address() + wbytes == resident.buffer_address()}", flush=True)
done(d)
