"""A mesh of simulated chips: open_mesh_device, mesh tensors, mappers and composers.

A MeshDevice holds one simulated Device per chip (each with its own L1 and DRAM allocators, so memory and
leaks are per chip, as on the real mesh: docs/ttnn-facts.md §26).  A MeshTensor holds one Tensor per chip.
`lift` wraps every ttnn op of the simulator: a call given a mesh tensor or a mesh device runs once per chip,
on that chip's pieces, and its tensor results become mesh tensors again.  from_torch splits or replicates a
host tensor with a mesh mapper; to_torch joins the pieces with a mesh composer.  No op moves data between
chips here: the CCL ops, the fabric config and the 2-D mappers and composers are sim/_ccl.py's.
"""
from __future__ import annotations

import functools

import torch

from ._device import Device
from ._tensor import Tensor
from ._types import StorageType


class MeshShape:
    """Rows x columns of chips."""

    def __init__(self, s0, s1=None, s2=None):
        dims = list(s0) if s1 is None else [s0, s1] + ([s2] if s2 is not None else [])
        self._dims = tuple(int(d) for d in dims)

    def dims(self) -> int:
        return len(self._dims)

    def mesh_size(self) -> int:
        size = 1
        for d in self._dims:
            size *= d
        return size

    def __getitem__(self, index: int) -> int:
        return self._dims[index]

    def __iter__(self):
        return iter(self._dims)

    def __repr__(self) -> str:
        return f"MeshShape([{', '.join(map(str, self._dims))}])"


class MeshDevice:
    """Several simulated chips opened together; each chip allocates on its own."""

    def __init__(self, shape: MeshShape, chips: list[Device], fabric=None):
        self.shape, self.chips, self.fabric = shape, chips, fabric  # fabric: the config it was opened with

    @property
    def is_open(self) -> bool:
        return all(chip.is_open for chip in self.chips)

    @property
    def leaks(self) -> list:
        """Every chip's buffers still allocated when the mesh was closed (leaks_per_chip says whose)."""
        return [leak for chip in self.chips for leak in chip.leaks]

    def leaks_per_chip(self) -> list[list]:
        return [list(chip.leaks) for chip in self.chips]

    def get_num_devices(self) -> int:
        return len(self.chips)

    def get_devices(self) -> list[Device]:
        return list(self.chips)

    def compute_with_storage_grid_size(self):
        return self.chips[0].compute_with_storage_grid_size()

    @property
    def core_grid(self):
        return self.chips[0].core_grid

    def dram_grid_size(self):
        return self.chips[0].dram_grid_size()

    def arch(self) -> str:
        return self.chips[0].arch()

    def __repr__(self) -> str:
        return f"<simulated ttnn mesh {self.shape} of {len(self.chips)} {self.chips[0].spec.name} chips>"


class MeshTensor(Tensor):
    """A tensor on a mesh: one piece (a Tensor) per chip; metadata are the first chip's."""

    __slots__ = ("_pieces", "_mesh")

    @classmethod
    def of(cls, pieces: list, mesh: MeshDevice) -> "MeshTensor":
        first = pieces[0]
        t = object.__new__(cls)
        for slot in Tensor.__slots__[:-1]:
            setattr(t, slot, getattr(first, slot))
        t._buffer, t._pieces, t._mesh = None, list(pieces), mesh
        return t

    def storage_type(self) -> StorageType:
        return self._pieces[0].storage_type()

    def device(self):
        return self._mesh

    def is_allocated(self) -> bool:
        return all(piece.is_allocated() for piece in self._pieces)

    def buffer_address(self) -> int:
        return self._pieces[0].buffer_address()

    def deallocate(self, force: bool = False) -> None:
        for piece in self._pieces:
            piece.deallocate(force)

    def __repr__(self) -> str:
        return f"ttnn.Tensor(on a mesh of {len(self._pieces)} chips: {self._pieces[0]._describe()})"


class CppTensorToMesh:
    """How from_torch spreads a host tensor over the chips: split on `dim`, or replicated (dim None)."""

    def __init__(self, mesh: MeshDevice, dim=None):
        self.mesh, self.dim = mesh, dim


class CppMeshToTensor:
    """How to_torch joins the chips' pieces: concatenated on `dim`."""

    def __init__(self, mesh: MeshDevice, dim: int):
        self.mesh, self.dim = mesh, dim


def open_mesh_device(mesh_shape=None, l1_small_size=0, trace_region_size=0, num_command_queues=1,
                     dispatch_core_config=None, offset=None, physical_device_ids=(), worker_l1_size=0):
    """A mesh of simulated chips of runtime.device_spec(), `mesh_shape` (default: all its chips)."""
    from . import _ccl, runtime

    spec = runtime.device_spec()
    shape = mesh_shape if mesh_shape is not None else MeshShape(spec.meshes[0])
    if not isinstance(shape, MeshShape):
        raise TypeError(f"open_mesh_device: mesh_shape must be a ttnn.MeshShape, got {type(shape).__name__}")
    if shape.mesh_size() > spec.chips or (shape.dims() == 2 and not spec.fits_mesh(shape[0], shape[1])):
        raise RuntimeError(f"TT_FATAL: the system mesh of {spec.name} ({spec.chips} chips) cannot hold a {shape}")
    return MeshDevice(shape, [Device(spec, k, l1_small_size, trace_region_size) for k in range(shape.mesh_size())],
                      _ccl.fabric_config())


