"""Q2: what does the allocator reserve per bank for interleaved / sharded tensors; where do they land."""
import math
from _common import *

d = open_dev()
for bt in (ttnn.BufferType.L1, ttnn.BufferType.DRAM):
    v = ttnn.get_memory_view(d, bt)
    print(f"{str(bt).split('.')[-1]}: num_banks={v.num_banks} bytes_per_bank={v.total_bytes_per_bank} "
          f"allocator_base={ttnn.get_allocator_base_address(d, bt)}", flush=True)


def blocks(bt):
    return {(int(b["address"]), int(b["size"])) for b in ttnn.get_memory_view(d, bt).block_table
            if b["allocated"] == "yes"}


def probe(shape, dtype, layout, mc, torch_dtype=torch.float32):
    bt = mc.buffer_type
    nb = ttnn.get_memory_view(d, bt).num_banks
    b0 = blocks(bt)
    try:
        x = dev(d, shape, dtype=dtype, layout=layout, mc=mc, torch_dtype=torch_dtype)
    except Exception as e:  # noqa: BLE001
        print(f"ERR  {shape} {str(dtype).split('.')[-1]} {str(layout).split('.')[-1]} {str(bt).split('.')[-1]}: {errtext(e)}", flush=True)
        return
    new = sorted(blocks(bt) - b0)
    size = sum(s for _, s in new)
    ps, aps, npg = x.buffer_page_size(), x.buffer_aligned_page_size(), x.buffer_num_pages()
    pred = math.ceil(npg / nb) * aps
    tag = str(mc.memory_layout).split('.')[-1]
    print(f"{tuple(shape)} {str(dtype).split('.')[-1]} {str(layout).split('.')[-1]} {str(bt).split('.')[-1]} {tag}"
          f" padded={tuple(x.padded_shape)} page={ps} aligned_page={aps} pages={npg} banks={nb}"
          f" -> reserved/bank={size} block_addr={[a for a, _ in new]} tensor_addr={x.buffer_address()}"
          f" ceil(pages/banks)*aligned_page={pred}{'' if pred == size else '  <-- DIFFERS'}", flush=True)
    ttnn.deallocate(x)


shapes = [(1, 1, 32, 32), (1, 128, 768), (3, 5, 7), (1, 1, 1, 10), (100, 3), (1, 7, 48), (50, 48), (1, 1, 1, 1),
          (1, 1, 1024, 1024), (13, 97), (64, 64, 3, 3)]
for mc in (DR, L1):
    for shape in shapes:
        for dtype, layout, tdt in ((ttnn.bfloat16, TILE, torch.float32), (ttnn.float32, TILE, torch.float32),
                                   (ttnn.bfloat8_b, TILE, torch.float32), (ttnn.bfloat16, RM, torch.float32),
                                   (ttnn.float32, RM, torch.float32), (ttnn.uint32, RM, torch.int32),
                                   (ttnn.uint32, TILE, torch.int32), (ttnn.int32, TILE, torch.int32)):
            probe(shape, dtype, layout, mc, tdt)

# placement order: three L1 tensors in a row, then free the middle one and allocate again
print("--- placement order", flush=True)
xs = [dev(d, (1, 1, 32 * k, 32), mc=L1) for k in (64, 128, 64)]  # 2048 B, 4096 B... per bank
for x in xs:
    print("L1 tensor", tuple(x.shape), "addr", x.buffer_address(), flush=True)
ys = [dev(d, (1, 1, 32 * k, 32), mc=DR) for k in (12, 24, 12)]
for y in ys:
    print("DRAM tensor", tuple(y.shape), "addr", y.buffer_address(), flush=True)
ttnn.deallocate(xs[1])
z = dev(d, (1, 1, 32 * 64, 32), mc=L1)
print("after freeing the middle L1 tensor, a 2048 B/bank tensor lands at", z.buffer_address(), flush=True)
z2 = dev(d, (1, 1, 32 * 64, 32), mc=L1)
print("next one at", z2.buffer_address(), flush=True)
for t in xs[::2] + [z, z2] + ys:
    ttnn.deallocate(t)

