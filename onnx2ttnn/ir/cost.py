"""The cost model of a placed ttnn program: DRAM bytes per op and a roofline estimate of device time.

For every ttnn call of the forward pass (parameter uploads run once in load_parameters and are not counted):
- bytes: each device input is read once and each output written once, in the buffer its layout names (a
  weight is read once per call that uses it; views and deallocations move nothing; conv weights, prepared
  on the device by a conv's first call and reused by later ones (passes/reuse_conv_weights.py), are DRAM
  reads of their float32 bytes, as ttnn prepares them, on every call, or of their tiles in the format the
  conv's Conv2dConfig weights_dtype names ([KH*KW*IC/groups, OC] tile-padded; a bfloat16 tile 2048 B,
  bfloat8_b 1088 B, bfloat4_b 576 B); a linear's weight is read at its layout's dtype, bfloat8_b / bfloat4_b
  tiles included (the --weights option, lowering/weight_dtype.py);
- conversion bytes: what to_memory_config / to_layout / typecast read and write;
- time: max(compute, DRAM, L1).  Compute: matmul/linear/conv FLOPs at the matrix peak (DeviceSpec.matrix_tflops,
  the HiFi4 figure, times the speed-up of the call's math fidelity: ir/kernel_config.py), other ops one to a
  few vector FLOPs per output element at the SFPU rate, both scaled to the cores the op runs on.  DRAM:
  bytes at the chip's DRAM bandwidth, or at the cores' NoC ports when fewer cores cannot draw it.  L1: an
  interleaved L1 page is fetched over the NoC from another core (NoC port rate), a sharded one (height or
  width) is local (L1 read rate).  An op runs on min(cores, output pages)
  cores, or on the cores holding its output's shards when that is sharded.
Totals: modelled DRAM traffic, the floor (every weight read once + program inputs + outputs), device time.
All figures come from the DeviceSpec (ir/device.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.aliases import is_view
from onnx2ttnn.ir.device import DeviceSpec
from onnx2ttnn.ir.graph import TTNNCall, layout_of
from onnx2ttnn.ir.kernel_config import KernelConfig
from onnx2ttnn.ir.layout import LAYOUT_DTYPES, TTNNLayout, pages, padded_shape, total_bytes
from onnx2ttnn.ir.placements import shard_count
from onnx2ttnn.ir.ttnn_ops import Cost, OpFacts, OpInfo, OpNames, op_info

# Derived from the op table (ir/ttnn_ops: each entry's `cost` and `vector_flops`), read from it at every use and
# kept importable here for the planner; the facts live only in the table.
CONVERSIONS = OpNames(lambda info: info.cost == Cost.CONVERSION)
MATRIX_OPS = OpNames(lambda info: info.cost == Cost.MATRIX)
CONV_OPS = OpNames(lambda info: info.cost == Cost.CONV)
FREE_OPS = OpNames(lambda info: info.cost == Cost.FREE)
VECTOR_FLOPS = OpFacts(lambda info: info.vector_flops if info.cost == Cost.VECTOR else None)

Layouts = Callable[[gs.Tensor], Optional[TTNNLayout]]


@dataclass
class NodeCost:
    """One ttnn call's modelled traffic and time."""

    index: int
    op: str
    dram_read: int = 0
    dram_write: int = 0
    l1_read: int = 0  # interleaved L1 (over the NoC)
    l1_write: int = 0
    local_read: int = 0  # sharded L1 (the core's own bank)
    local_write: int = 0
    flops: float = 0.0
    cores: int = 1
    time_s: float = 0.0
    bound: str = ""  # "compute" | "dram" | "l1" | ""

    @property
    def dram_bytes(self) -> int:
        return self.dram_read + self.dram_write

    @property
    def conversion(self) -> bool:
        return self.op in CONVERSIONS


