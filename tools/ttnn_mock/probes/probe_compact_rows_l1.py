"""Q47 (continued): what a ROW_MAJOR [1, N] float32 row costs in L1, and does the form the compiler emits take it?
Asked of real ttnn 0.81.1 on the mock (allocated bytes and validity only; the mock computes nothing):
(f) the L1 bytes per bank (64 banks on n150) of a [1, N] float32 row, TILE and ROW_MAJOR, N = 768 and 3072:
    a ROW_MAJOR row is one page (the whole row), and an interleaved buffer reserves the fullest bank's bytes in
    every bank (docs/ttnn-facts.md §2);
(g) ttnn.linear with a core_grid (the compiler's float32 coded linear) and a ROW_MAJOR bias in L1; the device
    operations of linear with a TILE bias, with and without a core_grid;
(h) what multiply(y, ROW_MAJOR row in L1) allocates in L1 per bank at its peak, beside its output;
(i) a ROW_MAJOR row width-sharded in [1, 32] shards: its L1 bytes per bank, and multiply / linear's bias with it."""
from _common import *

d = open_dev()
L1T = ttnn.BufferType.L1

def l1_bytes(make):
    before = per_bank(d, L1T)
    t = make()
    return t, per_bank(d, L1T) - before

print("--- Q47f bytes per L1 bank of a [1, N] float32 row", flush=True)
for n in (768, 3072):
    row_t = torch.randn(1, n)
    t, b1 = l1_bytes(lambda: ttnn.from_torch(row_t, dtype=ttnn.float32, layout=TILE, device=d, memory_config=L1))
    print(f"OK   N={n} TILE: {desc(t)}, {b1} B per bank", flush=True)
    r, b2 = l1_bytes(lambda: ttnn.from_torch(row_t, dtype=ttnn.float32, layout=RM, device=d, memory_config=L1))
    print(f"OK   N={n} ROW_MAJOR: {desc(r)}, {b2} B per bank", flush=True)
    ttnn.deallocate(t)
    ttnn.deallocate(r)

print("--- Q47g linear with a core_grid, ROW_MAJOR bias in L1", flush=True)
N = 768
x = dev(d, (1, 1, 224, N), dtype=ttnn.float32, mc=L1)
w = dev(d, (N, N), dtype=ttnn.bfloat8_b)
cfg = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, math_approx_mode=False,
                                       fp32_dest_acc_en=True, packer_l1_acc=False)
rm_bias = ttnn.from_torch(torch.randn(1, N), dtype=ttnn.float32, layout=RM, device=d, memory_config=L1)
out = step("linear core_grid 8x8, bias ROW_MAJOR L1", lambda: ttnn.linear(
    x, w, bias=rm_bias, compute_kernel_config=cfg, core_grid=ttnn.CoreGrid(y=8, x=8), memory_config=L1))
ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
out2 = ttnn.linear(x, w, bias=rm_bias, compute_kernel_config=cfg, core_grid=ttnn.CoreGrid(y=8, x=8), memory_config=L1)
g = ttnn.graph.end_graph_capture()
ops = [n["params"].get("name") for n in g if n.get("node_type") == "function_start"]
allocs = [(int(n["params"].get("size")), n["params"].get("type")) for n in g if n.get("node_type") == "buffer_allocate"]
print(f"OK   ops {[o for o in ops if 'Operation' in o]}, allocations (bytes, buffer) {allocs}", flush=True)

tile_bias = ttnn.from_torch(torch.randn(1, N), dtype=ttnn.float32, layout=TILE, device=d, memory_config=L1)
for grid in (None, ttnn.CoreGrid(y=8, x=8)):
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    o = ttnn.linear(x, w, bias=tile_bias, compute_kernel_config=cfg, core_grid=grid, memory_config=L1)
    g = ttnn.graph.end_graph_capture()
    ops = [n["params"].get("name") for n in g if n.get("node_type") == "function_start"]
    print(f"OK   TILE bias, core_grid={grid}: ops {[o for o in ops if 'Operation' in o]}", flush=True)
    ttnn.deallocate(o)

print("--- Q47h multiply(y, ROW_MAJOR row in L1): L1 per bank after the call (copy freed?)", flush=True)
before = per_bank(d, L1T)
y3 = ttnn.multiply(out, rm_bias, memory_config=L1)
print(f"OK   L1 per bank grew by {per_bank(d, L1T) - before} B (the output alone: "
      f"{224 // 32 * N // 32 // 64 + (1 if (224 // 32 * N // 32) % 64 else 0)} tiles of 4096 B)", flush=True)
print("--- Q47i a width-sharded ROW_MAJOR row: [1, 768] float32 in shards [1, 32] over 24 cores (8x3)", flush=True)
grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(7, 2))})
ws = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1,
                       ttnn.ShardSpec(grid, [1, 32], ttnn.ShardOrientation.ROW_MAJOR))
before = per_bank(d, L1T)
wrow = step("upload ROW_MAJOR width-sharded [1, 32] shards", lambda: ttnn.from_torch(
    torch.randn(1, N), dtype=ttnn.float32, layout=RM, device=d, memory_config=ws))
if wrow is not None:
    print(f"OK   L1 per bank: {per_bank(d, L1T) - before} B", flush=True)
    step("multiply(y L1 interleaved TILE, width-sharded ROW_MAJOR row)", lambda: ttnn.multiply(out, wrow, memory_config=L1))
    step("linear core_grid 8x8, bias width-sharded ROW_MAJOR row", lambda: ttnn.linear(
        x, w, bias=wrow, compute_kernel_config=cfg, core_grid=ttnn.CoreGrid(y=8, x=8), memory_config=L1))
done(d)
