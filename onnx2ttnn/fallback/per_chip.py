"""Host fallbacks and host regions in a data-parallel program: each runs once per chip, on that chip's piece.

A data-parallel program is the one-chip program at batch / chips (docs/design.md §6.19), and its host helpers
take one chip's shapes (their constant arguments, the reshapes around them).  So the program keeps a host value
that a host computation reads or writes as the list of the chips' pieces, and runs every host step once per
piece with the one-chip program's attributes unchanged.  place-on-mesh marks the nodes (`_pieces`, read by the
emitter):
- a download feeding a host computation reads the mesh tensor joined on its split dim d (its composer) and
  splits the result back into the chips' pieces along d: `_pieces = (chips, d)`;
- a host fallback (host_compute) or host region runs once per piece: `_pieces = (chips, -1)`; a graph input it
  reads directly (the caller's whole batch) is split on dim 0;
- the upload of its result joins the pieces on the device tensor's split dim j and uploads them with
  shard_tensor_to_mesh_mapper(dim=j), so each chip receives its own piece: `_pieces = (chips, j)`;
- a host result returned as a graph output (host_output) joins the pieces on the output's batch dim k:
  `_pieces = (chips, k)`.
A host computation that reads no split value (parameters only) runs once and carries no `_pieces`.  Refused,
one error each: a host computation reading a device tensor every chip holds whole (replicated: its pieces
would be copies, and ttnn reads a mesh tensor back only through a composer), a download that both feeds a
host computation and returns a graph output, and a host-computed graph output that does not depend on the
batch.
Before (1x2 mesh, Det on the host): `r_host = to_torch(r)`, `d_host = host_compute(r_host)`,
`d = from_torch(d_host)`; after: the three carry `_pieces` (2, 0), (2, -1), (2, 0), and the program reads
`r_host = [p.to(torch.float32) for p in ttnn.to_torch(r, mesh_composer=...).chunk(2, 0)]`,
`d_host = [host_det(a) for a in r_host]`, `d = ttnn.from_torch(torch.cat([p.to(...) for p in d_host], 0),
..., mesh_mapper=ttnn.shard_tensor_to_mesh_mapper(device, dim=0))`.
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.layout import MeshPlacement
from onnx2ttnn.ir.ttnn_ops import HOST_COMPUTE, HOST_OUTPUT, HOST_REGION
from onnx2ttnn.messages import escape_name

HOST_STEPS = (HOST_COMPUTE, HOST_REGION, HOST_OUTPUT)
EACH_PIECE = -1  # the dim of `_pieces` on a host computation: it runs per piece, joining nothing


def host_side(node: gs.Node) -> bool:
    """A host computation, or a download feeding one or an upload of its result (their `_fallback` note)."""
    return node.op in HOST_STEPS or (node.op in ("to_torch", "from_torch") and node.attrs.get("_fallback") is not None
                                     and not node.attrs.get("_param"))


def run_per_chip(node: gs.Node, chips: int, batch_dims: dict, source, placed: dict) -> None:
    """Mark a host-side node of a data-parallel program to run per chip (module docstring); `source` is its
    first split input (None: it reads replicated values only), `placed` the placements so far."""
    what = f"{node.attrs.get('_fallback') or node.op} {escape_name(node.attrs.get('_source', ''))}"
    if node.op == "to_torch" and source is None:
        raise ConversionError(f"data parallel: the host fallback {what} reads a device tensor every chip holds "
                              "whole (replicated); convert with --mesh 1x1")
    if source is None:
        return
    if node.op == "to_torch":
        if node.attrs.get("_output") is not None:
            raise ConversionError(f"data parallel: the host fallback {what} reads a graph output's download; "
                                  "convert with --mesh 1x1")
        node.attrs["_pieces"] = (chips, placed[id(node.inputs[0])].dim)
    elif node.op == "from_torch":
        node.attrs["_pieces"] = (chips, placed[id(node.outputs[0])].dim)
    elif node.op == HOST_OUTPUT:
        name = node.attrs.get("_output", "")
        if name not in batch_dims:
            raise ConversionError(f"data parallel: output {escape_name(name)} does not depend on the batch")
        placed[id(node.outputs[0])] = MeshPlacement(batch_dims[name])
        node.attrs["_pieces"] = (chips, batch_dims[name])
    else:
        node.attrs["_pieces"] = (chips, EACH_PIECE)
