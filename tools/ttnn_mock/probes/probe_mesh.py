"""Q26: meshes of chips (data parallel), on the mock n300 (MESH=1,2) and T3000 (MESH=1,8 or 2,4) descriptors.
    MESH=1,2 bash tools/ttnn_mock/probes/run_probe.sh probe_mesh.py --device n300
    MESH=2,4 bash tools/ttnn_mock/probes/run_probe.sh probe_mesh.py --device t3k
Steps: the mesh opens without a fabric config; a batch split on dim 0 by shard_tensor_to_mesh_mapper gives
each chip batch / chips rows; a replicated weight gives each chip all of it; ttnn ops run on mesh tensors
(linear, softmax, conv2d with host weights, which it prepares on every chip); to_torch joins the pieces with
concat_mesh_to_tensor_composer; get_memory_view of a mesh reports one chip's banks (the same bytes per bank
as one chip holding one chip's piece); deallocate frees the mesh tensor on every chip; clear_program_cache
exists on a mesh; to_torch of a split tensor without a composer; a mesh larger than the system."""
import os

from _common import *  # noqa: F401,F403

MESH = tuple(int(v) for v in os.environ.get("MESH", "1,2").split(","))
chips = MESH[0] * MESH[1]
print("NOTE devices visible:", ttnn.get_num_devices(), flush=True)
mesh = step(f"open_mesh_device(MeshShape{MESH}) without set_fabric_config",
            lambda: ttnn.open_mesh_device(ttnn.MeshShape(*MESH), l1_small_size=16384))
print("NOTE mesh chips:", mesh.get_num_devices(), "grid", mesh.compute_with_storage_grid_size(), flush=True)
shard, rep = ttnn.shard_tensor_to_mesh_mapper(mesh, dim=0), ttnn.replicate_tensor_to_mesh_mapper(mesh)
before = per_bank(mesh, ttnn.BufferType.DRAM)
x = step(f"from_torch [{2 * chips}, 64, 128] split on dim 0",
         lambda: ttnn.from_torch(torch.randn(2 * chips, 64, 128), dtype=ttnn.bfloat16, layout=TILE, device=mesh,
                                 memory_config=DR, mesh_mapper=shard))
print("NOTE DRAM bytes per bank for the split input:", per_bank(mesh, ttnn.BufferType.DRAM) - before,
      "(one chip's [2, 64, 128] bf16 tile: 16 tiles over 12 banks -> 2 pages of 2048 B = 4096)", flush=True)
pieces = step("get_device_tensors(x) (one per chip)", lambda: ttnn.get_device_tensors(x))
w = step("from_torch weight [128, 128] replicated",
         lambda: ttnn.from_torch(torch.randn(128, 128), dtype=ttnn.bfloat16, layout=TILE, device=mesh,
                                 memory_config=DR, mesh_mapper=rep))
y = step("linear(x, w) on the mesh", lambda: ttnn.linear(x, w, memory_config=L1))
z = step("softmax(y, dim=-1)", lambda: ttnn.softmax(y, dim=-1))
step("to_torch(z, composer dim 0) -> whole batch",
     lambda: tuple(ttnn.to_torch(z, mesh_composer=ttnn.concat_mesh_to_tensor_composer(mesh, dim=0)).shape))
step("to_torch(z) without a composer", lambda: tuple(ttnn.to_torch(z).shape))
img = step(f"conv input [1, 1, {chips} * 64, 16] row-major split on dim 2",
           lambda: ttnn.from_torch(torch.randn(1, 1, chips * 64, 16), dtype=ttnn.bfloat16, layout=RM, device=mesh,
                                   mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, dim=2)))
cw = ttnn.from_torch(torch.randn(16, 16, 3, 3), dtype=ttnn.float32)
step("conv2d(host weight, device=mesh) prepares it on every chip",
     lambda: ttnn.conv2d(input_tensor=img, weight_tensor=cw, device=mesh, in_channels=16, out_channels=16,
                         batch_size=1, input_height=8, input_width=8, kernel_size=(3, 3), stride=(1, 1),
                         padding=(1, 1), dilation=(1, 1), groups=1, return_weights_and_bias=True)[1])
for t in (x, w, y, z, img):
    ttnn.deallocate(t)
step("memory per bank after deallocating (L1, DRAM)",
     lambda: (per_bank(mesh, ttnn.BufferType.L1), per_bank(mesh, ttnn.BufferType.DRAM)))
step("mesh.clear_program_cache()", lambda: mesh.clear_program_cache())
step("memory per bank after clearing the program cache (L1, DRAM)",
     lambda: (per_bank(mesh, ttnn.BufferType.L1), per_bank(mesh, ttnn.BufferType.DRAM)))
ttnn.close_mesh_device(mesh)
step(f"open_mesh_device(MeshShape(1, {2 * chips})): larger than the system",
     lambda: ttnn.open_mesh_device(ttnn.MeshShape(1, 2 * chips), l1_small_size=16384))
done()
