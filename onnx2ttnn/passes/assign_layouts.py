"""assign-layouts: give every tensor of the ttnn graph a TTNNLayout that honours its ops' requirements.

Reads: ttnn nodes and the op table (ir/ttnn_ops).  Writes: `ttnn_layout` on every tensor: page layout
(uploads take the layout their consumers need, other ops their natural one), dtype (float tensors in the
compute dtype; integer uploads int32, uint32 where they are indices, and in the float dtype only when every
consumer casts them to it (the same rounding the cast makes); integers a rule pins with `_dtype`;
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
from onnx2ttnn.ir.ttnn_ops import Dtype, InDtype, OpInfo, Page, node_input_layout, op_info
from onnx2ttnn.ir.graph import Module
from onnx2ttnn.passes.base import Pass, PassContext


class AssignLayouts(Pass):
    name = "assign-layouts"

    def run(self, module: Module, ctx: PassContext) -> None:
        compute = "f32" if module.compute_dtype == "fp32" else "bf16"
        for node in module.graph.nodes:
            for out in node.outputs:
                set_layout(out, self._layout(node, out, compute))

    def _layout(self, node: gs.Node, out: gs.Tensor, compute: str) -> TTNNLayout:
        info = op_info(node.op)
        dtype = node.attrs.get("_dtype") or _dtype_of(out, compute)  # a rule may pin the dtype (signed ints)
        if node.op == "from_torch" and dtype == "u32":
            dtype = _integer_upload(out, compute)
        if not node.attrs.get("_dtype"):
            dtype = _followed_dtype(node, info, dtype)
        if info.index_output is not None and out is node.outputs[info.index_output]:
            dtype = _index_dtype(node, compute)
        if info.output_page == Page.HOST:
            return HOST_F32
        if node.op == "from_torch":
            if node.attrs.get("_host"):  # host constants of a host fallback keep integers exact
                return TTNNLayout("row_major", "i32" if np.dtype(out.dtype).kind in "iu" else "f32", "host", None)
            return TTNNLayout(_wanted_page(out, dtype), dtype)
        page = info.output_page
        if page == Page.SAME:  # like input 0 as the op will read it (a rule may pin it: pad asks for ROW_MAJOR)
            pinned = node_input_layout(node, 0)
            page = pinned if pinned in (Page.TILE, Page.ROW_MAJOR) else layout_of(node.inputs[0]).page
        if page not in (Page.TILE, Page.ROW_MAJOR):
            page = Page.TILE
        if dtype in ("u32", "i32") and page == Page.TILE and info.integer_page is not None:
            page = info.integer_page  # embedding gathers integer rows ROW_MAJOR
        return TTNNLayout(page, dtype)


def _dtype_of(tensor: gs.Tensor, compute: str) -> str:
    kind = np.dtype(tensor.dtype).kind
    return compute if kind in "fb" else "u32"


def _followed_dtype(node: gs.Node, info: OpInfo, dtype: str) -> str:
    """The output dtype when the op's entry says it follows an input (Dtype.FOLLOWS_INTEGER_INPUT: an integer
    input 0 keeps the result integer; Dtype.LIKE_VALUES: `where`'s first tensor value, else its predicate)."""
    if info.output_dtype == Dtype.LIKE_VALUES:
        return layout_of(node.inputs[1] if len(node.inputs) > 1 else node.inputs[0]).dtype
    if info.output_dtype == Dtype.FOLLOWS_INTEGER_INPUT and node.inputs:
        first = layout_of(node.inputs[0])
        if first is not None and first.dtype in ("u32", "i32"):
            return first.dtype
    return dtype


def _index_dtype(node: gs.Node, compute: str) -> str:
    """What real ttnn.topk returns for indices (the op's `index_output`): UINT32 for float32 inputs or a
    tile-padded reduced dim above 65536, else UINT16 (the op's documentation)."""
    shape = node.inputs[0].shape
    dim = int(node.attrs.get("dim", -1)) % len(shape)
    padded = -(-int(shape[dim]) // 32) * 32
    return "u32" if compute == "f32" or padded > 65536 else "u16"


def _feeds_indices(tensor: gs.Tensor) -> bool:
    """Whether the tensor reaches an input that takes indices (InDtype.INDICES: embedding's) directly or
    through ops that may return a view (reshape: the values pass unchanged)."""
    for consumer in tensor.outputs:
        info = op_info(consumer.op)
        if any(t is tensor and info.input_dtype(i) == InDtype.INDICES for i, t in enumerate(consumer.inputs)):
            return True
        if info.view and _feeds_indices(consumer.outputs[0]):
            return True
    return False


def _integer_upload(tensor: gs.Tensor, compute: str) -> str:
    """The device dtype of an uploaded integer tensor (a graph input, a constant, a host fallback's result):
    uint32 for indices (embedding), the float dtype when only casts to floats read it (uploading it as floats
    rounds it as the cast would, and saves the cast), else int32: integers stay integers."""
    if _feeds_indices(tensor):
        return "u32"
    readers = tensor.outputs
    if readers and all(c.op == "typecast" and not c.attrs.get("_dtype") and np.dtype(c.outputs[0].dtype).kind == "f"
                       for c in readers):
        return compute
    return "i32"


def _wanted_page(tensor: gs.Tensor, dtype: str) -> str:
    """The page layout an upload should have: what its consumers need (row-major if one needs it)."""
    needs = set()
    for consumer in tensor.outputs:
        for index, inp in enumerate(consumer.inputs):
            if inp is tensor:
                needs.add(node_input_layout(consumer, index))
    if Page.ROW_MAJOR in needs or dtype == "u32":
        return Page.ROW_MAJOR
    return Page.TILE
