"""Q47: can a per-channel [1, N] row (a QDQ linear's float32 scale, or its bias) be read without its tile
padding?  A TILE [1, N] tensor is padded to 32 rows: 128 N bytes in float32 for 4 N of content.  Asked of
real ttnn 0.81.1 on the mock (validity and allocated bytes only; the mock computes nothing):
(a) multiply(y, row) with the row ROW_MAJOR [1, N] float32 in DRAM, y TILE float32 [1, 1, 224, N];
(b) the same with the row a TILE tensor of 1x32 tiles (ttnn.Tile([1, 32]));
(c) ttnn.linear with a ROW_MAJOR bias, and with a 1x32-tile bias;
(d) the DRAM bytes per bank each row form allocates (12 DRAM banks);
(e) what a multiply by a ROW_MAJOR row runs inside (ttnn's graph capture: the device operations and the buffers
    they allocate), with the row in DRAM and in L1."""
from _common import *

N = 768
d = open_dev()
y = dev(d, (1, 1, 224, N), dtype=ttnn.float32, mc=L1)
row_t = torch.randn(1, N)

def bytes_of(make):
    before = per_bank(d, ttnn.BufferType.DRAM)
    t = make()
    return t, per_bank(d, ttnn.BufferType.DRAM) - before

print("--- Q47d bytes per DRAM bank of a [1, 768] float32 row", flush=True)
tile_row, b1 = bytes_of(lambda: ttnn.from_torch(row_t, dtype=ttnn.float32, layout=TILE, device=d, memory_config=DR))
print(f"OK   TILE 32x32: {desc(tile_row)}, {b1} B per bank", flush=True)
rm_row, b2 = bytes_of(lambda: ttnn.from_torch(row_t, dtype=ttnn.float32, layout=RM, device=d, memory_config=DR))
print(f"OK   ROW_MAJOR: {desc(rm_row)}, {b2} B per bank", flush=True)
tiny = None
try:
    tiny, b3 = bytes_of(lambda: ttnn.from_torch(row_t, dtype=ttnn.float32, layout=TILE, tile=ttnn.Tile([1, 32]),
                                                device=d, memory_config=DR))
    print(f"OK   TILE 1x32: {desc(tiny)}, tile={tiny.tile}, {b3} B per bank", flush=True)
except Exception as e:  # noqa: BLE001
    print(f"ERR  TILE 1x32 upload: {type(e).__name__}: {errtext(e)}", flush=True)

print("--- Q47a/b multiply(y, row)", flush=True)
step("multiply by a TILE 32x32 row (today)", lambda: ttnn.multiply(y, tile_row, memory_config=L1))
step("multiply by a ROW_MAJOR row", lambda: ttnn.multiply(y, rm_row, memory_config=L1))
if tiny is not None:
    step("multiply by a 1x32-tile row", lambda: ttnn.multiply(y, tiny, memory_config=L1))
step("multiply(row ROW_MAJOR, y) (row first)", lambda: ttnn.multiply(rm_row, y, memory_config=L1))

print("--- Q47c linear bias forms", flush=True)
x = dev(d, (1, 1, 224, N), dtype=ttnn.bfloat16, mc=L1)
w = dev(d, (N, N), dtype=ttnn.bfloat8_b)
cfg = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, math_approx_mode=False,
                                       fp32_dest_acc_en=True, packer_l1_acc=False)
step("linear, bias TILE row", lambda: ttnn.linear(x, w, bias=tile_row, compute_kernel_config=cfg,
                                                  dtype=ttnn.float32, memory_config=L1))
step("linear, bias ROW_MAJOR row", lambda: ttnn.linear(x, w, bias=rm_row, compute_kernel_config=cfg,
                                                       dtype=ttnn.float32, memory_config=L1))
if tiny is not None:
    step("linear, bias 1x32-tile row", lambda: ttnn.linear(x, w, bias=tiny, compute_kernel_config=cfg,
                                                           dtype=ttnn.float32, memory_config=L1))
print("--- Q47e inside multiply(y, ROW_MAJOR row): device operations and allocations", flush=True)
for where, mc in (("DRAM", DR), ("L1", L1)):
    r = ttnn.from_torch(row_t, dtype=ttnn.float32, layout=RM, device=d, memory_config=mc)
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    out = ttnn.multiply(y, r, memory_config=L1)
    g = ttnn.graph.end_graph_capture()
    ops = [n["params"].get("name") for n in g if n.get("node_type") == "function_start"]
    allocs = [(int(n["params"].get("size")), n["params"].get("type")) for n in g if n.get("node_type") == "buffer_allocate"]
    print(f"OK   row in {where}: ops {[o for o in ops if 'Operation' in o]}, allocations (bytes, buffer) {allocs}",
          flush=True)
    ttnn.deallocate(out)
    ttnn.deallocate(r)
print("--- Q47e inside linear(x, w, bias=TILE row), no program config", flush=True)
ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
out = ttnn.linear(x, w, bias=tile_row, compute_kernel_config=cfg, dtype=ttnn.float32, memory_config=L1)
g = ttnn.graph.end_graph_capture()
ops = [n["params"].get("name") for n in g if n.get("node_type") == "function_start"]
print(f"OK   ops {[o for o in ops if 'Operation' in o]}", flush=True)
done(d)
