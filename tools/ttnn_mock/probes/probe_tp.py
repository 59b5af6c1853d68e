"""Q27: tensor parallel on a mesh, on the mock n300 (MESH=1,2) and T3000 (MESH=1,8 or 2,4) descriptors.
    MESH=1,2 bash tools/ttnn_mock/probes/run_probe.sh probe_tp.py --device n300
    MESH=1,8 bash tools/ttnn_mock/probes/run_probe.sh probe_tp.py --device t3k
    MESH=2,4 bash tools/ttnn_mock/probes/run_probe.sh probe_tp.py --device t3k
Steps (tp along mesh axis 1, the columns; on 2x4 the batch is split along axis 0, the rows): CCL ops without a
fabric config; set_fabric_config(FABRIC_1D) before open_mesh_device; a column-parallel weight split on its
last dim (shard_tensor_to_mesh_mapper dim=-1, and a 2-D MeshMapperConfig on 2x4); its bias alike; linear of a
replicated activation with it; the fused QKV split into heads/chips heads per chip; a row-parallel weight split
on dim 0; linear of the column-parallel piece with it (a partial sum per chip); all_reduce of the partial sums
(with and without cluster_axis); reduce_scatter then all_gather; per-chip bytes; composers of a replicated
result (2x4: a composer over the dp axis only, via mesh_shape_override)."""
import os

from _common import *  # noqa: F401,F403

MESH = tuple(int(v) for v in os.environ.get("MESH", "1,2").split(","))
rows, tp = MESH
chips = rows * tp
AX = {"cluster_axis": 1}
H, F, HEADS, S = 256, 1024, 8, 64  # hidden, feed-forward, heads, sequence


def mapper(mesh, dp_dim, tp_dim):
    """dp_dim split along axis 0 (None: replicated there), tp_dim along axis 1 (None: replicated)."""
    if rows == 1:
        return (ttnn.replicate_tensor_to_mesh_mapper(mesh) if tp_dim is None
                else ttnn.shard_tensor_to_mesh_mapper(mesh, dim=tp_dim))
    place = [ttnn.PlacementReplicate() if d is None else ttnn.PlacementShard(d) for d in (dp_dim, tp_dim)]
    return ttnn.create_mesh_mapper(mesh, ttnn.MeshMapperConfig(place))


mesh0 = ttnn.open_mesh_device(ttnn.MeshShape(*MESH), l1_small_size=16384)
p = ttnn.from_torch(torch.randn(rows, S, H), dtype=ttnn.bfloat16, layout=TILE, device=mesh0,
                    mesh_mapper=mapper(mesh0, 0, None))
step("all_reduce without set_fabric_config", lambda: ttnn.all_reduce(p, **AX))
ttnn.close_mesh_device(mesh0)

step("set_fabric_config(FABRIC_1D)", lambda: ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D))
mesh = step(f"open_mesh_device(MeshShape{MESH}) after the fabric config",
            lambda: ttnn.open_mesh_device(ttnn.MeshShape(*MESH), l1_small_size=16384))
before = per_bank(mesh, ttnn.BufferType.DRAM)
x = step(f"activation [{rows}, {S}, {H}]: batch split along axis 0, replicated along axis 1",
         lambda: ttnn.from_torch(torch.randn(rows, S, H), dtype=ttnn.bfloat16, layout=TILE, device=mesh,
                                 memory_config=DR, mesh_mapper=mapper(mesh, 0, None)))
base = per_bank(mesh, ttnn.BufferType.DRAM)
wqkv = step(f"fused QKV weight [{H}, {3 * H}] split on dim -1 (column parallel)",
            lambda: ttnn.from_torch(torch.randn(H, 3 * H), dtype=ttnn.bfloat16, layout=TILE, device=mesh,
                                    memory_config=DR, mesh_mapper=mapper(mesh, None, -1)))
print("NOTE DRAM bytes per bank of the column-parallel weight:", per_bank(mesh, ttnn.BufferType.DRAM) - base,
      f"(one chip's [{H}, {3 * H // tp}] bf16: {H * 3 * H // tp // 1024} tiles over 12 banks)", flush=True)
bqkv = step(f"its bias [{3 * H}] split on dim -1",
            lambda: ttnn.from_torch(torch.randn(1, 3 * H), dtype=ttnn.bfloat16, layout=TILE, device=mesh,
                                    memory_config=DR, mesh_mapper=mapper(mesh, None, -1)))
