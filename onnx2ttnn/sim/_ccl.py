"""Between the chips of a simulated mesh: the fabric config, 2-D mesh mappers and composers, and the CCL ops'
numerics (docs/ttnn-facts.md §27).

`set_fabric_config` before `open_mesh_device` is what lets a mesh run CCL ops; without it they fail as ttnn's
do ("Trying to get un-initialized fabric context").  all_reduce gives every chip along `cluster_axis` (all
chips when None) the sum of their pieces, rounded to the input's dtype as ttnn's reduction in bfloat16 does;
reduce_scatter gives chip i of the group the i-th piece of that sum on `dim`; all_gather the pieces
concatenated on `dim`.  Each result is a new tensor on each chip, allocated there (memory_config: the
input's unless given).  `create_mesh_mapper` splits a host tensor per mesh axis (PlacementShard(d) /
PlacementReplicate()); `create_mesh_composer` joins the pieces of the sub-mesh `mesh_shape_override` (default:
the whole mesh) on `dims`, one dim per mesh axis.
"""
from __future__ import annotations

import enum

import torch

from ._mesh import CppMeshToTensor, CppTensorToMesh, MeshDevice, MeshShape, MeshTensor

_FABRIC = {"config": None}  # the process-wide fabric config (ttnn's is global too)


class FabricConfig(enum.Enum):
    DISABLED = 0
    FABRIC_1D = 1
    FABRIC_1D_RING = 2
    FABRIC_2D = 3


def set_fabric_config(config, reliability_mode=None, num_planes=None, fabric_tensix_config=None,
                      fabric_udm_mode=None, fabric_manager_mode=None, router_config=None) -> None:
    """The fabric config meshes opened from now on get (DISABLED: none)."""
    if not isinstance(config, FabricConfig):
        raise TypeError(f"set_fabric_config: expected a ttnn.FabricConfig, got {type(config).__name__}")
    _FABRIC["config"] = None if config is FabricConfig.DISABLED else config


def fabric_config():
    return _FABRIC["config"]


class PlacementShard:
    def __init__(self, dim: int, /):
        self.dim = int(dim)


class PlacementReplicate:
    def __init__(self):
        self.dim = None


class MeshMapperConfig:
    def __init__(self, placements, mesh_shape_override=None, mesh_offset_override=None):
        self.placements = list(placements)


class MeshComposerConfig:
    def __init__(self, dims, mesh_shape_override=None, mesh_offset_override=None):
        self.dims, self.override = [int(d) for d in dims], mesh_shape_override


class _Mapper2D(CppTensorToMesh):
    """Split per mesh axis: placements[0] over the rows, placements[1] over the columns."""

    def __init__(self, mesh: MeshDevice, dims: list):
        super().__init__(mesh, None)
        self.dims = dims

    def pieces(self, tensor: torch.Tensor) -> list:
        rows, cols = self.mesh.shape[0], self.mesh.shape[1]
        out = []
        for r in range(rows):
            row = _chunk(tensor, self.dims[0], rows, r)
            out += [_chunk(row, self.dims[1], cols, c) for c in range(cols)]
        return out


class _Composer2D(CppMeshToTensor):
    def __init__(self, mesh: MeshDevice, dims: list, override):
        super().__init__(mesh, dims[0])
        self.dims, self.override = dims, override

    def join(self, pieces: list) -> torch.Tensor:
        rows, cols = self.mesh.shape[0], self.mesh.shape[1]
        keep_r, keep_c = (self.override[0], self.override[1]) if self.override is not None else (rows, cols)
        if keep_r > rows or keep_c > cols:
            raise RuntimeError(f"TT_FATAL: mesh_shape_override {self.override} exceeds the mesh {self.mesh.shape}")
        joined = [torch.cat([pieces[r * cols + c] for c in range(keep_c)], dim=self.dims[1]) for r in range(keep_r)]
        return torch.cat(joined, dim=self.dims[0])


def _chunk(tensor: torch.Tensor, dim, count: int, index: int) -> torch.Tensor:
    if dim is None:
        return tensor
    if tensor.shape[dim] % count:
        raise RuntimeError(f"TT_FATAL: create_mesh_mapper: dim {dim} of {list(tensor.shape)} does not split into "
                           f"{count} equal pieces")
    return torch.chunk(tensor, count, dim=dim)[index]


