"""Which ttnn ops take int32 (and uint32) tensors, in which page layout, and what dtype they return: the facts
behind the op table's `integer_inputs` (ir/ttnn_ops) and docs/ttnn-facts.md "Integers".  Values read back on
the mock are zeros, so only acceptance and the result's dtype/layout are measured here; the numerics are the
simulator's (onnx2ttnn/sim), which computes integer ops exactly in int64 and stores int32.
    bash tools/ttnn_mock/probes/run_probe.sh probe_integers.py
"""
from _common import *

d = open_dev()
I32, U32 = ttnn.int32, ttnn.uint32


def ints(shape, dtype=I32, layout=TILE):
    return ttnn.from_torch(torch.randint(-5, 5, shape, dtype=torch.int32) if dtype == I32
                           else torch.randint(0, 5, shape, dtype=torch.int32), dtype=dtype, layout=layout, device=d)


print("--- uploads", flush=True)
step("from_torch int64 -> int32 TILE", lambda: ttnn.from_torch(torch.tensor([1, -2, 3], dtype=torch.int64),
                                                               dtype=I32, layout=TILE, device=d))
step("from_torch int32 -> int32 RM", lambda: ttnn.from_torch(torch.tensor([1, -2, 3], dtype=torch.int32),
                                                             dtype=I32, layout=RM, device=d))
step("to_torch int32", lambda: ttnn.to_torch(ints((4,))).dtype)

for lay, lname in ((TILE, "TILE"), (RM, "RM")):
    print(f"--- int32 {lname}", flush=True)
    a, b = ints((2, 3, 7), layout=lay), ints((2, 3, 7), layout=lay)
    for op in ("add", "subtract", "multiply", "maximum", "minimum", "eq", "ne", "gt", "ge", "lt", "le",
               "logical_and", "logical_or", "logical_xor", "remainder", "fmod"):
        step(f"{op}(int32 {lname}, int32 {lname})", lambda op=op: getattr(ttnn, op)(a, b))
        step(f"{op}(int32 {lname}, 2)", lambda op=op: getattr(ttnn, op)(a, 2))
    step(f"add(int32 {lname}, bcast [1,1,7])", lambda: ttnn.add(a, ints((1, 1, 7), layout=lay)))
    step(f"eq(int32 {lname}, int32, dtype=bfloat16)", lambda: ttnn.eq(a, b, dtype=ttnn.bfloat16))
    step(f"gt(int32 {lname}, 0, dtype=bfloat16)", lambda: ttnn.gt(a, 0, dtype=ttnn.bfloat16))
    step(f"divide(int32 {lname}, int32)", lambda: ttnn.divide(a, b))
    step(f"divide(int32 {lname}, int32, rounding_mode=trunc)", lambda: ttnn.divide(a, b, rounding_mode="trunc"))
    step(f"divide(int32 {lname}, int32, rounding_mode=floor)", lambda: ttnn.divide(a, b, rounding_mode="floor"))
    step(f"divide(int32 {lname}, 2, rounding_mode=trunc)", lambda: ttnn.divide(a, 2, rounding_mode="trunc"))
    step(f"pow(int32 {lname}, 2)", lambda: ttnn.pow(a, 2))
    step(f"pow(int32 {lname}, int32)", lambda: ttnn.pow(a, b))
    step(f"clip(int32 {lname}, -2, 3)", lambda: ttnn.clip(a, -2, 3))
    step(f"clamp(int32 {lname}, -2, 3)", lambda: ttnn.clamp(a, -2, 3))
    step(f"clamp(int32 {lname}, min=-2)", lambda: ttnn.clamp(a, min=-2))
    step(f"clamp(int32 {lname}, int32, int32)", lambda: ttnn.clamp(a, b, b))
    for op in ("neg", "abs", "relu", "sign", "logical_not", "square"):
        step(f"{op}(int32 {lname})", lambda op=op: getattr(ttnn, op)(a))
    for dt in ("bfloat16", "float32", "uint32"):
        step(f"typecast(int32 {lname}, {dt})", lambda dt=dt: ttnn.typecast(a, getattr(ttnn, dt)))
    step(f"typecast(bfloat16 {lname}, int32)", lambda: ttnn.typecast(dev(d, (2, 3, 7), layout=lay), I32))
    step(f"typecast(float32 {lname}, int32)",
         lambda: ttnn.typecast(dev(d, (2, 3, 7), dtype=ttnn.float32, layout=lay), I32))
    step(f"reshape(int32 {lname})", lambda: ttnn.reshape(a, (6, 7)))
    step(f"permute(int32 {lname})", lambda: ttnn.permute(a, (2, 0, 1)))
    step(f"concat(int32 {lname})", lambda: ttnn.concat([a, b], dim=1))
    step(f"slice(int32 {lname})", lambda: ttnn.slice(a, (0, 0, 0), (1, 3, 7), (1, 1, 1)))
    step(f"expand(int32 {lname})", lambda: ttnn.expand(ints((1, 3, 7), layout=lay), (2, 3, 7)))
    step(f"repeat(int32 {lname})", lambda: ttnn.repeat(a, (2, 1, 1)))
    step(f"to_layout(int32 {lname} -> other)", lambda: ttnn.to_layout(a, RM if lay == TILE else TILE))
    step(f"sum(int32 {lname}, dim=-1)", lambda: ttnn.sum(a, dim=-1))
    step(f"max(int32 {lname}, dim=-1)", lambda: ttnn.max(a, dim=-1))
    step(f"argmax(int32 {lname}, dim=-1)", lambda: ttnn.argmax(a, dim=-1))
    step(f"matmul(int32 {lname})", lambda: ttnn.matmul(a, ints((2, 7, 3), layout=lay)))
    step(f"cumsum(int32 {lname})", lambda: ttnn.cumsum(a, 2))

