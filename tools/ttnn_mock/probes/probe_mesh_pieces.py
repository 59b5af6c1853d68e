"""Q28: the host steps of a data-parallel program (onnx2ttnn/fallback/per_chip.py), on the mock n300 (MESH=1,2)
and T3000 (MESH=2,4) descriptors.
    MESH=1,2 bash tools/ttnn_mock/probes/run_probe.sh probe_mesh_pieces.py --device n300
    MESH=2,4 bash tools/ttnn_mock/probes/run_probe.sh probe_mesh_pieces.py --device t3k
Steps: a host tensor whose rows name their chip (row i of chip c holds c) uploaded split on dim 0 and read back
through concat_mesh_to_tensor_composer(dim 0): does the mock keep the values, and in which order do the chips'
pieces come back; the same through get_device_tensors, piece by piece; a host tensor joined from per-chip pieces
(torch.cat on dim 1) uploaded with shard_tensor_to_mesh_mapper(dim=1): each chip's piece shape and values."""
import os

from _common import *  # noqa: F401,F403

MESH = tuple(int(v) for v in os.environ.get("MESH", "1,2").split(","))
chips = MESH[0] * MESH[1]
mesh = ttnn.open_mesh_device(ttnn.MeshShape(*MESH), l1_small_size=16384)
labels = torch.arange(chips, dtype=torch.float32).repeat_interleave(2).reshape(2 * chips, 1).expand(2 * chips, 64)
x = step(f"from_torch [{2 * chips}, 64] (rows of chip c hold c) split on dim 0",
         lambda: ttnn.from_torch(labels.contiguous(), dtype=ttnn.bfloat16, layout=TILE, device=mesh, memory_config=DR,
                                 mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, dim=0)))
back = ttnn.to_torch(x, mesh_composer=ttnn.concat_mesh_to_tensor_composer(mesh, dim=0))
step("to_torch(x, composer dim 0): shape", lambda: tuple(back.shape))
print("NOTE values kept by the round trip:", bool(torch.equal(back.float(), labels)),
      "; first column of the joined rows:", back[:, 0].tolist(), flush=True)
step("chunk(chips, 0) of the joined tensor: one piece per chip, in chip order",
     lambda: [p[:, 0].tolist() for p in back.chunk(chips, 0)])
step("get_device_tensors(x) read back piece by piece",
     lambda: [ttnn.to_torch(p)[:, 0].tolist() for p in ttnn.get_device_tensors(x)])
pieces = [torch.full((1, 2, 32), float(c)) for c in range(chips)]
y = step("from_torch(torch.cat(pieces, 1)) with shard_tensor_to_mesh_mapper(dim=1)",
         lambda: ttnn.from_torch(torch.cat(pieces, 1), dtype=ttnn.bfloat16, layout=TILE, device=mesh,
                                 memory_config=DR, mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(mesh, dim=1)))
step("each chip's piece of y (shape, first value)",
     lambda: [(tuple(p.shape), ttnn.to_torch(p).flatten()[0].item()) for p in ttnn.get_device_tensors(y)])
ttnn.deallocate(x)
ttnn.deallocate(y)
ttnn.close_mesh_device(mesh)
