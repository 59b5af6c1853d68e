"""place-on-mesh: on a multi-chip mesh, each tensor's placement over the chips, in its layout (dp and tp).

Reads: Module.mesh and Module.batch_dims (frontend/batch_split.py: the graph is the per-chip program, each
output's batch dim), the layouts and the notes `_output`, `_shape`, `_nhwc`.  Writes: `mesh=` in the layout
of every tensor that has one (ir/layout.MeshPlacement); `_shape` / `_nhwc` of downloads (and `_shape` of input
uploads) become the whole batch's, as the host holds the chips' pieces joined.  Must hold: layouts assigned.
Host fallbacks and host regions run once per chip on that chip's piece (fallback/per_chip.py: the downloads
feeding them, they and the uploads of their results carry `_pieces`).  A one-chip program is left alone.
Placements: parameters and what only they feed are `replicated`; a graph input's upload is `shard0`
(the batch, dim 0: graph inputs carry no layout, and the emitter gives the caller dim 0 times the chips); an
op reading a split tensor gives `shard<j>`, j its batch dim (a permute moves it; otherwise the first dim
after as many elements as before the input's batch dim); a download's host result is `shard<k>`, k the ONNX
output's batch dim.
Tensor parallel (Module.tp > 1): the batch splits over the mesh's rows only (`shard<d>@0` on a 2-D mesh, none on
1xN), and each tensor the note `_tp` (split-tensor-parallel) marks gets its part along axis 1 (`shard<d>@1`,
`partial@1`); the rest is replicated along axis 1.
Before: `x_dev = from_torch(x)` with `x: [1, 128]`, `x_dev: tile<bf16> l1 interleaved`, `w: tile<bf16> dram
interleaved`; after (1x2 mesh): `x_dev: tile<bf16> l1 interleaved mesh=shard0`, `w: ... mesh=replicated`
(and the program takes x as [2, 128]).
"""
from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.fallback.per_chip import host_side, run_per_chip
from onnx2ttnn.ir.graph import Module, layout_of, set_layout
from onnx2ttnn.ir.layout import REPLICATED, MeshPlacement
from onnx2ttnn.ir.ttnn_ops import HOST_COMPUTE, HOST_OUTPUT, HOST_REGION
from onnx2ttnn.passes.base import Pass, PassContext


class PlaceOnMesh(Pass):
    name = "place-on-mesh"

    def run(self, module: Module, ctx: PassContext) -> None:
        if module.chips == 1:
            return
        graph = module.graph
        if module.tp > 1:
            _refuse_host_computation(graph)
        placed = _batch_placements(module) if module.dp > 1 else {}
        split = {id(t): part for node in graph.nodes for t, part in zip(node.outputs, node.attrs.get("_tp", ()))}
        axis = 0 if module.tp > 1 else None
        count = 0
        seen: set[int] = set()  # tensors by identity (a download's host result may share its input's name)
        for tensor in (t for node in graph.nodes for t in list(node.inputs) + list(node.outputs)):
            layout = layout_of(tensor)
            if layout is not None and id(tensor) not in seen:
                seen.add(id(tensor))
                dim = placed.get(id(tensor), REPLICATED).dim
                placement = MeshPlacement(dim, axis if dim is not None else None, split.get(id(tensor)))
                set_layout(tensor, layout.with_(mesh=placement))
                count += 1
        module.notes[self.name] = {"mesh": "x".join(map(str, module.mesh)), "placed": count}


def _batch_placements(module: Module) -> dict:
    """Where each tensor's batch rows lie (data parallel), by tensor identity; host steps of a data-parallel
    program run once per chip (fallback/per_chip.py)."""
    graph = module.graph
    placed: dict[int, MeshPlacement] = {id(t): MeshPlacement(0) for t in graph.inputs}
    for node in graph.nodes:
        if node.op == "to_torch" and not host_side(node):
            _download(node, module, placed)
            continue
        source = _sharded_input(node, placed)
        if node.op == "from_torch" and source is not None and not host_side(node):
            _upload(node, module.dp)
        for tensor in node.outputs:
            placed[id(tensor)] = REPLICATED if source is None else _follow(node, source, tensor, placed)
        if host_side(node):
            run_per_chip(node, module.dp, module.batch_dims, source, placed)
    return placed


