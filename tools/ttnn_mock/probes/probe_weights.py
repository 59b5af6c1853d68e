"""Q20: block-float weight formats on ttnn 0.81.1 (the --weights option): what a bfloat4_b / bfloat8_b upload
reserves per tile, whether linear and matmul take bfloat4_b weights, whether embedding takes a block-float table,
and which conv2d Conv2dConfig weights_dtype values prepare weights (bfloat16, bfloat8_b, bfloat4_b)."""
from _common import *

d = open_dev()
print("--- Q20a page sizes of block-float uploads", flush=True)
kept = []  # each upload stays allocated, so the next one's growth is its own
for name, dtype in (("bfloat16", ttnn.bfloat16), ("bfloat8_b", ttnn.bfloat8_b), ("bfloat4_b", ttnn.bfloat4_b)):
    before = per_bank(d, ttnn.BufferType.DRAM)
    w = step(f"from_torch [1024,1024] {name} TILE DRAM", lambda: dev(d, (1024, 1024), dtype=dtype))
    kept.append(w)
    if w is not None:
        print(f"     {name}: 1024 tiles, DRAM bytes per bank {per_bank(d, ttnn.BufferType.DRAM) - before}, "
              f"tile_size {ttnn.tile_size(dtype) if hasattr(ttnn, 'tile_size') else 'n/a'}", flush=True)
step("from_torch bfloat4_b ROW_MAJOR", lambda: dev(d, (64, 64), dtype=ttnn.bfloat4_b, layout=RM))

print("--- Q20b matmul / linear with bfloat4_b weights", flush=True)
x = dev(d, (1, 1, 128, 768))
w4 = dev(d, (768, 1024), dtype=ttnn.bfloat4_b)
step("linear bf16 x bfloat4_b", lambda: ttnn.linear(x, w4))
step("linear bf16 x bfloat4_b + bf16 bias", lambda: ttnn.linear(x, w4, bias=dev(d, (1, 1024))))
step("matmul bf16 x bfloat4_b", lambda: ttnn.matmul(x, w4))
step("linear bf16 L1 x bfloat4_b", lambda: ttnn.linear(dev(d, (1, 1, 128, 768), mc=L1), w4))

print("--- Q20c embedding with block-float tables", flush=True)
ids = ttnn.from_torch(torch.randint(0, 50, (1, 7), dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=d)
for name, dtype in (("bfloat8_b", ttnn.bfloat8_b), ("bfloat4_b", ttnn.bfloat4_b)):
    step(f"embedding table {name} TILE [64,64]", lambda: ttnn.embedding(ids, dev(d, (64, 64), dtype=dtype)))
    step(f"embedding table {name} TILE [64,64] layout=TILE", lambda: ttnn.embedding(
        ids, dev(d, (64, 64), dtype=dtype), layout=TILE))
    step(f"embedding table {name} TILE [64,64] layout=TILE dtype=bfloat16", lambda: ttnn.embedding(
        ids, dev(d, (64, 64), dtype=dtype), layout=TILE, dtype=ttnn.bfloat16))

print("--- Q20d conv2d weights_dtype", flush=True)
xin = ttnn.from_torch(torch.randn(1, 1, 64, 16), dtype=ttnn.bfloat16, layout=RM, device=d)
cw = ttnn.from_torch(torch.randn(32, 16, 3, 3), dtype=ttnn.float32)
for name in ("bfloat16", "bfloat8_b", "bfloat4_b"):
    step(f"conv2d Conv2dConfig(weights_dtype={name}), float32 host weight", lambda: ttnn.conv2d(
        input_tensor=xin, weight_tensor=cw, device=d, in_channels=16, out_channels=32, batch_size=1,
        input_height=8, input_width=8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1),
        groups=1, conv_config=ttnn.Conv2dConfig(weights_dtype=getattr(ttnn, name)), return_weights_and_bias=True))
dw = ttnn.from_torch(torch.randn(16, 1, 3, 3), dtype=ttnn.float32)
for name in ("bfloat16", "bfloat8_b"):
    step(f"depthwise conv2d weights_dtype={name}", lambda: ttnn.conv2d(
        input_tensor=xin, weight_tensor=dw, device=d, in_channels=16, out_channels=16, batch_size=1,
        input_height=8, input_width=8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1),
        groups=16, conv_config=ttnn.Conv2dConfig(weights_dtype=getattr(ttnn, name)), return_weights_and_bias=True))
done(d)