def close_mesh_device(mesh_device) -> None:
    """Close every chip: frees every buffer and records, per chip, the ones still allocated (leaks)."""
    from . import runtime

    if not isinstance(mesh_device, MeshDevice):
        raise TypeError(f"close_mesh_device: expected a mesh device, got {type(mesh_device).__name__}")
    if mesh_device.is_open:
        for chip in mesh_device.chips:
            chip.close()
        runtime._record_closed(mesh_device)


def shard_tensor_to_mesh_mapper(mesh_device, dim: int) -> CppTensorToMesh:
    """Split a host tensor on `dim` into one equal piece per chip (chip i gets the i-th)."""
    return CppTensorToMesh(mesh_device, int(dim))


def replicate_tensor_to_mesh_mapper(mesh_device) -> CppTensorToMesh:
    """Give every chip the whole tensor."""
    return CppTensorToMesh(mesh_device)


def concat_mesh_to_tensor_composer(mesh_device, dim: int) -> CppMeshToTensor:
    """Join the chips' pieces by concatenation on `dim`."""
    return CppMeshToTensor(mesh_device, int(dim))


def get_device_tensors(tensor):
    """The pieces of a mesh tensor, one per chip ([tensor] for a one-chip tensor)."""
    return list(tensor._pieces) if isinstance(tensor, MeshTensor) else [tensor]


def map_to_mesh(upload, tensor: torch.Tensor, mesh: MeshDevice, mapper, kwargs: dict, on_host: bool = False):
    """from_torch onto a mesh: `upload(piece, device=chip, **kwargs)` of each chip's piece (`on_host`: the
    pieces as host tensors, `upload(piece, **kwargs)`, for to_device to place on their chips)."""
    if mapper is not None and not isinstance(mapper, CppTensorToMesh):
        raise TypeError(f"from_torch: mesh_mapper must come from a ttnn mesh mapper, got {type(mapper).__name__}")
    chips = mesh.chips
    if hasattr(mapper, "pieces"):  # a 2-D mapper (sim/_ccl.py create_mesh_mapper)
        pieces = mapper.pieces(tensor)
    elif mapper is None or mapper.dim is None:
        pieces = [tensor] * len(chips)
    else:
        if tensor.shape[mapper.dim] % len(chips):
            raise RuntimeError(f"TT_FATAL: shard_tensor_to_mesh_mapper: dim {mapper.dim} of {list(tensor.shape)} "
                               f"does not split into {len(chips)} equal pieces")
        pieces = torch.chunk(tensor, len(chips), dim=mapper.dim)
    if on_host:
        return MeshTensor.of([upload(piece, **kwargs) for piece in pieces], mesh)
    return MeshTensor.of([upload(piece, device=chip, **kwargs) for piece, chip in zip(pieces, chips)], mesh)


def compose(download, tensor: MeshTensor, composer, dtype):
    """to_torch of a mesh tensor: the chips' pieces joined by `composer` (required)."""
    if not isinstance(composer, CppMeshToTensor):
        raise RuntimeError(f"TT_FATAL: to_torch of a tensor on {len(tensor._pieces)} chips needs a mesh_composer")
    if hasattr(composer, "join"):  # a composer of create_mesh_composer (sim/_ccl.py)
        return composer.join([download(piece, dtype) for piece in tensor._pieces])
    return torch.cat([download(piece, dtype) for piece in tensor._pieces], dim=composer.dim)


def _on_mesh(value) -> MeshDevice | None:
    if isinstance(value, MeshTensor):
        return value._mesh
    if isinstance(value, MeshDevice):
        return value
    if isinstance(value, (list, tuple)):
        for item in value:
            mesh = _on_mesh(item)
            if mesh is not None:
                return mesh
    return None


def _piece(value, chip: int):
    if isinstance(value, MeshTensor):
        return value._pieces[chip]
    if isinstance(value, MeshDevice):
        return value.chips[chip]
    if isinstance(value, list):
        return [_piece(item, chip) for item in value]
    if isinstance(value, tuple):
        return tuple(_piece(item, chip) for item in value)
    return value


def _join(results: list, mesh: MeshDevice):
    first = results[0]
    if isinstance(first, Tensor):
        return MeshTensor.of(results, mesh)
    if isinstance(first, (list, tuple)) and type(first) in (list, tuple):
        return type(first)(_join([r[i] for r in results], mesh) for i in range(len(first)))
    return first


def lift(fn):
    """`fn` run once per chip when an argument is on a mesh (module docstring); else `fn` itself."""
    @functools.wraps(fn)
    def per_chip(*args, **kwargs):
        mesh = _on_mesh(args) or _on_mesh(tuple(kwargs.values()))
        if mesh is None:
            return fn(*args, **kwargs)
        results = [fn(*_piece(args, c), **{k: _piece(v, c) for k, v in kwargs.items()})
                   for c in range(len(mesh.chips))]
        return _join(results, mesh)
    return per_chip
