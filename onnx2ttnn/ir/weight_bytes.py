"""What a ttnn call reads of a tensor, in bytes, and the inventory of a forward's weights (for ir/cost.py).

- read_bytes: a device tensor's bytes in its layout (ir/layout.total_bytes); a conv's host weight and bias as
  the conv prepares them on the device by its first call and reads them on every call (passes/reuse_conv_weights.py):
  [KH*KW*IC, OC] and [1, OC] tile-padded, a grouped or depthwise conv's weight expanded to every input channel,
  in the format its Conv2dConfig's weights_dtype names, float32 without one (prepared_conv_bytes,
  prepared_shape, prepared_weights_format; a float32 tile 4096 B, bfloat16 2048 B, bfloat8_b 1088 B,
  bfloat4_b 576 B); a linear's weight at its layout's dtype, bfloat8_b / bfloat4_b tiles included (the
  --weights option, lowering/weight_dtype.py).
- resident_conv_params / RESIDENT_CONV_LAYOUT: a conv's prepared weight and bias the plan keeps resident in L1
  (the conv's `_resident_weights` note, memory/conv_resident.py: moved to L1 after the first forward) are read
  from L1; conv_param_bytes: what one conv call reads of them.
- table_rows_bytes: the rows an embedding gathers from its table.
- known_size: whether a value's size is known at conversion; one that is not (a sequence or map onnxruntime
  returned, or a host region's output whose shape only running it tells, as a Loop's scan output of a
  data-dependent trip count) has no byte count: read_bytes gives 0 and the cost model names it
  (ir/cost.NodeCost.unknown) so that `report` says what it could not count.
- weights / weight_formats: each weight a forward reads, in the format and bytes it is read once in, and the
  totals per format (the DRAM floor of ir/cost.py, `report`, benchmarks/bench_perf.py).
Parameter uploads (is_param_upload) run once in load_parameters and are no part of a forward.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import TTNNCall, layout_of
from onnx2ttnn.ir.layout import LAYOUT_DTYPES, TTNNLayout, total_bytes

Layouts = Callable[[gs.Tensor], Optional[TTNNLayout]]


def is_param_upload(node: gs.Node) -> bool:
    return node.op == "from_torch" and bool(node.attrs.get("_param"))


def known_size(tensor: gs.Tensor) -> bool:
    """The tensor's shape is known at conversion: a known rank, every dim an integer."""
    shape = tensor.shape
    return shape is not None and all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape)


