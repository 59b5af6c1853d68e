"""The cost model of a placed ttnn program: DRAM bytes per op and a roofline estimate of device time.

For every ttnn call of the forward pass (parameter uploads run once in load_parameters and are not counted):
- bytes: each device input is read once and each output written once, in the buffer its layout names (a
  weight is read once per call that uses it, from DRAM or, resident in L1 across forward calls
  (memory/resident.py), from L1; views and deallocations move nothing); what a call reads of a weight, a conv's
  prepared weights (DRAM reads on every call, or L1 reads when the plan keeps them resident) and an embedding's
  table rows included, is ir/weight_bytes.py's; an embedding converts a TILE table whole to ROW_MAJOR first, on
  every call (table read and its copy written; _account_table); a ROW_MAJOR operand an op tilizes (the op
  table's `tilized_inputs`: multiply's operand beside a TILE one, linear's bias) is read, its tile-padded copy
  written and read again, all in the operand's own buffer (docs/ttnn-facts.md §47; a linear's ROW_MAJOR bias is
  added in a second pass even with a core grid);
- conversion bytes: what to_memory_config / to_layout / typecast read and write;
- epilogues: a matmul / linear with neither a program config nor a core grid runs its bias and its activation
  as programs of their own after the matmul, each reading the result back and writing it again (tt-metal
  matmul.cpp `post_process_bias`; docs/ttnn-facts.md §22, §31);
- time: max(compute, DRAM, L1).  Compute: matmul/linear/conv FLOPs at the matrix peak (DeviceSpec.matrix_tflops,
  the HiFi4 figure, times the speed-up of the call's math fidelity: ir/kernel_config.py; a call without a
  config at the fidelity ttnn compiles it with, _default_fidelity), other ops one to a
  few vector FLOPs per output element at the SFPU rate, both scaled to the cores the op runs on.  DRAM:
  bytes at the chip's DRAM bandwidth, or at the cores' NoC ports when fewer cores cannot draw it.  L1: an
  interleaved L1 page is fetched over the NoC from another core (NoC port rate), a sharded one (height or
  width) is local (L1 read rate); the NoC ports carry the DRAM pages too, so a core reading DRAM and
  remote L1 pages spends the sum at its ports (a weight resident in L1 is never slower than in DRAM).  An op
  runs on min(cores, output pages) cores, or on the cores holding its output's shards when that is sharded.
  A CCL op's time is at least its ring bytes (ir/ccl_cost.py) over the chip's ethernet links.
Totals: modelled DRAM traffic, the floor, device time.  The floor: every weight not resident in L1 read once
at its format (its layout's dtype, or what a conv prepares it as; an embedding table: the rows it gathers), plus
the program's inputs and outputs in their device layouts; a resident weight costs no DRAM bytes per forward (it
was uploaded once, in load_parameters, or moved to L1 once after the first forward, neither of which is
counted).
Dispatch (docs/design.md §6.20): every ttnn call of the forward (deallocations, weight uploads and host
fallbacks excluded) costs DeviceSpec.host_dispatch_us on the host when the program runs eagerly; every call
that runs a device program (not a view, not a FREE op) costs DeviceSpec.op_launch_us on the device, traced or
not; a traced forward costs one host call (DeviceSpec.trace_replay_us).  Modelled time per forward = device
time + dispatch, nothing overlapped (ProgramCost.eager_s / traced_s: an upper bound where tt-metal's
asynchronous dispatch hides host time behind long ops).
All figures come from the DeviceSpec (ir/device.py).
A value of unknown size (ir/weight_bytes.known_size: a host region's Loop output of a data-dependent length) is
not counted; the call that reads it names it (NodeCost.unknown, ProgramCost.unknown) and `report` lists it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.aliases import is_view
from onnx2ttnn.ir.ccl_cost import ccl_bytes
from onnx2ttnn.ir.device import DeviceSpec
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.kernel_config import PASSES, KernelConfig
from onnx2ttnn.ir.layout import TTNNLayout, pages, padded_shape, total_bytes
from onnx2ttnn.ir.placements import shard_count
from onnx2ttnn.ir.ttnn_ops import HOST_COMPUTE, HOST_OUTPUT, HOST_REGION, Cost, OpFacts, OpInfo, OpNames, op_info
from onnx2ttnn.ir.weight_bytes import (RESIDENT_CONV_LAYOUT, Layouts, floor_bytes, is_param_upload,
                                       known_size, read_bytes, resident_conv_params, table_rows_bytes)

# Derived from the op table (ir/ttnn_ops: each entry's `cost` and `vector_flops`), read from it at every use and
# kept importable here for the planner; the facts live only in the table.
CONVERSIONS = OpNames(lambda info: info.cost == Cost.CONVERSION)
MATRIX_OPS = OpNames(lambda info: info.cost == Cost.MATRIX)
CONV_OPS = OpNames(lambda info: info.cost == Cost.CONV)
FREE_OPS = OpNames(lambda info: info.cost == Cost.FREE)
VECTOR_FLOPS = OpFacts(lambda info: info.vector_flops if info.cost == Cost.VECTOR else None)
HOST_OPS = (HOST_COMPUTE, HOST_REGION, HOST_OUTPUT)  # computed on the host (torch, onnxruntime): not ttnn calls


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
    ethernet: int = 0  # bytes each chip sends to its neighbours (CCL ops)
    call: bool = True  # a ttnn call the host dispatches (host fallbacks are not)
    launch: bool = False  # runs a program on the device (views and FREE ops do not)
    unknown: list[str] = field(default_factory=list)  # values it reads or writes of unknown size: not counted

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
    launch_s: float = 0.0  # DeviceSpec.op_launch_us, per launch
    host_call_s: float = 0.0  # DeviceSpec.host_dispatch_us, per call of an eager forward
    replay_s: float = 0.0  # DeviceSpec.trace_replay_us, per traced forward

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

    @property
    def unknown(self) -> list[str]:
        """Names of the values of unknown size the forward reads or writes (not in the byte figures), once each."""
        return list(dict.fromkeys(name for n in self.nodes for name in n.unknown))

    @property
    def ethernet_bytes(self) -> int:
        """Bytes each chip sends over its ethernet links per forward (CCL ops)."""
        return sum(n.ethernet for n in self.nodes)

    @property
    def calls(self) -> int:
        """ttnn calls per forward (deallocations and weight uploads excluded)."""
        return sum(n.call for n in self.nodes)

    @property
    def launches(self) -> int:
        return sum(n.launch for n in self.nodes)

    @property
    def host_ops(self) -> int:
        """Host fallback computations and host regions (a forward with any cannot be traced whole)."""
        return sum(not n.call for n in self.nodes)

    @property
    def eager_s(self) -> float:
        """Modelled time of an eager forward: device time + device launches + host dispatch of every call."""
        return self.time_s + self.launches * self.launch_s + self.calls * self.host_call_s

    @property
    def traced_s(self) -> float:
        """Modelled time of a traced forward: device time + device launches + one execute_trace."""
        return self.time_s + self.launches * self.launch_s + self.replay_s

    def summary(self) -> dict:
        return {"dram_bytes": self.dram_bytes, "floor_bytes": self.floor_bytes,
                "conversion_bytes": self.conversion_bytes, "ethernet_bytes": self.ethernet_bytes,
                "time_us": round(self.time_s * 1e6, 3),
                "calls": self.calls, "eager_us": round(self.eager_s * 1e6, 3),
                "traced_us": round(self.traced_s * 1e6, 3)}


def _work_pages(tensor: gs.Tensor, layout: TTNNLayout) -> int:
    return pages(tensor.shape, layout)[0] if layout.on_device else 1


def node_cost(node: gs.Node, device: DeviceSpec, index: int = 0, layouts: Layouts = layout_of) -> NodeCost:
    """The modelled traffic and time of one ttnn call; `layouts` may override tensors' placements."""
    cost = NodeCost(index, node.op, call=node.op not in HOST_OPS and not is_param_upload(node))
    info = op_info(node.op)
    if info.cost == Cost.FREE or is_param_upload(node) or is_view(node):
        return cost
    cost.launch = True
    resident = resident_conv_params(node)
    for index, tensor in enumerate(node.inputs):
        layout = layouts(tensor)
        if layout is None or (not layout.on_device and node.op in ("from_torch",)):
            continue  # the host side of an upload
        if not known_size(tensor):  # named as the program output a host output returns it as
            cost.unknown.append(node.outputs[0].name if node.op == HOST_OUTPUT else tensor.name)
            continue
        if node.op == "embedding" and index == 1 and layout.on_device:
            _account_table(cost, node, layout)
            continue
        read_from = RESIDENT_CONV_LAYOUT if id(tensor) in resident else layout
        _account(cost, read_from, read_bytes(tensor, layout, node), read=True)
        if tilized(node, index, layouts):  # the tile-padded copy: written, then read by the op (a bias: the add)
            copy = total_bytes(tensor.shape, layout.with_(page="tile"))
            _account(cost, layout, copy, read=False)
            if info.cost != Cost.MATRIX:
                _account(cost, layout, copy, read=True)
    out_layout = None
    for tensor in node.outputs:
        layout = layouts(tensor)
        if layout is None or not layout.on_device:
            continue
        if not known_size(tensor):
            cost.unknown.append(tensor.name)
            continue
        out_layout = out_layout or (tensor, layout)
        _account(cost, layout, read_bytes(tensor, layout), read=False)
    cost.cores = _cores(out_layout, device)
    cost.flops = _flops(node, info, out_layout)
    _time(cost, device, info.cost in (Cost.MATRIX, Cost.CONV, Cost.ATTENTION), _fidelity_speedup(node, info))
    if info.cost == Cost.CCL and out_layout is not None:
        cost.ethernet = ccl_bytes(node.op, read_bytes(*out_layout), int(node.attrs.get("_ccl_chips", 1)))
        wire = cost.ethernet / (device.ethernet_gbps * device.ethernet_links * 1e9)
        cost.time_s, cost.bound = max((cost.time_s, cost.bound), (wire, "ethernet"), key=lambda term: term[0])
    if out_layout is not None and _bias_apart(node, info, layouts):
        _add_second_pass(cost, out_layout, "add", device, _bias_bytes(node, layouts))
    if out_layout is not None and activation_apart(node):
        _add_second_pass(cost, out_layout, node.attrs["activation"], device)
    return cost


