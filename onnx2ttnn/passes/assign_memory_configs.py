"""assign-memory-configs: (the last pass) each op's placement arguments, derived from its output layout, verified.

Reads: the TTNNLayout of every node output (the single source of truth).  Writes: the node attribute
`memory_config` of every ttnn node that produces a device tensor and takes the argument, and the
`slice_config` of every conv2d writing L1 (ttnn.Conv2dL1FullSliceConfig: the all-in-L1 path, without which
a DRAM input makes conv2d write DRAM, ir/ttnn_ops/conv_pool.py).  Then a verifier checks that every stored
attribute equals what the layout derives, and that none is missing.
On a mesh (a layout with `mesh=`), uploads get `mesh_mapper` (ttnn.replicate_tensor_to_mesh_mapper or
ttnn.shard_tensor_to_mesh_mapper(device, dim=d) from the output's placement) and downloads `mesh_composer`
(ttnn.concat_mesh_to_tensor_composer(device, dim=d), d the device tensor's sharded dim).  With a tensor-parallel
part on a mesh of several rows, uploads take `ttnn.create_mesh_mapper(device, ttnn.MeshMapperConfig([row
placement, column placement]))`; downloads of a tensor-parallel program (replicated along the columns) take
`ttnn.create_mesh_composer(device, ttnn.MeshComposerConfig([d, e], ttnn.MeshShape(rows, 1)))`: the first
column's pieces, joined on the batch dim d (e: any other dim, the one piece of that column).
Before: `y = relu(x)` with `y: tile<bf16> l1 interleaved`; after: `relu(x, memory_config=L1 interleaved)`.
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.errors import VerificationError
from onnx2ttnn.ir.graph import DEVICE, Module, TTNNCall, TTNNRef, layout_of
from onnx2ttnn.ir.layout import memory_config_of
from onnx2ttnn.ir.ttnn_ops import op_info
from onnx2ttnn.passes.base import Pass, PassContext

L1_FULL_SLICE_CONFIG = TTNNRef("Conv2dL1FullSliceConfig")


class AssignMemoryConfigs(Pass):
    name = "assign-memory-configs"

    def run(self, module: Module, ctx: PassContext) -> None:
        count = slices = 0
        for node in module.graph.nodes:
            derived = _derived(node)
            if derived is not None:
                node.attrs["memory_config"] = derived
                count += 1
            for name, value in _derived_mesh(node, module.mesh[0], module.tp).items():
                node.attrs[name] = value
            slice_config = _derived_slice_config(node)
            if slice_config is not None:
                node.attrs["slice_config"] = slice_config
                slices += 1
        verify_memory_configs(module.graph, module.mesh[0], module.tp)
        module.notes[self.name] = {"memory_configs": count, "l1_full_convs": slices}


def _derived(node: gs.Node):
    """The memory config this node's output layout calls for (None if the op takes none)."""
    if not op_info(node.op).memory_config or not node.outputs:
        return None
    layout = layout_of(node.outputs[0])
    return memory_config_of(layout) if layout is not None else None


def _derived_mesh(node: gs.Node, rows: int = 1, tp: int = 1) -> dict:
    """{mesh_mapper: ...} of an upload, {mesh_composer: ...} of a download, from the layouts' placements
    (`rows` of the mesh, `tp` chips along its columns sharing each layer)."""
    if node.op == "from_torch":
        layout = layout_of(node.outputs[0])
        if layout is None or layout.mesh is None or not layout.on_device:
            return {}
        return {"mesh_mapper": _mapper(layout.mesh, rows, tp)}
    if node.op == "to_torch":
        layout = layout_of(node.inputs[0])
        if layout is None or layout.mesh is None or (layout.mesh.replicated and tp == 1):
            return {}
        if tp == 1:
            return {"mesh_composer": TTNNCall("concat_mesh_to_tensor_composer", DEVICE, dim=layout.mesh.dim)}
        dim = layout.mesh.dim or 0
        other = 1 if dim == 0 else 0
        config = TTNNCall("MeshComposerConfig", [dim, other], TTNNCall("MeshShape", rows, 1))
        return {"mesh_composer": TTNNCall("create_mesh_composer", DEVICE, config)}
    return {}


def _mapper(placement, rows: int, tp: int) -> TTNNCall:
    """The mesh mapper uploading a tensor to `placement`."""
    if placement.replicated:
        return TTNNCall("replicate_tensor_to_mesh_mapper", DEVICE)
    if tp == 1 or rows == 1:
        dim = placement.dim if placement.dim is not None else placement.tp
        return TTNNCall("shard_tensor_to_mesh_mapper", DEVICE, dim=dim)
    parts = [TTNNCall("PlacementReplicate") if d is None else TTNNCall("PlacementShard", d)
             for d in (placement.dim, placement.tp)]
    return TTNNCall("create_mesh_mapper", DEVICE, TTNNCall("MeshMapperConfig", parts))


def _derived_slice_config(node: gs.Node):
    """An op that takes slice_config (its entry's `slice_config`: conv2d) writing L1 takes its all-in-L1 path
    (ttnn.Conv2dL1FullSliceConfig); None otherwise."""
    if not op_info(node.op).slice_config or not node.outputs:
        return None
    layout = layout_of(node.outputs[0])
    return L1_FULL_SLICE_CONFIG if layout is not None and layout.buffer == "l1" else None


def verify_memory_configs(graph: gs.Graph, rows: int = 1, tp: int = 1) -> None:
    """Every device-producing node's `memory_config` (and conv2d's `slice_config`) equals what its layout
    derives."""
    for index, node in enumerate(graph.nodes):
        mesh = _derived_mesh(node, rows, tp)
        pairs = [("memory_config", _derived(node)), ("slice_config", _derived_slice_config(node))]
        pairs += [(name, mesh.get(name)) for name in ("mesh_mapper", "mesh_composer")
                  if name in mesh or name in node.attrs]
        for name, derived in pairs:
            stored = node.attrs.get(name)
            if derived != stored:
                where = node.attrs.get("_source", "")
                raise VerificationError(
                    f"node {index} ttnn.{node.op} (from {where!r}): {name} {stored} does not match its "
                    f"output layout {layout_of(node.outputs[0]) if node.outputs else None} (expects {derived})"
                )