print("--- where", flush=True)
c = ttnn.gt(dev(d, (2, 3, 7)), 0.0)
a, b = ints((2, 3, 7)), ints((2, 3, 7))
step("where(bf16 cond, int32, int32) TILE", lambda: ttnn.where(c, a, b))
step("where(bf16 cond, int32, 0) TILE", lambda: ttnn.where(c, a, 0))
step("where(int32 cond, int32, int32) TILE", lambda: ttnn.where(a, a, b))
step("where(bf16 cond, int32 RM, int32 RM)", lambda: ttnn.where(c, ints((2, 3, 7), layout=RM), ints((2, 3, 7), layout=RM)))

print("--- uint32", flush=True)
u, v = ints((2, 3, 7), U32), ints((2, 3, 7), U32)
for op in ("add", "subtract", "multiply", "maximum", "eq"):
    step(f"{op}(uint32 TILE, uint32 TILE)", lambda op=op: getattr(ttnn, op)(u, v))
step("add(int32 TILE, uint32 TILE)", lambda: ttnn.add(a, u))

print("--- pooling (NHWC flattened [1,1,N*H*W,C])", flush=True)
x = ttnn.from_torch(torch.randint(-5, 5, (1, 1, 64, 32), dtype=torch.int32), dtype=I32, layout=RM, device=d)
step("max_pool2d(int32 RM)", lambda: ttnn.max_pool2d(x, 1, 8, 8, 32, [2, 2], [2, 2], [0, 0], [1, 1]))
xt = ttnn.to_layout(x, TILE)
step("max_pool2d(int32 TILE)", lambda: ttnn.max_pool2d(xt, 1, 8, 8, 32, [2, 2], [2, 2], [0, 0], [1, 1]))
xb = dev(d, (1, 1, 64, 32), layout=RM)
step("max_pool2d(bf16 RM) reference", lambda: ttnn.max_pool2d(xb, 1, 8, 8, 32, [2, 2], [2, 2], [0, 0], [1, 1]))
done(d)
