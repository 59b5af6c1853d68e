"""Q42: a vocab-parallel LM head on a mesh, on the mock n300 (MESH=1,2) and T3000 (MESH=1,8) descriptors.
    MESH=1,2 bash tools/ttnn_mock/probes/run_probe.sh probe_tp_lmhead.py --device n300
    MESH=1,8 bash tools/ttnn_mock/probes/run_probe.sh probe_tp_lmhead.py --device t3k
Steps (tp along mesh axis 1): the head weight [H, V] with V = 1000 (not whole tiles) padded with zero columns to
whole tiles per chip and split on its last dim, bfloat8_b and bf16, its bias alike; linear of a replicated
activation with it (each chip's logits); all_gather(dim=-1, cluster_axis=1) of those TILE logits; slice of the
gathered logits to the V columns (an end inside a tile); to_torch with the tp program's composer.  Then the two
ways a tied table could share one buffer with the head (docs/design.md §6.21): linear(x, table rows split over the
chips, transpose_b=True), and embedding of a TILE table split on its rows (a vocab-parallel lookup); per-chip
DRAM bytes of each buffer."""
import os

from _common import *  # noqa: F401,F403

MESH = tuple(int(v) for v in os.environ.get("MESH", "1,2").split(","))
rows, tp = MESH
AX = {"cluster_axis": 1}
H, V, S = 256, 1000, 32  # hidden, vocab, sequence
PADDED = -(-V // (tp * 32)) * tp * 32

step("set_fabric_config(FABRIC_1D)", lambda: ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D))
mesh = step(f"open_mesh_device(MeshShape{MESH})", lambda: ttnn.open_mesh_device(ttnn.MeshShape(*MESH),
                                                                                 l1_small_size=16384))
split = ttnn.shard_tensor_to_mesh_mapper(mesh, dim=-1)
x = step(f"activation [1, {S}, {H}] replicated",
         lambda: ttnn.from_torch(torch.randn(1, S, H), dtype=ttnn.bfloat16, layout=TILE, device=mesh,
                                 memory_config=L1, mesh_mapper=ttnn.replicate_tensor_to_mesh_mapper(mesh)))
outs = []
for dtype in (ttnn.bfloat8_b, ttnn.bfloat16):
    name = str(dtype).split(".")[-1]
    base = per_bank(mesh, ttnn.BufferType.DRAM)
    w = step(f"head weight [{H}, {V}] padded to [{H}, {PADDED}] ({PADDED // tp} columns per chip), {name}, "
             "split on dim -1", lambda: ttnn.from_torch(torch.nn.functional.pad(torch.randn(H, V), (0, PADDED - V)),
                                                        dtype=dtype, layout=TILE, device=mesh, memory_config=DR,
                                                        mesh_mapper=split))
    print(f"NOTE DRAM bytes per bank of one chip's head weight ({name}):",
          per_bank(mesh, ttnn.BufferType.DRAM) - base, flush=True)
    b = step(f"its bias [1, {PADDED}] split on dim -1",
             lambda: ttnn.from_torch(torch.randn(1, PADDED), dtype=ttnn.bfloat16, layout=TILE, device=mesh,
                                     memory_config=DR, mesh_mapper=split))
    logits = step("linear(replicated x, column-split head, bias=) -> each chip's logits",
                  lambda: ttnn.linear(x, w, bias=b, memory_config=L1))
    whole = step("all_gather(logits, dim=-1, cluster_axis=1) -> the padded vocab",
                 lambda: ttnn.all_gather(logits, dim=-1, **AX))
    cut = step(f"slice(gathered, [0, 0, 0], [1, {S}, {V}], [1, 1, 1]) -> the vocab, end inside a tile",
               lambda: ttnn.slice(whole, [0, 0, 0], [1, S, V], [1, 1, 1]))
    step("to_torch(sliced, create_mesh_composer([0, 1], MeshShape(1, 1))) -> one replica",
         lambda: tuple(ttnn.to_torch(cut, mesh_composer=ttnn.create_mesh_composer(
             mesh, ttnn.MeshComposerConfig([0, 1], ttnn.MeshShape(1, 1)))).shape))
    outs += [w, b, logits, whole, cut]
# one buffer for a tied table and head: the table [V, H] split on its rows (vocab-parallel), TILE
base = per_bank(mesh, ttnn.BufferType.DRAM)
table = step(f"tied table [{PADDED}, {H}] bf16 TILE split on dim 0 (rows: the vocab)",
             lambda: ttnn.from_torch(torch.randn(PADDED, H), dtype=ttnn.bfloat16, layout=TILE, device=mesh,
                                     memory_config=DR, mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, dim=0)))
print("NOTE DRAM bytes per bank of one chip's rows of the TILE table:", per_bank(mesh, ttnn.BufferType.DRAM) - base,
      flush=True)
outs.append(step("linear(x, table rows, transpose_b=True) -> each chip's logits",
                 lambda: ttnn.linear(x, table, transpose_b=True, memory_config=L1)))
ids = ttnn.from_torch(torch.randint(0, PADDED // tp, (1, S), dtype=torch.int32), dtype=ttnn.uint32, layout=RM,
                      device=mesh, mesh_mapper=ttnn.replicate_tensor_to_mesh_mapper(mesh))
outs.append(step("embedding(ids, TILE table rows) -> each chip's lookup",
                 lambda: ttnn.embedding(ids, table, layout=TILE)))
row_major = step(f"the table [{PADDED}, {H}] bf16 ROW_MAJOR split on dim -1 (width; today's split)",
                 lambda: ttnn.from_torch(torch.randn(PADDED, H), dtype=ttnn.bfloat16, layout=RM, device=mesh,
                                         memory_config=DR, mesh_mapper=split))
looked = step("embedding(ids, ROW_MAJOR width piece) -> each chip's columns",
              lambda: ttnn.embedding(ids, row_major, layout=TILE))
outs += [table, row_major, looked,
         step("all_gather(looked-up columns, dim=-1, cluster_axis=1)", lambda: ttnn.all_gather(looked, dim=-1, **AX))]
for t in [x, ids, *outs]:
    if t is not None:
        ttnn.deallocate(t)
step("memory per bank after deallocating (L1, DRAM)",
     lambda: (per_bank(mesh, ttnn.BufferType.L1), per_bank(mesh, ttnn.BufferType.DRAM)))
step("close_mesh_device", lambda: ttnn.close_mesh_device(mesh))
step("set_fabric_config(DISABLED)", lambda: ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED))
done()