@dataclass
class ProgramCost:
    """Totals of a placed program."""

    nodes: list[NodeCost] = field(default_factory=list)
    floor_bytes: int = 0

    @property
    def dram_bytes(self) -> int:
        return sum(n.dram_bytes for n in self.nodes)

    @property
    def conversion_bytes(self) -> int:
        return sum(n.dram_bytes + n.l1_read + n.l1_write + n.local_read + n.local_write
                   for n in self.nodes if n.conversion)

    @property
    def time_s(self) -> float:
        return sum(n.time_s for n in self.nodes)

    def summary(self) -> dict:
        return {"dram_bytes": self.dram_bytes, "floor_bytes": self.floor_bytes,
                "conversion_bytes": self.conversion_bytes, "time_us": round(self.time_s * 1e6, 3)}


def is_param_upload(node: gs.Node) -> bool:
    return node.op == "from_torch" and bool(node.attrs.get("_param"))


def _bytes(tensor: gs.Tensor, layout: TTNNLayout, reader: Optional[gs.Node] = None) -> int:
    if layout.on_device:
        return total_bytes(tensor.shape, layout)
    tile_bytes = _prepared_tile_bytes(reader) if reader is not None else None
    if tile_bytes and len(tensor.shape) == 4 and tensor is reader.inputs[1]:
        oc, per_group, kh, kw = (int(d) for d in tensor.shape)
        rows, cols = -(-(kh * kw * per_group) // 32), -(-oc // 32)
        return rows * cols * tile_bytes
    # a conv's host weight: ttnn prepares it as FLOAT32 on the device (probes/results/conv_reuse.txt)
    return 4 * math.prod(int(d) for d in tensor.shape)


# ttnn dtype name -> bytes of one tile of it (docs/design.md §3.4)
TILE_BYTES_OF_TTNN_DTYPE = {ttnn_name: tile for ttnn_name, _, tile in LAYOUT_DTYPES.values()}


def _prepared_tile_bytes(node: gs.Node) -> Optional[int]:
    """Bytes of a tile of the conv's prepared weights when its Conv2dConfig names a weights_dtype (else None:
    ttnn prepares them in the host weight's float32)."""
    config = node.attrs.get("conv_config")
    dtype = config.kwargs.get("weights_dtype") if isinstance(config, TTNNCall) else None
    return None if dtype is None else TILE_BYTES_OF_TTNN_DTYPE.get(str(dtype))


def _work_pages(tensor: gs.Tensor, layout: TTNNLayout) -> int:
    return pages(tensor.shape, layout)[0] if layout.on_device else 1


def node_cost(node: gs.Node, device: DeviceSpec, index: int = 0, layouts: Layouts = layout_of) -> NodeCost:
    """The modelled traffic and time of one ttnn call; `layouts` may override tensors' placements."""
    cost = NodeCost(index, node.op)
    info = op_info(node.op)
    if info.cost == Cost.FREE or is_param_upload(node) or is_view(node):
        return cost
    for tensor in node.inputs:
        layout = layouts(tensor)
        if layout is None or (not layout.on_device and node.op in ("from_torch",)):
            continue  # the host side of an upload
        _account(cost, layout, _bytes(tensor, layout, node), read=True)
    out_layout = None
    for tensor in node.outputs:
        layout = layouts(tensor)
        if layout is None or not layout.on_device:
            continue
        out_layout = out_layout or (tensor, layout)
        _account(cost, layout, _bytes(tensor, layout), read=False)
    cost.cores = _cores(out_layout, device)
    cost.flops = _flops(node, info, out_layout)
    share = cost.cores / device.cores
    if info.cost in (Cost.MATRIX, Cost.CONV):
        compute = cost.flops / (device.matrix_tflops * 1e12 * share * _fidelity_speedup(node, info))
    else:
        compute = cost.flops / (device.vector_gflops_per_core * 1e9 * cost.cores)
    dram = cost.dram_bytes / (min(device.dram_gbps, device.noc_gbps_per_core * cost.cores) * 1e9)
    l1 = ((cost.l1_read + cost.l1_write) / (device.noc_gbps_per_core * 1e9 * cost.cores)
          + (cost.local_read + cost.local_write) / (device.l1_gbps_per_core * 1e9 * cost.cores))
    cost.time_s, cost.bound = max((compute, "compute"), (dram, "dram"), (l1, "l1"))
    if cost.time_s == 0.0:
        cost.bound = ""
    return cost


def _fidelity_speedup(node: gs.Node, info: OpInfo) -> float:
    """The matrix-engine speed-up of the call's compute kernel config over HiFi4 (1 without a config)."""
    config = node.attrs.get(info.kernel_config) if info.kernel_config else None
    return config.matrix_speedup if isinstance(config, KernelConfig) else 1.0


def _account(cost: NodeCost, layout: TTNNLayout, nbytes: int, read: bool) -> None:
    if not layout.on_device or layout.buffer == "dram":  # host weights come in through DRAM
        if read:
            cost.dram_read += nbytes
        else:
            cost.dram_write += nbytes
    elif layout.memory_layout == "interleaved":
        if read:
            cost.l1_read += nbytes
        else:
            cost.l1_write += nbytes
    elif read:
        cost.local_read += nbytes
    else:
        cost.local_write += nbytes


def _cores(out: Optional[tuple], device: DeviceSpec) -> int:
    if out is None:
        return 1
    tensor, layout = out
    if layout.memory_layout == "height_sharded" and layout.grid:
        return min(layout.grid[0] * layout.grid[1], shard_count(tensor.shape, layout))
    if layout.memory_layout not in (None, "interleaved") and layout.grid:
        return layout.grid[0] * layout.grid[1]
    return max(1, min(device.cores, _work_pages(tensor, layout)))


def _flops(node: gs.Node, info: OpInfo, out: Optional[tuple]) -> float:
    if out is None:
        return 0.0
    tensor, layout = out
    out_elems = math.prod(padded_shape(tensor.shape, layout)) if layout.is_tile else math.prod(tensor.shape or (1,))
    if info.cost == Cost.MATRIX:
        a = node.inputs[0]
        k = int(a.shape[-1]) if a.shape else 1
        if layout.is_tile:
            k = -(-k // 32) * 32
        return 2.0 * out_elems * k
    if info.cost == Cost.CONV:
        attrs = node.attrs
        kh, kw = attrs.get("kernel_size", (1, 1))
        per_out = attrs.get("in_channels", 1) // max(1, attrs.get("groups", 1)) * kh * kw
        return 2.0 * math.prod(tensor.shape) * per_out
    return float(out_elems * info.vector_flops)  # VECTOR and CONVERSION ops


def program_cost(graph: gs.Graph, device: DeviceSpec, layouts: Layouts = layout_of) -> ProgramCost:
    """Per-node costs of the forward pass and the DRAM-traffic floor."""
    result = ProgramCost()
    for index, node in enumerate(graph.nodes):
        if not is_param_upload(node) and node.op != "deallocate":
            result.nodes.append(node_cost(node, device, index, layouts))
    result.floor_bytes = floor_bytes(graph, layouts)
    return result


def floor_bytes(graph: gs.Graph, layouts: Layouts = layout_of) -> int:
    """Every weight read once, plus the program's inputs and outputs, in their device layouts."""
    weights: dict[int, int] = {}
    total = 0
    for node in graph.nodes:
        if is_param_upload(node):
            continue
        if node.op == "from_torch":  # a program input uploaded
            layout = layouts(node.outputs[0])
            if layout is not None and layout.on_device:
                total += total_bytes(node.outputs[0].shape, layout)
            continue
        if node.op == "to_torch":
            layout = layouts(node.inputs[0])
            total += total_bytes(node.inputs[0].shape, layout)
            continue
        for tensor in node.inputs:
            producer = tensor.inputs[0] if tensor.inputs else None
            layout = layouts(tensor)
            if producer is not None and is_param_upload(producer) and layout is not None:
                weights[id(tensor)] = _bytes(tensor, layout, node)
    return total + sum(weights.values())
