"""Q36: what does `from_torch(..., device=, memory_config=L1)` allocate besides the tensor it returns?
    MESH=1,2 bash tools/ttnn_mock/probes/run_probe.sh probe_upload_transient.py --device n300
    MESH=1,1 bash tools/ttnn_mock/probes/run_probe.sh probe_upload_transient.py            (one n150 chip)
Found by GPT-2's split token table (ttnn-facts §27): an upload through a mesh mapper into L1 asked for more L1
than the tensor.  For each upload: (1) the buffers it allocates and frees, in order, and the device operations it
runs (ttnn.graph capture into an empty L1); (2) for some, the smallest free L1 per bank it succeeds with
(bisection over a ROW_MAJOR filler holding the rest of every bank, 32 B per bank steps), so `needed - tensor` is
what the upload needs beside its own result (transient buffers and the circular buffers of the device programs
it runs).  The weight is a [768, 2304] float32 torch tensor (the converter's npz values) split on its last dim
over the mesh columns (one chip: [768, 1152] on 1x2), as GPT-2's QKV; then an activation and token ids as
forward() uploads them; then the same through `from_torch` on the host (no device, the mapper given) and
`ttnn.to_device(host, mesh, memory_config=L1)`."""
import os

from _common import *  # noqa: F401,F403

MESH = tuple(int(v) for v in os.environ.get("MESH", "1,2").split(","))
mesh = ttnn.open_mesh_device(ttnn.MeshShape(*MESH), l1_small_size=16384)
L1B = ttnn.BufferType.L1
view = ttnn.get_memory_view(mesh, L1B)
BANK = int(view.total_bytes_per_bank)
BANKS = mesh.compute_with_storage_grid_size().x * mesh.compute_with_storage_grid_size().y
print(f"INFO mesh {MESH} L1 banks={BANKS} bank bytes={BANK} allocated at start={per_bank(mesh, L1B)}", flush=True)
W = torch.randn(768, 2304, dtype=torch.float32)


def split(dim=-1):
    return ttnn.shard_tensor_to_mesh_mapper(mesh, dim=dim)


def rep():
    return ttnn.replicate_tensor_to_mesh_mapper(mesh)


def direct(dtype, layout, mapper, src=W):
    return lambda: ttnn.from_torch(src, dtype=dtype, layout=layout, device=mesh, memory_config=L1,
                                   mesh_mapper=mapper())


def host_then_device(dtype, layout, mapper, src=W):
    def up():
        host = ttnn.from_torch(src, dtype=dtype, layout=layout, mesh_mapper=mapper())
        return ttnn.to_device(host, mesh, memory_config=L1)
    return up


def filler(free):
    """A ROW_MAJOR bf16 tensor in L1 leaving `free` bytes per bank (32 B pages, replicated on every chip)."""
    rows = (BANK - per_bank(mesh, L1B) - free) // 32 * BANKS
    return ttnn.from_torch(torch.zeros(rows, 16, dtype=torch.bfloat16), dtype=ttnn.bfloat16, layout=RM,
                           device=mesh, memory_config=L1, mesh_mapper=rep())


def succeeds(up, free):
    fill = filler(free)
    try:
        t = up()
        ttnn.deallocate(t)
        return True
    except Exception as e:  # noqa: BLE001
        succeeds.last = errtext(e, 2)
        return False
    finally:
        ttnn.deallocate(fill)


succeeds.last = ""


def allocations(up):
    """The L1/DRAM buffers the upload allocates and frees, in order (ttnn.graph capture), and its result."""
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    try:
        t = up()
    finally:
        trace = ttnn.graph.end_graph_capture()
    seq, ops = [], []
    for node in trace:
        kind, p = node.get("node_type"), node.get("params", {})
        if kind in ("buffer_allocate", "buffer_deallocate"):
            seq.append(f"{'+' if kind == 'buffer_allocate' else '-'}{p['type']} {p['size']} B "
                       f"(page {p['page_size']}, @{p['address']})")
        elif kind == "function_start" and "DeviceOperation" in str(p.get("name")):
            seq.append(str(p["name"]))
    return t, seq


