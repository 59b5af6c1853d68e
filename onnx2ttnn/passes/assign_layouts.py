"""assign-layouts: give every tensor of the ttnn graph a TTNNLayout that honours its ops' requirements.

Reads: ttnn nodes and the op table (ir/ttnn_ops.py).  Writes: `ttnn_layout` on every tensor: page layout
(uploads take the layout their consumers need, other ops their natural one), dtype (float tensors in the
compute dtype, indices uint32, integer results of host fallbacks and integers a rule pins with `_dtype` int32;
`where` returns the dtype of its first tensor value, else its predicate's, and arithmetic and data movement
on an integer tensor keep its integer dtype, as ttnn does), buffer dram interleaved (the memory planner
refines it) or host.
Before: `x_dev = from_torch(x)` (no layout); after: `x_dev: tile<bf16> dram interleaved`.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import layout_of, set_layout
from onnx2ttnn.ir.layout import HOST_F32, TTNNLayout
from onnx2ttnn.ir.ttnn_ops import ROW_MAJOR, TILE, node_input_layout, op_info
from onnx2ttnn.ir.graph import Module
from onnx2ttnn.passes.base import Pass, PassContext


# ops whose result has input a's dtype on the device (no dtype argument): an integer input keeps them integer
FOLLOW_INPUT = frozenset({"add", "subtract", "multiply", "maximum", "minimum", "remainder", "fmod", "neg", "abs",
                          "clip", "reshape", "permute", "slice", "concat"})


class AssignLayouts(Pass):
    name = "assign-layouts"

    def run(self, module: Module, ctx: PassContext) -> None:
        compute = "f32" if ctx.options.dtype == "fp32" else "bf16"
        for node in module.graph.nodes:
            for out in node.outputs:
                set_layout(out, self._layout(node, out, compute))

    def _layout(self, node: gs.Node, out: gs.Tensor, compute: str) -> TTNNLayout:
        info = op_info(node.op)
        dtype = node.attrs.get("_dtype") or _dtype_of(out, compute)  # a rule may pin the dtype (signed ints)
        if node.op == "from_torch" and node.attrs.get("_fallback") and dtype == "u32":
            dtype = "u32" if _feeds_embedding_indices(out) else "i32"  # a host fallback's integer result
        elif node.op == "from_torch" and dtype == "u32" and _feeds_signed_ints(out):
            dtype = "i32"  # integers a rule computes with as int32 (negative indices)
        elif node.op == "from_torch" and dtype == "u32" and not _feeds_embedding_indices(out):
            dtype = compute  # integer inputs used as values (masks) are uploaded as floats
        if node.op == "where" and not node.attrs.get("_dtype"):
            dtype = layout_of(node.inputs[1] if len(node.inputs) > 1 else node.inputs[0]).dtype
        elif node.op in FOLLOW_INPUT and not node.attrs.get("_dtype") and node.inputs:
            first = layout_of(node.inputs[0])
            if first is not None and first.dtype in ("u32", "i32"):
                dtype = first.dtype
        if node.op == "topk" and out is node.outputs[1]:
            dtype = _topk_index_dtype(node, compute)
        if info.output_page == "host":
            return HOST_F32
        if node.op == "from_torch":
            if node.attrs.get("_host"):  # host constants of a host fallback keep integers exact
                return TTNNLayout("row_major", "i32" if np.dtype(out.dtype).kind in "iu" else "f32", "host", None)
            return TTNNLayout(_wanted_page(out, dtype), dtype)
        page = info.output_page
        if page == "same":  # like input 0 as the op will read it (a rule may pin it: pad asks for ROW_MAJOR)
            pinned = node_input_layout(node, 0)
            page = pinned if pinned in (TILE, ROW_MAJOR) else layout_of(node.inputs[0]).page
        if page not in (TILE, ROW_MAJOR):
            page = TILE
        if dtype in ("u32", "i32") and page == TILE and node.op == "embedding":
            page = ROW_MAJOR
        return TTNNLayout(page, dtype)


def _dtype_of(tensor: gs.Tensor, compute: str) -> str:
    kind = np.dtype(tensor.dtype).kind
    return compute if kind in "fb" else "u32"


def _topk_index_dtype(node: gs.Node, compute: str) -> str:
    """What real ttnn.topk returns for indices: UINT32 for float32 inputs or a tile-padded reduced dim above
    65536, else UINT16 (the op's documentation)."""
    shape = node.inputs[0].shape
    dim = int(node.attrs.get("dim", -1)) % len(shape)
    padded = -(-int(shape[dim]) // 32) * 32
    return "u32" if compute == "f32" or padded > 65536 else "u16"


def _feeds_embedding_indices(tensor: gs.Tensor) -> bool:
    """Whether the tensor reaches an embedding's indices directly or through reshapes."""
    return any((c.op == "embedding" and c.inputs[0] is tensor) or
               (c.op == "reshape" and _feeds_embedding_indices(c.outputs[0])) for c in tensor.outputs)


def _feeds_signed_ints(tensor: gs.Tensor) -> bool:
    """Whether an op the rules pinned to int32 reads the tensor."""
    return any(c.attrs.get("_dtype") == "i32" for c in tensor.outputs)


def _wanted_page(tensor: gs.Tensor, dtype: str) -> str:
    """The page layout an upload should have: what its consumers need (row-major if one needs it)."""
    needs = set()
    for consumer in tensor.outputs:
        for index, inp in enumerate(consumer.inputs):
            if inp is tensor:
                needs.add(node_input_layout(consumer, index))
    if ROW_MAJOR in needs or dtype == "u32":
        return ROW_MAJOR
    return TILE