def _refuse_host_computation(graph: gs.Graph) -> None:
    """Tensor parallel programs keep every ONNX op on the device (a host step would need each chip's part)."""
    hosted = sorted({n.attrs.get("_fallback") or n.op for n in graph.nodes
                     if n.op in (HOST_COMPUTE, HOST_REGION, HOST_OUTPUT)})
    if hosted:
        raise ConversionError("tensor parallel programs cannot compute ONNX ops on the host yet (host fallbacks "
                              f"of {', '.join(map(repr, hosted))}); convert with --parallel dp or --mesh 1x1")


def _sharded_input(node: gs.Node, placed: dict):
    """The first input whose placement is sharded (None: all replicated)."""
    for tensor in node.inputs:
        placement = placed.get(id(tensor))
        if placement is not None and not placement.replicated:
            return tensor
    return None


def _follow(node: gs.Node, source: gs.Tensor, out: gs.Tensor, placed: dict) -> MeshPlacement:
    """Where the batch rows of `source` lie in `out` (module docstring)."""
    dim = placed[id(source)].dim
    if node.op == "permute" and node.attrs.get("dims") is not None:
        return MeshPlacement(list(node.attrs["dims"]).index(dim))
    if source.shape is None or out.shape is None:
        return MeshPlacement(0)
    outer = math.prod(int(d) for d in source.shape[:dim])
    for j in range(len(out.shape)):
        if math.prod(int(d) for d in out.shape[:j]) == outer:
            return MeshPlacement(j)
    return MeshPlacement(min(dim, max(len(out.shape) - 1, 0)))


def _upload(node: gs.Node, chips: int) -> None:
    """A graph input's upload reshapes the whole batch on the host: `_shape` scaled on dim 0 when the device
    shape differs from the host one (the emitter's rule, emit/python._upload_shape)."""
    host, out = node.inputs[0], node.outputs[0]
    shape = node.attrs.get("_shape")
    if shape is None and host.shape is not None and out.shape is not None and tuple(host.shape) != tuple(out.shape):
        shape = tuple(int(d) for d in out.shape)
    if shape is not None:
        node.attrs["_shape"] = (int(shape[0]) * chips,) + tuple(int(d) for d in shape[1:])


def _download(node: gs.Node, module: Module, placed: dict) -> None:
    """A download joins the chips' pieces: its host result is the whole batch, `_shape` / `_nhwc` scaled."""
    host = node.outputs[0]
    name = node.attrs.get("_output", "")
    device = placed.get(id(node.inputs[0]), REPLICATED)
    if name not in module.batch_dims or device.replicated:
        raise ConversionError(f"data parallel: output {name!r} does not depend on the batch")
    if math.prod(int(d) for d in node.inputs[0].shape[:device.dim]) != 1:
        raise ConversionError(f"data parallel: output {name!r} comes from a device tensor whose batch rows "
                              "interleave; it cannot be joined from the chips' pieces")
    dim, chips = module.batch_dims[name], module.dp
    whole = tuple(int(d) * (chips if k == dim else 1) for k, d in enumerate(host.shape))
    joined = [int(d) * (chips if k == device.dim else 1) for k, d in enumerate(node.inputs[0].shape)]
    if node.attrs.get("_nhwc") is not None:
        n, h, w, c = node.attrs["_nhwc"]
        node.attrs["_nhwc"] = (n * chips, h, w, c)
        joined = [n * chips, c, h, w]
    if node.attrs.get("_shape") is not None or tuple(joined) != whole:
        node.attrs["_shape"] = whole
    placed[id(host)] = MeshPlacement(dim)