def read_bytes(tensor: gs.Tensor, layout: TTNNLayout, reader: Optional[gs.Node] = None) -> int:
    """The bytes one call of `reader` reads of `tensor` (or writes of it, without a reader), in `layout`; 0 for a
    value of unknown size (known_size), which the caller names rather than counts."""
    if not known_size(tensor):
        return 0
    if layout.on_device:
        return total_bytes(tensor.shape, layout)
    if reader is not None and reader.op == "conv2d" and any(tensor is t for t in reader.inputs[1:3]):
        return prepared_conv_bytes(reader, bias=tensor is not reader.inputs[1])
    prepared = prepared_weights_format(reader) if reader is not None else None
    if prepared and len(tensor.shape) == 4 and tensor is reader.inputs[1]:
        tile_bytes = LAYOUT_DTYPES[prepared][2]
        oc, per_group, kh, kw = (int(d) for d in tensor.shape)
        rows, cols = -(-(kh * kw * per_group) // 32), -(-oc // 32)
        return rows * cols * tile_bytes
    # a conv's host weight: ttnn prepares it as FLOAT32 on the device (probes/results/conv_reuse.txt)
    return 4 * math.prod(int(d) for d in tensor.shape)


def prepared_conv_bytes(node: gs.Node, bias: bool = False) -> int:
    """Bytes of the weight (or bias) a conv2d prepares on the device: [1, 1, KH*KW*IC, OC] (a grouped or depthwise
    conv's weight expanded to every input channel, zeros outside its group) and [1, 1, 1, OC], TILE, each tile-padded,
    in the Conv2dConfig's weights_dtype or float32 (docs/ttnn-facts.md §29, probes/results/conv_resident.txt)."""
    tile_bytes = LAYOUT_DTYPES[prepared_weights_format(node) or "f32"][2]
    _, _, rows, cols = prepared_shape(node, bias)
    return -(-rows // 32) * -(-cols // 32) * tile_bytes


def prepared_shape(node: gs.Node, bias: bool = False) -> tuple[int, int, int, int]:
    """The shape of the weight (or bias) a conv2d prepares: [1, 1, KH*KW*IC, OC] ([1, 1, 1, OC])."""
    kh, kw = node.attrs.get("kernel_size", (1, 1))
    return 1, 1, 1 if bias else kh * kw * int(node.attrs["in_channels"]), int(node.attrs["out_channels"])


# ttnn dtype name (a Conv2dConfig's weights_dtype) -> the layout dtype (ir/layout.LAYOUT_DTYPES key) of that name
FORMAT_OF_TTNN_DTYPE = {ttnn_name: key for key, (ttnn_name, _, _) in LAYOUT_DTYPES.items()}


def prepared_weights_format(node: gs.Node) -> Optional[str]:
    """The layout dtype a conv asks its prepared weights in through its Conv2dConfig's weights_dtype (None when
    it names none: ttnn prepares them in the host weight's float32)."""
    config = node.attrs.get("conv_config")
    dtype = config.kwargs.get("weights_dtype") if isinstance(config, TTNNCall) else None
    return None if dtype is None else FORMAT_OF_TTNN_DTYPE.get(str(dtype))


# where a conv reads the prepared weight and bias the plan keeps resident in L1 (memory/conv_resident.py)
RESIDENT_CONV_LAYOUT = TTNNLayout(buffer="l1", memory_layout="interleaved")


def resident_conv_params(node: gs.Node) -> set[int]:
    """id() of the weight and bias a conv2d reads from L1, where place-memory keeps its prepared copies resident
    (the `_resident_weights` note); empty for every other call."""
    return {id(t) for t in node.inputs[1:3]} if node.attrs.get("_resident_weights") else set()


def conv_param_bytes(node: gs.Node) -> int:
    """What one call of a conv reads of its host weight and bias, as the cost model counts it (read_bytes)."""
    return sum(read_bytes(t, layout_of(t), node) for t in node.inputs[1:3])


def table_rows_bytes(node: gs.Node, layout: TTNNLayout) -> int:
    """The bytes of the rows an embedding call gathers from its table: one row per index (tt-metal
    ttnn/cpp/ttnn/operations/embedding/device/kernels/dataflow/embeddings.cpp reads one table row, a "stick",
    per index), from the ROW_MAJOR table, or from the bfloat16 ROW_MAJOR copy a TILE table is turned into
    (a bfloat8_b TILE table untilizes to bfloat16: docs/ttnn-facts.md §9)."""
    rows = math.prod(int(d) for d in node.inputs[0].shape)
    elem = LAYOUT_DTYPES["bf16" if layout.is_tile and layout.dtype != "f32" else layout.dtype][1]
    return rows * int(node.inputs[1].shape[-1]) * elem


def weights(graph: gs.Graph, layouts: Layouts = layout_of) -> dict[int, tuple[gs.Tensor, str, int]]:
    """Each weight a forward call reads: (tensor, format, bytes read once), keyed by id(tensor).  The format is
    its device layout's dtype, or for a conv's host weight the dtype the conv prepares it in on the device."""
    found: dict[int, tuple[gs.Tensor, str, int]] = {}
    for node in graph.nodes:
        if is_param_upload(node) or node.op in ("from_torch", "to_torch"):
            continue
        for tensor in node.inputs:
            producer = tensor.inputs[0] if tensor.inputs else None
            layout = layouts(tensor)
            if producer is None or not is_param_upload(producer) or layout is None or id(tensor) in found:
                continue
            prepared = prepared_weights_format(node) if len(node.inputs) > 1 and tensor is node.inputs[1] else None
            fmt = layout.dtype if layout.on_device else prepared or "f32"
            table = node.op == "embedding" and tensor is node.inputs[1] and layout.on_device
            nbytes = table_rows_bytes(node, layout) if table else read_bytes(tensor, layout, node)  # its rows only
            found[id(tensor)] = (tensor, fmt, nbytes)
    return found


def weight_formats(graph: gs.Graph, layouts: Layouts = layout_of) -> dict[str, int]:
    """Bytes of the forward's weights per format (ir/layout.LAYOUT_DTYPES names), largest first."""
    totals: dict[str, int] = {}
    for _, fmt, nbytes in weights(graph, layouts).values():
        totals[fmt] = totals.get(fmt, 0) + nbytes
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


def floor_bytes(graph: gs.Graph, layouts: Layouts = layout_of) -> int:
    """Every weight not resident in L1 read once at its format, plus the program's inputs and outputs, in their
    device layouts (ir/cost.py's docstring; ProgramCost.floor_bytes)."""
    total = 0
    for node in graph.nodes:
        if is_param_upload(node):
            continue
        if node.op == "from_torch":  # a program input uploaded
            layout = layouts(node.outputs[0])
            if layout is not None and layout.on_device and known_size(node.outputs[0]):
                total += total_bytes(node.outputs[0].shape, layout)
            continue
        if node.op == "to_torch" and known_size(node.inputs[0]):
            layout = layouts(node.inputs[0])
            total += total_bytes(node.inputs[0].shape, layout)
    resident = {key for node in graph.nodes for key in resident_conv_params(node)}
    return total + sum(nbytes for key, (tensor, _, nbytes) in weights(graph, layouts).items()
                       if layouts(tensor).buffer != "l1" and key not in resident)