def _account_table(cost: NodeCost, node: gs.Node, layout: TTNNLayout) -> None:
    """An embedding's table traffic.  A ROW_MAJOR table: the gathered rows only.  A TILE table: ttnn.embedding
    first converts it whole to ROW_MAJOR on every call (tt-metal ttnn/cpp/ttnn/operations/embedding/
    embedding.cpp: `if weight layout is TILE: to_layout(weight, ROW_MAJOR)`), so the whole table is read and
    its ROW_MAJOR copy written (in the table's buffer), then the rows are gathered from the copy."""
    table = node.inputs[1]
    if layout.is_tile:
        copy = layout.with_(page="row_major", dtype="f32" if layout.dtype == "f32" else "bf16")
        _account(cost, layout, total_bytes(table.shape, layout), read=True)
        _account(cost, copy, total_bytes(table.shape, copy), read=False)
        layout = copy
    _account(cost, layout, table_rows_bytes(node, layout), read=True)


def _time(cost: NodeCost, device: DeviceSpec, matrix: bool, speedup: float = 1.0) -> None:
    """The call's time: the slowest of its compute, DRAM and L1 traffic (and which one bounds it)."""
    if matrix:
        compute = cost.flops / (device.matrix_tflops * 1e12 * (cost.cores / device.cores) * speedup)
    else:
        compute = cost.flops / (device.vector_gflops_per_core * 1e9 * cost.cores)
    dram = cost.dram_bytes / (min(device.dram_gbps, device.noc_gbps_per_core * cost.cores) * 1e9)
    # every page not in the core's own bank, DRAM or another core's L1, comes through the core's NoC port
    noc_bytes = cost.l1_read + cost.l1_write + cost.dram_bytes
    l1 = (noc_bytes / (device.noc_gbps_per_core * 1e9 * cost.cores)
          + (cost.local_read + cost.local_write) / (device.l1_gbps_per_core * 1e9 * cost.cores))
    # the largest term; on a tie DRAM is named first (a few cores reading DRAM: both terms are their NoC ports)
    cost.time_s, cost.bound = max(((dram, "dram"), (l1, "l1"), (compute, "compute")), key=lambda term: term[0])
    if cost.time_s == 0.0:
        cost.bound = ""


