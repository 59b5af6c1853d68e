"""Rendering of host steps that run once per chip in a data-parallel program (the `_pieces` note;
fallback/per_chip.py says why and which nodes carry it).

A host value a host computation reads or writes is a list of the chips' pieces.  Each function takes the
emitter (emit/python.PythonEmitter) and renders one node's text from its attributes:
- `download(em, node, call, suffix)`: `[p<suffix> for p in <call>.chunk(chips, dim)]` (call: the to_torch with
  its composer; suffix: the one-chip program's reshape and cast of each piece);
- `per_piece(em, node, render)`: `[<render(names)> for a, b in zip(A, B)]`, the helper or region call with
  each split input named by its loop variable (a graph input: the caller's whole batch, split on dim 0);
- `joined(em, node, source, suffix)`: `torch.cat([p<suffix> for p in <source>], dim)`, the upload of a host
  result or a host-computed graph output.

And every upload through a mesh mapper: `mesh_upload(em, node, attrs)`.
"""
from __future__ import annotations

from typing import Callable

import onnx_graphsurgeon as gs

from onnx2ttnn.emit.literals import literal


def pieces_of(node: gs.Node):
    """(chips, dim) of a node that works on the chips' pieces, else None."""
    return node.attrs.get("_pieces")


def pieces(em, tensor: gs.Tensor) -> str:
    """An expression iterating `tensor`'s per-chip pieces ("" when the tensor is one whole value)."""
    producer = tensor.inputs[0] if tensor.inputs else None
    if producer is not None:
        return em.name(tensor) if pieces_of(producer) else ""
    if em.module.chips > 1 and any(tensor is t for t in em.module.graph.inputs):
        return f"{em.name(tensor)}.chunk({em.module.chips}, 0)"
    return ""


def download(em, node: gs.Node, call: str, suffix: str) -> str:
    chips, dim = pieces_of(node)
    piece = em.names.create("piece")
    return f"[{piece}{suffix} for {piece} in {call}.chunk({chips}, {dim})]"


def per_piece(em, node: gs.Node, render: Callable[[dict], str]) -> str:
    split = list({id(t): t for t in node.inputs if pieces(em, t)}.values())
    names = {id(t): em.names.create("piece") for t in split}
    sources = [pieces(em, t) for t in split]
    if len(split) == 1:
        loop = f"for {names[id(split[0])]} in {sources[0]}"
    else:
        loop = f"for {', '.join(names[id(t)] for t in split)} in zip({', '.join(sources)})"
    return f"[{render(names)} {loop}]"


def joined(em, node: gs.Node, source: str, suffix: str) -> str:
    _, dim = pieces_of(node)
    piece = em.names.create("piece")
    return f"torch.cat([{piece}{suffix} for {piece} in {source}], {dim})"


def mesh_upload(em, node: gs.Node, attrs: dict) -> str:
    """`ttnn.to_device(ttnn.from_torch(..., mesh_mapper=m), device, memory_config=mc)`: an upload through a mesh
    mapper converted on the host.  Given a device and a mesh mapper, from_torch converts a float torch tensor to
    a bf16 / float32 tensor on the device: it allocates each chip's piece in the torch tensor's dtype
    ROW_MAJOR, tilizes it into a second buffer, then typecasts it (and untilizes it for a ROW_MAJOR result), all
    in the target memory (4x the bf16 piece in L1 at the peak, and the device programs' circular buffers at
    the bottom of L1), which the memory plan does not hold (docs/ttnn-facts.md §36).  From a host tensor,
    to_device allocates the tensor alone and runs no device program."""
    placed = {k: attrs[k] for k in ("device", "memory_config") if k in attrs}
    where = literal(placed.pop("device")) + "".join(f", {k}={literal(v)}" for k, v in placed.items())
    return f"ttnn.to_device({em.call(node, host=True)}, {where})"
