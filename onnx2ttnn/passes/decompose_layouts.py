"""decompose-layouts: insert the layout conversions ops need, and set the conversion calls' arguments.

Reads: layouts on every tensor and each op's entry in the op table (ir/ttnn_ops).  Writes: a `to_layout` node
wherever a producer's page layout differs from what a consumer needs (one per tensor and target, shared by all
consumers, never a round trip; concat's inputs are all brought to input 0's page); the `dtype`/`layout`/`device`
arguments an op's entry names (`layout_arguments`: from_torch, to_layout, typecast, embedding), derived from
their output layouts (and the torch dtype a host fallback's result is cast to before its upload); the `dtype`
of a comparison (`comparison`) whose output dtype differs from its input's (ttnn returns the mask in input a's
dtype unless told, e.g. UINT32 for an integer input); `_int_range` on the upload of an integer graph input
whose dtype can hold values its device dtype cannot (int64 into int32): the program checks them at upload
time rather than let them wrap; `_index_rows` instead on such an upload read only as the indices of
embeddings into tables of one row count: the program checks them against the rows (ONNX Gather's
[-rows, rows - 1]) and counts negative ones from the end on the host, before the uint32 upload.
Typecasts that change nothing are dropped.  A download (to_torch) of a TILE tensor whose padding at least
doubles its bytes, by more than a call costs, reads a ROW_MAJOR conversion of it instead (compact_download).
Before: `p = max_pool2d(x)  # row_major; y = relu(p)`; after: `p_tile = to_layout(p, TILE); y = relu(p_tile)`.
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

import numpy as np

from onnx2ttnn.ir.dtypes import UPLOAD_TORCH_DTYPE
from onnx2ttnn.ir.device import DeviceSpec
from onnx2ttnn.ir.graph import DEVICE, Module, TTNNRef, layout_of, replace_uses, set_layout, ttnn_node
from onnx2ttnn.ir.layout import total_bytes
from onnx2ttnn.ir.ttnn_ops import Page, node_input_layout, op_info
from onnx2ttnn.passes.base import Pass, PassContext

PAGE_REF = {Page.TILE: TTNNRef("TILE_LAYOUT"), Page.ROW_MAJOR: TTNNRef("ROW_MAJOR_LAYOUT")}


class DecomposeLayouts(Pass):
    name = "decompose-layouts"

    def run(self, module: Module, ctx: PassContext) -> None:
        graph = module.graph
        removed = _drop_noop_typecasts(graph)
        converted: dict[tuple[int, str], gs.Variable] = {}
        new_nodes, inserted = [], 0
        for node in graph.nodes:
            for index, tensor in enumerate(node.inputs):
                need = node_input_layout(node, index)
                layout = layout_of(tensor)
                if need == Page.SAME:  # like input 0 (concat's inputs must all share one page layout)
                    first = layout_of(node.inputs[0])
                    need = first.page if first is not None and first.on_device else Page.ANY
                if node.op == "to_torch" and compact_download(tensor, layout, ctx.device):
                    need = Page.ROW_MAJOR
                if need in (Page.ANY, Page.HOST) or layout is None or not layout.on_device or layout.page == need:
                    continue
                key = (id(tensor), need)
                if key not in converted:
                    out = gs.Variable(f"{tensor.name}_{need}", dtype=tensor.dtype, shape=list(tensor.shape))
                    set_layout(out, layout.with_(page=need))
                    new_nodes.append(ttnn_node("to_layout", [tensor], [out], node.attrs.get("_source", "")))
                    converted[key] = out
                    inserted += 1
                node.inputs[index] = converted[key]
            new_nodes.append(node)
        graph.nodes = new_nodes
        for node in graph.nodes:
            _set_conversion_arguments(node)
        module.notes[self.name] = {"to_layout_inserted": inserted, "noop_typecasts_removed": removed}


def compact_download(tensor: gs.Tensor, layout, device: DeviceSpec) -> bool:
    """Whether a download should read `tensor` in ROW_MAJOR: a TILE tensor whose tile padding at least doubles
    the bytes the host reads (ResNet-50's [1, 2048, 7, 7] output: 4 MiB of tiles, 200 KB of rows), by more
    bytes than the extra to_layout call costs (its launch and host dispatch, at the rate the cost model reads a
    download: one NoC port, ir/cost.py).  ttnn reads a device tensor back page by page, padding included, and
    untilizes on the host; converting on the device first reads back only the rows (docs/ttnn-facts.md §31)."""
    if layout is None or not layout.on_device or not layout.is_tile or layout.dtype not in ROW_MAJOR_DTYPES:
        return False
    tiled, rows = total_bytes(tensor.shape, layout), total_bytes(tensor.shape, layout.with_(page=Page.ROW_MAJOR))
    call_bytes = (device.op_launch_us + device.host_dispatch_us) * 1e-6 * device.noc_gbps_per_core * 1e9
    return 2 * rows <= tiled and tiled - rows > call_bytes


ROW_MAJOR_DTYPES = ("bf16", "f32", "u32", "i32")  # TILE -> ROW_MAJOR keeps these (docs/ttnn-facts.md §9)


def _drop_noop_typecasts(graph: gs.Graph) -> int:
    """Typecasts whose input already has the output dtype are removed (consumers read the input).  One walk
    and one rebuild of the node list (removing each from the list would be quadratic in graph size)."""
    outputs = {id(t) for t in graph.outputs}
    dropped: set[int] = set()
    for node in graph.nodes:
        if node.op != "typecast":
            continue
        src, out = node.inputs[0], node.outputs[0]
        if layout_of(src).dtype != layout_of(out).dtype or id(out) in outputs:
            continue
        replace_uses(out, src)
        node.outputs.clear()
        node.inputs.clear()  # the input no longer lists the dropped node among its readers
        dropped.add(id(node))
    if dropped:
        graph.nodes = [n for n in graph.nodes if id(n) not in dropped]
    return len(dropped)


DEVICE_INT_RANGE = {"i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1)}


def _int_range(host_dtype, device_dtype: str):
    """(low, high) of the device's integer dtype when a host tensor of `host_dtype` may hold values outside
    it (int64 into int32, negative values into uint32), else None."""
    if device_dtype not in DEVICE_INT_RANGE or host_dtype is None or np.dtype(host_dtype).kind not in "iu":
        return None
    low, high = DEVICE_INT_RANGE[device_dtype]
    info = np.iinfo(np.dtype(host_dtype))
    return None if low <= info.min and info.max <= high else (low, high)


def _index_rows(tensor: gs.Tensor) -> int | None:
    """The rows of the tables an uploaded tensor indexes when every reader, directly or through ops that pass
    its values unchanged (views, to_layout), is an embedding's indices input and the tables share one row
    count (else None: a reader that computes with the values must see them as given)."""
    rows: set[int] = set()
    pending = [tensor]
    while pending:
        value = pending.pop()
        for consumer in value.outputs:
            if consumer.op == "embedding" and consumer.inputs[0] is value and value not in consumer.inputs[1:]:
                rows.add(int(consumer.inputs[1].shape[0]))
            elif (op_info(consumer.op).view or consumer.op == "to_layout") and consumer.inputs[0] is value:
                pending.append(consumer.outputs[0])
            else:
                return None
    return rows.pop() if len(rows) == 1 else None


def _set_conversion_arguments(node: gs.Node) -> None:
    """The dtype / layout / device arguments the op's entry names (`layout_arguments`), from the layout the
    call must produce; a comparison's `dtype` when its mask's dtype is not its input's."""
    info = op_info(node.op)
    if info.comparison:
        out, a = layout_of(node.outputs[0]), layout_of(node.inputs[0])
        if out is not None and a is not None and out.dtype != a.dtype:
            node.attrs["dtype"] = TTNNRef(out.ttnn_dtype)
        return
    if not info.layout_arguments:
        return
    out = layout_of(node.outputs[0])
    if "dtype" in info.layout_arguments:
        node.attrs["dtype"] = TTNNRef(out.ttnn_dtype)
    if node.op == "from_torch" and node.attrs.get("_fallback"):
        node.attrs["_torch_dtype"] = UPLOAD_TORCH_DTYPE[out.dtype]
    if node.op == "from_torch" and node.attrs.get("_input"):
        wanted = _int_range(node.inputs[0].dtype, out.dtype)
        rows = _index_rows(node.outputs[0]) if wanted is not None and out.dtype == "u32" else None
        if rows is not None:
            node.attrs["_index_rows"] = rows
        elif wanted is not None:
            node.attrs["_int_range"] = wanted
    if "layout" in info.layout_arguments and out.on_device:
        node.attrs["layout"] = PAGE_REF[out.page]
    if "device" in info.layout_arguments and out.on_device:
        node.attrs["device"] = DEVICE
