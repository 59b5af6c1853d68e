"""Weights resident in L1 across forward calls (memory/resident.py): weights uploaded to L1 before any
activation land at the top of every bank, one below the other; linear (weight and bias), layer_norm (weight
and bias), embedding (a ROW_MAJOR table) and softmax next to them run twice reading those L1 weights, and
the weights keep their addresses; a bfloat8_b weight in L1 reserves its tiles of 1088 B; the prepared
weights conv2d hands back (DRAM) moved to L1 are taken by its next call.  Prints one line per step."""
from _common import *

d = open_dev()
w = step("linear weight [768, 768] bf16 TILE to L1 first", lambda: dev(d, (768, 768), mc=L1))
b = step("linear bias [1, 768] bf16 TILE to L1", lambda: dev(d, (1, 768), mc=L1))
w8 = step("linear weight [768, 768] bfloat8_b TILE to L1", lambda: dev(d, (768, 768), dtype=ttnn.bfloat8_b, mc=L1))
g = step("layer_norm weight [1, 768] to L1", lambda: dev(d, (1, 768), mc=L1))
beta = step("layer_norm bias [1, 768] to L1", lambda: dev(d, (1, 768), mc=L1))
table = step("embedding table [512, 64] bf16 ROW_MAJOR to L1", lambda: dev(d, (512, 64), layout=RM, mc=L1))
print(f"     L1 per bank after the weights: {per_bank(d, ttnn.BufferType.L1)}; addresses "
      f"{[t.buffer_address() for t in (w, b, w8, g, beta, table)]}", flush=True)
addresses = [t.buffer_address() for t in (w, b, w8, g, beta, table)]

for call in (1, 2):
    x = dev(d, (1, 128, 768), mc=L1)
    y = step(f"forward {call}: linear(x, L1 weight, bias=L1 bias)",
             lambda: ttnn.linear(x, w, bias=b, memory_config=L1))
    y8 = step(f"forward {call}: linear(x, L1 bfloat8_b weight)", lambda: ttnn.linear(x, w8, memory_config=L1))
    n = step(f"forward {call}: layer_norm(y, weight=L1, bias=L1)",
             lambda: ttnn.layer_norm(y, weight=g, bias=beta, memory_config=L1))
    s = step(f"forward {call}: softmax(n) beside the L1 weights", lambda: ttnn.softmax(n, dim=-1, memory_config=L1))
    ids = ttnn.from_torch(torch.randint(0, 512, (1, 16), dtype=torch.int32), dtype=ttnn.uint32, device=d,
                          memory_config=L1)
    e = step(f"forward {call}: embedding(ids, L1 ROW_MAJOR table)",
             lambda: ttnn.embedding(ids, table, layout=TILE, memory_config=L1))
    for t in (x, y, y8, n, s, ids, e):
        if t is not None:
            ttnn.deallocate(t)
    print(f"     after forward {call}: L1 per bank {per_bank(d, ttnn.BufferType.L1)}; weights kept their "
          f"addresses: {[t.buffer_address() for t in (w, b, w8, g, beta, table)] == addresses}", flush=True)


def conv(x, w, b, in_channels):
    return ttnn.conv2d(input_tensor=x, weight_tensor=w, bias_tensor=b, in_channels=in_channels, out_channels=64,
                       device=d, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=1,
                       batch_size=1, input_height=16, input_width=16, return_weights_and_bias=True,
                       memory_config=L1, slice_config=ttnn.Conv2dL1FullSliceConfig)


for in_channels in (32, 16):
    x = dev(d, (1, 1, 256, in_channels), mc=L1)
    w0 = ttnn.from_torch(torch.randn(64, in_channels, 3, 3), dtype=ttnn.float32)
    b0 = ttnn.from_torch(torch.randn(1, 1, 1, 64), dtype=ttnn.float32)
    first = step(f"conv2d {in_channels}->64 3x3, first call: prepared weights", lambda: conv(x, w0, b0, in_channels))
    if first is None:
        continue
    y, (pw, pb) = first
    ttnn.deallocate(y)
    pw_l1 = step("prepared weight moved to L1", lambda: ttnn.to_memory_config(pw, L1))
    pb_l1 = step("prepared bias moved to L1", lambda: ttnn.to_memory_config(pb, L1))
    ttnn.deallocate(pw)
    ttnn.deallocate(pb)
    second = step("conv2d again with the L1 prepared weights", lambda: conv(x, pw_l1, pb_l1, in_channels))
    if second is not None:
        y2, (pw2, pb2) = second
        print(f"     weight handed back in L1 at the same address: {pw2.buffer_address() == pw_l1.buffer_address()}"
              f" ({desc(pw2)})", flush=True)
        ttnn.deallocate(y2)
    ttnn.deallocate(x)
done(d)