def measure(name, up, bisect):
    try:
        t, seq = allocations(up)
    except Exception as e:  # noqa: BLE001
        print(f"ERR  {name}: {type(e).__name__}: {errtext(e)}", flush=True)
        return
    size = per_bank(mesh, L1B)
    print(f"OK   {name}: {desc(t)} | {size} B per bank", flush=True)
    print(f"     allocations: {'; '.join(seq)}", flush=True)
    ttnn.deallocate(t)
    if not bisect:
        return
    lo, hi = size - 32, 4 * size + 65536  # hi: succeeds (checked); lo: fails (less than the tensor)
    if not succeeds(up, hi):
        print(f"     needs more than {hi} B per bank free: {succeeds.last}", flush=True)
        return
    succeeds.last = ""
    while hi - lo > 32:
        mid = (lo + hi) // 2 // 32 * 32
        if succeeds(up, mid):
            hi = mid
        else:
            lo = mid
    print(f"     smallest free L1 per bank it succeeds with: {hi} = tensor {size} + {hi - size} "
          f"(at {lo}: {succeeds.last or 'not tried'})", flush=True)


B8, B16 = ttnn.bfloat8_b, ttnn.bfloat16
mapper = split if MESH != (1, 1) else (lambda dim=-1: None)
replicated = rep if MESH != (1, 1) else (lambda: None)
ids = torch.randint(0, 50000, (1, 128), dtype=torch.int64)
x = torch.randn(1, 128, 768, dtype=torch.float32)
cases = [  # (name, upload, bisect)
    ("bf16 TILE (float32 torch)", direct(B16, TILE, mapper), True),
    ("bf16 TILE (bfloat16 torch)", direct(B16, TILE, mapper, W.to(torch.bfloat16)), False),
    ("bf16 ROW_MAJOR (float32 torch)", direct(B16, RM, mapper), True),
    ("bf16 ROW_MAJOR (bfloat16 torch)", direct(B16, RM, mapper, W.to(torch.bfloat16)), False),
    ("bfloat8_b TILE (float32 torch)", direct(B8, TILE, mapper), True),
    ("bfloat8_b TILE, replicated", direct(B8, TILE, replicated), False),
    ("bfloat4_b TILE", direct(ttnn.bfloat4_b, TILE, mapper), False),
    ("float32 TILE (float32 torch)", direct(ttnn.float32, TILE, mapper), False),
    ("activation bf16 TILE [1, 128, 768], replicated (float32 torch)", direct(B16, TILE, replicated, x), False),
    ("ids uint32 ROW_MAJOR [1, 128], replicated (int64 torch)", direct(ttnn.uint32, RM, replicated, ids), False),
    ("host then to_device: bf16 TILE", host_then_device(B16, TILE, mapper), True),
    ("host then to_device: bf16 ROW_MAJOR", host_then_device(B16, RM, mapper), True),
    ("host then to_device: bfloat8_b TILE", host_then_device(B8, TILE, mapper), False),
    ("host then to_device: activation bf16 TILE, replicated", host_then_device(B16, TILE, replicated, x), False),
    ("host then to_device: ids uint32 ROW_MAJOR, replicated",
     host_then_device(ttnn.uint32, RM, replicated, ids), False),
]
if MESH == (1, 1):  # the same uploads given a mesh mapper on one chip
    cases[2:2] = [("bf16 TILE (float32 torch), replicate_tensor_to_mesh_mapper", direct(B16, TILE, rep), False),
                  ("bf16 TILE (float32 torch), shard_tensor_to_mesh_mapper", direct(B16, TILE, split), False)]
for name, up, bisect in cases:
    measure(name, up, bisect)
print(f"INFO allocated at the end: {per_bank(mesh, L1B)}", flush=True)
ttnn.close_mesh_device(mesh)
done()