qkv = step("linear(replicated x, column-parallel w, bias) -> each chip's columns",
           lambda: ttnn.linear(x, wqkv, bias=bqkv, memory_config=L1))
heads = step(f"split_query_key_value_and_split_heads(num_heads={HEADS // tp}) of each chip's columns",
             lambda: ttnn.transformer.split_query_key_value_and_split_heads(
                 ttnn.reshape(qkv, (1, S, 3 * H // tp)), num_heads=HEADS // tp, transpose_key=False))
att = step("scaled_dot_product_attention on each chip's heads",
           lambda: ttnn.transformer.scaled_dot_product_attention(*heads, is_causal=False))
ctx = step("concatenate_heads -> each chip's heads side by side", lambda: ttnn.transformer.concatenate_heads(att))
wo = step(f"attention-out weight [{H}, {H}] split on dim 0 (row parallel)",
          lambda: ttnn.from_torch(torch.randn(H, H), dtype=ttnn.bfloat16, layout=TILE, device=mesh,
                                  memory_config=DR, mesh_mapper=mapper(mesh, None, 0)))
part = step("linear(column piece, row-parallel w) -> a partial sum per chip",
            lambda: ttnn.linear(ctx, wo, memory_config=L1))
for name, kw in (("all_reduce(partial, cluster_axis=1)", AX), ("all_reduce(partial)", {}),
                 ("all_reduce(partial, cluster_axis=1, memory_config=DRAM)", dict(AX, memory_config=DR))):
    out = step(name, lambda: ttnn.all_reduce(part, **kw))
    if out is not None:
        ttnn.deallocate(out)
rs = step(f"reduce_scatter(partial, dim=-1, cluster_axis=1) -> {H // tp} columns each",
          lambda: ttnn.reduce_scatter(part, dim=-1, **AX))
ag = step("all_gather(scattered, dim=-1, cluster_axis=1) -> whole", lambda: ttnn.all_gather(rs, dim=-1, **AX))
step("reduce_scatter without cluster_axis", lambda: ttnn.reduce_scatter(part, dim=-1))
step("reduce_scatter on dim -2 (rows)", lambda: ttnn.reduce_scatter(part, dim=-2, **AX))
step("all_reduce of a bfloat8_b partial sum",
     lambda: ttnn.all_reduce(ttnn.typecast(part, ttnn.bfloat8_b), **AX))
step("all_reduce of a rank-2 tensor",
     lambda: ttnn.all_reduce(ttnn.reshape(part, (S, H)), **AX))
if rows == 1:
    step("to_torch(all-reduced, concat composer dim 0) -> tp copies stacked",
         lambda: tuple(ttnn.to_torch(ag, mesh_composer=ttnn.concat_mesh_to_tensor_composer(mesh, dim=0)).shape))
else:
    step("to_torch(all-reduced, create_mesh_composer([0, 0])) -> each replica",
         lambda: tuple(ttnn.to_torch(ag, mesh_composer=ttnn.create_mesh_composer(
             mesh, ttnn.MeshComposerConfig([0, 0]))).shape))
    step(f"to_torch(all-reduced, MeshComposerConfig(0, -1)) -> replicas side by side",
         lambda: tuple(ttnn.to_torch(ag, mesh_composer=ttnn.create_mesh_composer(
             mesh, ttnn.MeshComposerConfig(0, -1))).shape))
step(f"to_torch(all-reduced, composer [0, -1] with mesh_shape_override MeshShape({rows}, 1)) -> one replica per row",
     lambda: tuple(ttnn.to_torch(ag, mesh_composer=ttnn.create_mesh_composer(
         mesh, ttnn.MeshComposerConfig([0, -1], ttnn.MeshShape(rows, 1)))).shape))
print("NOTE DRAM per bank now:", per_bank(mesh, ttnn.BufferType.DRAM) - before, flush=True)
for t in (x, wqkv, bqkv, qkv, att, ctx, wo, part, rs, ag, *heads):
    if t is not None:
        ttnn.deallocate(t)
step("memory per bank after deallocating (L1, DRAM)",
     lambda: (per_bank(mesh, ttnn.BufferType.L1), per_bank(mesh, ttnn.BufferType.DRAM)))
step("close_mesh_device", lambda: ttnn.close_mesh_device(mesh))
step("set_fabric_config(DISABLED) after closing", lambda: ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED))
done()