def _unconfigured(node: gs.Node) -> bool:
    """A matmul / linear with neither a program config nor a core grid: ttnn runs its bias and its activation as
    programs of their own after the matmul (tt-metal matmul.cpp `post_process_bias`; docs/ttnn-facts.md §22, §31;
    probe_epilogues.py, probe_core_grid.py)."""
    return node.attrs.get("program_config") is None and node.attrs.get("core_grid") is None


def activation_apart(node: gs.Node) -> bool:
    """A matmul's `activation=` that real ttnn runs as a second kernel on the written result (an unconfigured
    matmul: _unconfigured).  The matmul's result is then an intermediate of the output's size, in the output's
    memory, until the activation has written the output (docs/ttnn-facts.md §32; the memory planner counts it:
    memory/buffers.py)."""
    return op_info(node.op).fused_activation == "activation" and bool(node.attrs.get("activation")) \
        and _unconfigured(node)


def _bias_apart(node: gs.Node, info: OpInfo, layouts: Layouts = layout_of) -> bool:
    """A linear's bias that real ttnn adds with a binary op on the written result: without a config, or a
    ROW_MAJOR bias whatever the config (probe_compact_rows_l1.py: matmul, tilize, binary add with a core grid)."""
    return info.cost == Cost.MATRIX and len(node.inputs) > 2 and (_unconfigured(node) or tilized(node, 2, layouts))