# sharded
print("--- sharded L1", flush=True)


def sharded(name, shape, strategy, grid, dtype=ttnn.bfloat16, layout=TILE, orientation=ttnn.ShardOrientation.ROW_MAJOR,
            shard_shape=None):
    try:
        if shard_shape is None:
            mc = ttnn.create_sharded_memory_config(shape=shape, core_grid=grid, strategy=strategy, orientation=orientation)
        else:
            mc = ttnn.create_sharded_memory_config(shape=shard_shape, core_grid=grid, strategy=strategy,
                                                   orientation=orientation, use_height_and_width_as_shard_shape=True)
        b0 = blocks(ttnn.BufferType.L1)
        before = per_bank(d, ttnn.BufferType.L1)
        x = dev(d, shape, dtype=dtype, layout=layout, mc=mc)
        new = sorted(blocks(ttnn.BufferType.L1) - b0)
        ss = x.memory_config().shard_spec
        print(f"{name}: {tuple(shape)} {str(dtype).split('.')[-1]} {str(layout).split('.')[-1]} {strategy} grid={grid}"
              f" shard={tuple(ss.shape)} cores={ss.num_cores()} page={x.buffer_page_size()} aligned_page={x.buffer_aligned_page_size()}"
              f" pages={x.buffer_num_pages()} -> reserved/bank={per_bank(d, ttnn.BufferType.L1) - before} blocks={new}"
              f" addr={x.buffer_address()}", flush=True)
        ttnn.deallocate(x)
    except Exception as e:  # noqa: BLE001
        print(f"ERR  {name}: {tuple(shape)} {strategy} grid={grid}: {errtext(e)}", flush=True)


H, W, B = ttnn.ShardStrategy.HEIGHT, ttnn.ShardStrategy.WIDTH, ttnn.ShardStrategy.BLOCK
sharded("HS0", (1, 1, 256, 64), H, ttnn.CoreGrid(y=1, x=8))
sharded("HS1", (1, 1, 256, 64), H, ttnn.CoreGrid(y=8, x=8))
sharded("HS2", (1, 1, 8192, 64), H, ttnn.CoreGrid(y=8, x=8))
sharded("HS3", (1, 1, 8192, 64), H, ttnn.CoreGrid(y=8, x=8), dtype=ttnn.float32)
sharded("HS4", (1, 1, 8192, 64), H, ttnn.CoreGrid(y=8, x=8), dtype=ttnn.bfloat8_b)
sharded("HS5", (1, 1, 8192, 64), H, ttnn.CoreGrid(y=8, x=8), layout=RM)
sharded("HS6", (1, 1, 200, 64), H, ttnn.CoreGrid(y=1, x=7))
sharded("HS7", (1, 1, 200, 48), H, ttnn.CoreGrid(y=1, x=5), layout=RM)
sharded("HS8", (1, 1, 200, 48), H, ttnn.CoreGrid(y=1, x=5))
sharded("WS0", (1, 1, 64, 256), W, ttnn.CoreGrid(y=1, x=8))
sharded("WS1", (1, 1, 64, 2048), W, ttnn.CoreGrid(y=8, x=8))
sharded("BS0", (1, 1, 256, 256), B, ttnn.CoreGrid(y=8, x=8))
sharded("BS1", (1, 1, 1024, 512), B, ttnn.CoreGrid(y=4, x=8))
sharded("BS2", (1, 1, 1024, 512), B, ttnn.CoreGrid(y=8, x=4), orientation=ttnn.ShardOrientation.COL_MAJOR)
sharded("BS3", (1, 1, 100, 100), B, ttnn.CoreGrid(y=2, x=2))
sharded("HSX", (1, 1, 256, 64), H, ttnn.CoreGrid(y=1, x=8), shard_shape=(32, 64))
print("L1 after all deallocs per bank:", per_bank(d, ttnn.BufferType.L1), flush=True)
done(d)
