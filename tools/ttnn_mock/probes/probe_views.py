"""Q1: which ttnn.reshape / squeeze / unsqueeze results share the input's buffer (same address)?"""
from _common import *

d = open_dev()


def check(name, shape_in, shape_out, layout=TILE, mc=DR, op="reshape", dtype=ttnn.bfloat16):
    try:
        x = dev(d, shape_in, dtype=dtype, layout=layout, mc=mc)
        before = per_bank(d, mc.buffer_type)
        if op == "reshape":
            y = ttnn.reshape(x, shape_out)
        elif op == "unsqueeze":
            y = ttnn.unsqueeze(x, shape_out)
        elif op == "squeeze":
            y = ttnn.squeeze(x, shape_out)
        elif op == "view":
            y = ttnn.view(x, shape_out)
        grew = per_bank(d, mc.buffer_type) - before
        same = y.buffer_address() == x.buffer_address()
        print(f"{'VIEW' if same else 'COPY'} {name}: {op} {tuple(shape_in)} -> {shape_out} "
              f"[{str(layout).split('.')[-1]} {str(mc.buffer_type).split('.')[-1]} {str(mc.memory_layout).split('.')[-1]}]"
              f" in_addr={x.buffer_address()} out_addr={y.buffer_address()} out={desc(y)} alloc_grew_per_bank={grew}"
              f" same_object={y is x}", flush=True)
        if not same:
            ttnn.deallocate(y)
        ttnn.deallocate(x)
    except Exception as e:  # noqa: BLE001
        print(f"ERR  {name}: {op} {tuple(shape_in)} -> {shape_out}: {errtext(e)}", flush=True)


cases = [
    ((1, 128, 768), (1, 1, 128, 768)), ((1, 128, 768), (128, 768)), ((1, 128, 768), (1, 128, 12, 64)),
    ((1, 12, 128, 64), (12, 128, 64)), ((1, 2, 48), (2, 48)), ((1, 4, 48), (2, 2, 48)),
    ((1, 64, 48), (2, 32, 48)), ((1, 40, 64), (40, 64)), ((2, 40, 64), (80, 64)), ((1, 128, 768), (1, 128, 768)),
    # extra: last dim changes / second-last non-multiple
    ((1, 7, 48), (7, 48)), ((1, 7, 48), (1, 1, 7, 48)), ((2, 7, 48), (14, 48)), ((1, 32, 64), (1, 64, 32)),
    ((1, 64, 64), (1, 4096)), ((4, 32, 64), (128, 64)), ((128, 64), (4, 32, 64)), ((1, 1, 32, 96), (1, 32, 96)),
    ((3, 40, 64), (1, 120, 64)), ((1, 96, 64), (3, 32, 64)), ((1, 48, 64), (2, 24, 64)),
]
for i, (a, b) in enumerate(cases):
    check(f"T{i}", a, b)
for i, (a, b) in enumerate([((1, 10, 48), (10, 48)), ((4, 6, 48), (24, 48)), ((1, 128, 768), (1, 128, 12, 64)),
                            ((1, 7, 48), (7, 48)), ((2, 3, 4, 5), (6, 20)), ((2, 3, 20), (2, 60)), ((6, 10), (60,)),
                            ((1, 10, 48), (1, 10, 48))]):
    check(f"R{i}", a, b, layout=RM)
# unsqueeze / squeeze / view on TILE
check("U0", (1, 128, 768), 0, op="unsqueeze")
check("U1", (128, 768), 0, op="unsqueeze")
check("U2", (7, 48), 0, op="unsqueeze")
check("U3", (1, 7, 48), 1, op="unsqueeze")  # inserts above the second-last dim
check("U4", (1, 7, 48), 2, op="unsqueeze")  # (1,7,1,48): second-last becomes 1
check("S0", (1, 1, 128, 768), 0, op="squeeze")
check("S1", (1, 7, 48), 0, op="squeeze")
check("S2", (1, 7, 1, 48), 2, op="squeeze")
check("V0", (1, 128, 768), (1, 1, 128, 768), op="view")
check("V1", (1, 7, 48), (7, 48), op="view")
# L1 interleaved
check("L0", (1, 128, 768), (1, 1, 128, 768), mc=L1)
check("L1", (1, 128, 768), (1, 128, 12, 64), mc=L1)
check("L2", (1, 40, 64), (40, 64), mc=L1)
check("L3", (1, 10, 48), (10, 48), mc=L1, layout=RM)
# float32 / bfloat8_b TILE
check("F0", (1, 128, 768), (128, 768), dtype=ttnn.float32)
check("B0", (1, 128, 768), (128, 768), dtype=ttnn.bfloat8_b)
# sharded
hs = ttnn.create_sharded_memory_config(shape=(1, 1, 256, 64), core_grid=ttnn.CoreGrid(y=1, x=8),
                                       strategy=ttnn.ShardStrategy.HEIGHT)
check("H0", (1, 1, 256, 64), (256, 64), mc=hs)
check("H1", (1, 1, 256, 64), (1, 256, 64), mc=hs)
check("H2", (1, 1, 256, 64), (2, 128, 64), mc=hs)
check("H3", (1, 1, 256, 64), (1, 1, 128, 128), mc=hs)
bs = ttnn.create_sharded_memory_config(shape=(1, 1, 256, 64), core_grid=ttnn.CoreGrid(y=2, x=2),
                                       strategy=ttnn.ShardStrategy.BLOCK)
check("K0", (1, 1, 256, 64), (256, 64), mc=bs)
ws = ttnn.create_sharded_memory_config(shape=(1, 1, 64, 256), core_grid=ttnn.CoreGrid(y=1, x=8),
                                       strategy=ttnn.ShardStrategy.WIDTH)
check("W0", (1, 1, 64, 256), (64, 256), mc=ws)
# 1-D and rank changes around 1-D in TILE
for i, (a, b) in enumerate([((64,), (1, 64)), ((1, 64), (64,)), ((32,), (1, 1, 32)), ((2, 64), (128,)),
                            ((7,), (1, 7)), ((1, 1, 7), (7,))]):
    check(f"D{i}", a, b)
# same-shape reshape: is it the same tensor?
x = dev(d, (1, 7, 48))
y = ttnn.reshape(x, (1, 7, 48))
print("same-shape reshape: tensor_id", x.tensor_id, y.tensor_id, "addr", x.buffer_address(), y.buffer_address(),
      "buffer_unique_id", x.buffer_unique_id(), y.buffer_unique_id(), flush=True)
z = ttnn.reshape(x, (7, 48))
print("view reshape: buffer_unique_id", x.buffer_unique_id(), z.buffer_unique_id(), flush=True)
ttnn.deallocate(z)
print("after deallocate(view z): x.is_allocated()", x.is_allocated(), flush=True)
x = dev(d, (1, 7, 48)); z = ttnn.reshape(x, (7, 48)); ttnn.deallocate(z, False)
print("after deallocate(view z, force=False): x.is_allocated()", x.is_allocated(), "z.is_allocated()", z.is_allocated(), flush=True)
done(d)