def _bias_bytes(node: gs.Node, layouts: Layouts) -> tuple:
    """(layout, bytes) of the bias the separate add reads (a ROW_MAJOR bias: its tile-padded copy)."""
    layout = layouts(node.inputs[2])
    if layout is None or not layout.on_device:
        return None
    read = layout.with_(page="tile") if tilized(node, 2, layouts) else layout
    return layout, total_bytes(node.inputs[2].shape, read)


def tilized(node: gs.Node, index: int, layouts: Layouts = layout_of) -> bool:
    """Input `index` is a ROW_MAJOR device operand the op tilizes first (the op table's `tilized_inputs`),
    beside a TILE operand when the op has two tensor operands (docs/ttnn-facts.md §47)."""
    layout = layouts(node.inputs[index]) if index < len(node.inputs) else None
    if layout is None or not layout.on_device or layout.is_tile or index not in op_info(node.op).tilized_inputs:
        return False
    if op_info(node.op).cost == Cost.MATRIX:
        return True
    others = [layouts(t) for i, t in enumerate(node.inputs) if i != index]
    return any(other is not None and other.on_device and other.is_tile for other in others)


def _add_second_pass(cost: NodeCost, out: tuple, op, device: DeviceSpec, operand: Optional[tuple] = None) -> None:
    """Add a second program's work to a matmul's cost: it reads the result back (and `operand`, a bias) and writes
    it again; `op` names its vector op (an activation string, or "add") for its flops."""
    tensor, layout = out
    unary = NodeCost(cost.index, cost.op, cores=cost.cores)
    nbytes = read_bytes(tensor, layout)
    _account(unary, layout, nbytes, read=True)
    _account(unary, layout, nbytes, read=False)
    if operand is not None:
        _account(unary, operand[0], operand[1], read=True)
    flops = VECTOR_FLOPS.get(op, 1) if isinstance(op, str) else 1  # the string names the op
    unary.flops = float(math.prod(padded_shape(tensor.shape, layout)) * flops)
    _time(unary, device, matrix=False)
    for field in ("dram_read", "dram_write", "l1_read", "l1_write", "local_read", "local_write"):
        setattr(cost, field, getattr(cost, field) + getattr(unary, field))
    cost.flops += unary.flops
    cost.time_s += unary.time_s


def _fidelity_speedup(node: gs.Node, info: OpInfo) -> float:
    """The matrix-engine speed-up of the call's compute kernel config over HiFi4, or of the fidelity ttnn compiles
    the call with when it passes none (_default_fidelity)."""
    config = node.attrs.get(info.kernel_config) if info.kernel_config else None
    if isinstance(config, KernelConfig):
        return config.matrix_speedup
    return PASSES["HiFi4"] / PASSES[_default_fidelity(node, info)]


def _default_fidelity(node: gs.Node, info: OpInfo) -> str:
    """The math fidelity ttnn 0.81.1 compiles a matrix call with when it passes no compute kernel config, read
    from the built kernels on n150 and p150 (docs/ttnn-facts.md §35, probe_default_fidelity.py): matmul and
    linear HiFi2, LoFi when given a core grid; scaled_dot_product_attention HiFi2; conv2d HiFi4 (and, not
    probed, any other conv)."""
    if info.cost == Cost.MATRIX:
        return "LoFi" if node.attrs.get("core_grid") is not None else "HiFi2"
    return "HiFi2" if info.cost == Cost.ATTENTION else "HiFi4"


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
    if info.cost == Cost.ATTENTION:  # q @ k^T and p @ v: output [b, n, s_q, dh] against s_k keys
        k = node.inputs[1]
        keys = int(k.shape[-2]) if k.shape and len(k.shape) >= 2 else 1
        return 4.0 * out_elems * (-(-keys // 32) * 32 if layout.is_tile else keys)
    if info.cost == Cost.CONV:
        attrs = node.attrs
        kh, kw = attrs.get("kernel_size", (1, 1))
        per_out = attrs.get("in_channels", 1) // max(1, attrs.get("groups", 1)) * kh * kw
        return 2.0 * math.prod(tensor.shape) * per_out
    return float(out_elems * info.vector_flops)  # VECTOR and CONVERSION ops


def program_cost(graph: gs.Graph, device: DeviceSpec, layouts: Layouts = layout_of) -> ProgramCost:
    """Per-node costs of the forward pass and the DRAM-traffic floor."""
    result = ProgramCost(launch_s=device.op_launch_us * 1e-6, host_call_s=device.host_dispatch_us * 1e-6,
                         replay_s=device.trace_replay_us * 1e-6)
    for index, node in enumerate(graph.nodes):
        if not is_param_upload(node) and node.op != "deallocate":
            result.nodes.append(node_cost(node, device, index, layouts))
    result.floor_bytes = floor_bytes(graph, layouts)
    return result