def create_mesh_mapper(mesh_device, config: MeshMapperConfig) -> CppTensorToMesh:
    """A host tensor split (or replicated) per mesh axis, one placement per axis."""
    if len(config.placements) != mesh_device.shape.dims():
        raise RuntimeError(f"TT_FATAL: {len(config.placements)} placements for a {mesh_device.shape}")
    return _Mapper2D(mesh_device, [p.dim for p in config.placements])


def create_mesh_composer(mesh_device, config: MeshComposerConfig) -> CppMeshToTensor:
    """The pieces of the (sub-)mesh joined on one dim per mesh axis (the dims must differ, as ttnn requires)."""
    if len(set(config.dims)) != len(config.dims):
        raise RuntimeError("TT_FATAL: dims must be unique")
    override = tuple(config.override) if isinstance(config.override, MeshShape) else None
    return _Composer2D(mesh_device, config.dims, override)


# --- the CCL ops ---------------------------------------------------------------------------------------------------
def _groups(mesh: MeshDevice, cluster_axis) -> list[list[int]]:
    """The chips that exchange data: along `cluster_axis` (0: each column, 1: each row), or all of them."""
    rows, cols = mesh.shape[0], mesh.shape[1] if mesh.shape.dims() > 1 else 1
    if cluster_axis is None:
        return [list(range(rows * cols))]
    if cluster_axis == 1:
        return [[r * cols + c for c in range(cols)] for r in range(rows)]
    if cluster_axis == 0:
        return [[r * cols + c for r in range(rows)] for c in range(cols)]
    raise RuntimeError(f"TT_FATAL: cluster_axis {cluster_axis} is not an axis of {mesh.shape}")


def _collective(name: str, tensor, cluster_axis, memory_config, combine) -> MeshTensor:
    from .ops_host import from_torch, to_torch

    if not isinstance(tensor, MeshTensor):
        raise RuntimeError(f"TT_FATAL: ttnn.{name} needs a tensor on a mesh of devices")
    mesh = tensor._mesh
    if not getattr(mesh, "fabric", None):
        raise RuntimeError("TT_FATAL: Trying to get un-initialized fabric context (set_fabric_config before "
                           "open_mesh_device)")
    if len(tensor.shape) < 2:
        raise RuntimeError(f"TT_FATAL: ttnn.{name}: input must be rank 2 or greater")
    results = [None] * len(mesh.chips)
    for group in _groups(mesh, cluster_axis):
        values = [to_torch(tensor._pieces[k]).float() for k in group]
        for position, k in enumerate(group):
            piece = tensor._pieces[k]
            results[k] = from_torch(combine(values, position), dtype=piece.dtype, layout=piece.layout,
                                    device=mesh.chips[k], memory_config=memory_config or piece.memory_config())
    return MeshTensor.of(results, mesh)


def all_reduce(input_tensor, *, cluster_axis=None, subdevice_id=None, memory_config=None, num_links=None,
               topology=None):
    """Every chip along `cluster_axis` gets the sum of their pieces."""
    return _collective("all_reduce", input_tensor, cluster_axis, memory_config,
                       lambda values, _: torch.stack(values).sum(0))


def reduce_scatter(input_tensor, dim: int, *, cluster_axis=None, subdevice_id=None, memory_config=None,
                   intermediate_memory_config=None, output_tensor=None, num_links=None, topology=None,
                   chunks_per_sync=None, num_workers_per_link=None, num_buffers_per_channel=None,
                   compute_kernel_config=None, use_l1_small_for_semaphores=False):
    """Chip i of each group gets the i-th piece (on `dim`) of the group's sum."""
    def piece(values, position):
        total = torch.stack(values).sum(0)
        if total.shape[dim] % len(values):
            raise RuntimeError(f"TT_FATAL: reduce_scatter: dim {dim} of {list(total.shape)} does not split "
                               f"over {len(values)} devices")
        return torch.chunk(total, len(values), dim=dim)[position]
    return _collective("reduce_scatter", input_tensor, cluster_axis, memory_config, piece)


def all_gather(input_tensor, dim: int, *, cluster_axis=None, memory_config=None, output_tensor=None,
               subdevice_id=None, sub_core_grids=None, num_links=None, topology=None, chunks_per_sync=None,
               num_workers_per_link=None, num_buffers_per_channel=None, use_l1_small_for_semaphores=False):
    """Every chip of each group gets the group's pieces concatenated on `dim`."""
    return _collective("all_gather", input_tensor, cluster_axis, memory_config,
                       lambda values, _: torch.cat(values, dim=dim))
