"""The placement report of a converted program: per-op table, totals, and per-core L1 / DRAM use over time.

`placement_report(conversion)` (one row per ttnn call, weight uploads included) reads only what the passes
wrote: each node output's TTNNLayout (the
planner's decision) and the reason the plan gives for it (module.notes["place-memory"]["reasons"], from
memory/plan.py), the cost model (ir/cost.py) for modelled DRAM bytes and device time,
and buffer liveness over the final schedule (ir/liveness.py, deallocations included) for the memory timeline.
The totals add the modelled time per forward, eager and traced (device time + dispatch, ir/cost.py), the ttnn
calls per forward, the forward's weights by format, and every matmul / linear / conv / embedding weight not in a
block-float format with the reason the conversion recorded on its upload (the `_format_reason` note) or the default one (weight_reason).
`onnx2ttnn report MODEL [--memory auto] [--png FILE]` prints `Report.text()` and, with --png, draws
`Report.write_png` (matplotlib, imported only then).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.cost import CONV_OPS, MATRIX_OPS, activation_apart, node_cost, program_cost
from onnx2ttnn.ir.device import DeviceSpec, get_device
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.ir.layout import TTNNLayout, bytes_per_bank, total_bytes
from onnx2ttnn.ir.liveness import buffers
from onnx2ttnn.ir.traceable import persistent_buffers
from onnx2ttnn.ir.ttnn_ops import HOST_REGION
from onnx2ttnn.ir.weight_bytes import weights
from onnx2ttnn.memory.budget import usable_l1_per_core
from onnx2ttnn.memory.capacity import dram_budget, dram_use
from onnx2ttnn.messages import escape_name


@dataclass
class Row:
    index: int
    op: str
    tensor: str
    buffer: str
    memory_layout: str
    grid: str
    shard: str
    bytes_per_bank: int
    dram_bytes: int
    reason: str = ""  # why the plan placed the output's buffer there (host rows: why it stays on the host)


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    dram_bytes: int = 0
    floor_bytes: int = 0
    time_us: float = 0.0
    sharded: int = 0
    l1_per_core: list[int] = field(default_factory=list)  # per schedule index, bytes in the fullest bank
    dram_live: list[int] = field(default_factory=list)  # per schedule index, bytes of live DRAM buffers
    l1_budget: int = 0
    memory: str = ""
    regions: list[dict] = field(default_factory=list)  # host regions (Conversion.region_summaries)
    calls: int = 0  # ttnn calls per forward (deallocations, weight uploads, host fallbacks excluded)
    launches: int = 0  # calls that run a device program
    host_ops: int = 0  # host fallback computations and host regions
    eager_us: float = 0.0
    traced_us: float = 0.0
    formats: dict = field(default_factory=dict)  # weight format -> bytes read per forward
    kept: list = field(default_factory=list)  # (weight, ONNX node, format, why) of weights not block-float
    parameter_bytes: int = 0  # device bytes of the parameters, on each chip
    mesh: tuple[int, int] = (1, 1)  # a multi-chip program's mesh: every figure above is one chip's
    dram_reserved: int = 0  # one chip's DRAM at the plan's peak, every bank as full as the fullest (memory/capacity.py)
    dram_budget: int = 0  # one chip's DRAM
    ethernet_bytes: int = 0  # bytes each chip sends over its ethernet links per forward (CCL ops, tensor parallel)
    tp: int = 1  # chips along mesh axis 1 sharing each layer (tensor parallel); the batch splits over the rest
    unknown: list[str] = field(default_factory=list)  # values of unknown size: in no byte figure (ir/cost.py)

    def text(self) -> str:
        head = f"{'#':>4} {'op':18} {'output':28} {'buffer':6} {'layout':15} {'grid':5} {'shard':10} " \
               f"{'B/bank':>8} {'DRAM B':>10} reason"
        lines = [head, "-" * len(head)]
        for r in self.rows:
            lines.append(f"{r.index:4d} {r.op[:18]:18} {r.tensor[:28]:28} {r.buffer:6} {r.memory_layout:15} "
                         f"{r.grid:5} {r.shard:10} {r.bytes_per_bank:8d} {r.dram_bytes:10d} {r.reason}".rstrip())
        ratio = self.dram_bytes / self.floor_bytes if self.floor_bytes else 0.0
        lines += ["", f"memory policy: {self.memory}",
                  f"DRAM traffic: {self.dram_bytes / 1e6:.3f} MB per forward pass, floor {self.floor_bytes / 1e6:.3f} MB "
                  f"({ratio:.2f}x the floor: each weight not resident in L1 read once in its format, plus inputs "
                  "and outputs)",
                  f"estimated device time: {self.time_us:.1f} us",
                  f"ttnn calls per forward: {self.calls} ({self.launches} run a device program; deallocations, "
                  f"weight uploads and host fallbacks not counted)",
                  f"modelled time per forward: eager {self.eager_us:.1f} us, traced {self.traced_us:.1f} us "
                  f"(device time + dispatch)" + (f"; {self.host_ops} host fallback or region call"
                                                 f"{'s' if self.host_ops != 1 else ''}: not traceable whole"
                                                 if self.host_ops else ""),
                  "weights read per forward: " + (", ".join(f"{fmt} {n / 1e6:.3f} MB" for fmt, n in
                                                            self.formats.items()) or "none"),
                  f"matmul, linear, conv and embedding weights not in a block-float format: {len(self.kept)}",
                  *(f"  {weight} ({layer}) {fmt}: {why}" for weight, layer, fmt, why in self.kept),
                  f"sharded tensors: {self.sharded}",
                  f"peak L1 per core: {max(self.l1_per_core, default=0)} B of {self.l1_budget} B",
                  f"parameters on the device: {self.parameter_bytes} B, peak live DRAM: "
                  f"{max(self.dram_live, default=0)} B",
                  *([f"CCL traffic: {self.ethernet_bytes / 1e6:.3f} MB per forward sent by each chip over its "
                     "ethernet links (ir/ccl_cost.py ccl_bytes; in the device time above)"] if self.ethernet_bytes else []),
                  *self._mesh_lines(),
                  *region_lines(self.regions),
                  *self._unknown_lines()]
        return "\n".join(lines)

    def _unknown_lines(self) -> list[str]:
        """The values whose size only running the program tells, which no byte figure above counts."""
        if not self.unknown:
            return []
        names = ", ".join(escape_name(name) for name in self.unknown[:8]) + (", ..." if len(self.unknown) > 8 else "")
        return [f"values of unknown size: {len(self.unknown)} (not counted in the DRAM and time figures above: "
                f"their size is known only when the program runs): {names}"]

    def _mesh_lines(self) -> list[str]:
        rows, cols = self.mesh
        chips = rows * cols
        if chips == 1:
            return []
        params, peak_l1 = self.parameter_bytes, max(self.l1_per_core, default=0)
        dp = chips // self.tp
        if self.tp == 1:
            how = "data parallel (the batch split over the chips, the parameters replicated)"
            same = "the same on every chip"
            whole = f"parameters {params * chips} B ({chips} copies)"
            last = ("  data parallel: each chip's parameters equal the single-chip program's (every chip runs the "
                    f"one-chip program at batch / {chips})")
        else:
            how = (f"tensor parallel over {self.tp} chips per layer" +
                   (f", data parallel over {dp} rows" if dp > 1 else "") + " (split weights, CCL ops between chips)")
            same = "each chip holds its part of the split weights and the replicated rest"
            whole = f"parameters {params * chips} B ({dp} cop{'ies' if dp > 1 else 'y'} of the split model)"
            last = (f"  tensor parallel: each chip holds 1/{self.tp} of every split weight; compare the parameters "
                    "with the single-chip program's report")
        return [f"mesh: {rows}x{cols}, {chips} chips, {how}: the DRAM, time, L1 and parameter figures above are "
                f"per chip, {same}",
                f"  per chip: parameters {params} B, peak L1 per core {peak_l1} B of {self.l1_budget} B, "
                f"DRAM reserved at the peak {self.dram_reserved} B of {self.dram_budget} B",
                f"  whole mesh: {whole}, DRAM reserved at the peak {self.dram_reserved * chips} B",
                last]

    def write_png(self, path: str) -> None:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as error:
            raise ConversionError("--png needs matplotlib (pip install matplotlib)") from error
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
        steps = range(len(self.l1_per_core))
        top.step(steps, [b / 1024 for b in self.l1_per_core], where="post", color="tab:blue")
        top.axhline(self.l1_budget / 1024, color="tab:red", linestyle="--", label="L1 budget per core")
        top.set_ylabel("L1 per core (KiB)")
        top.legend(loc="upper right")
        bottom.step(steps, [b / 1e6 for b in self.dram_live], where="post", color="tab:orange")
        bottom.set_ylabel("live DRAM (MB)")
        bottom.set_xlabel("schedule step (ttnn call)")
        top.set_title(f"memory over the forward pass (--memory {self.memory})")
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)


def per_bank(tensor, layout: TTNNLayout, device: DeviceSpec) -> int:
    """Bytes the tensor reserves in each bank of its buffer (ir/layout.py bytes_per_bank)."""
    return bytes_per_bank(tensor.shape, layout, device.cores if layout.buffer == "l1" else device.dram_banks)


def placement_report(conversion, device: DeviceSpec | str = None) -> Report:
    options = conversion.options
    if not isinstance(device, DeviceSpec):
        device = get_device(device or options.device)
    graph = conversion.module.graph
    cost = program_cost(graph, device)
    report = Report(dram_bytes=cost.dram_bytes, floor_bytes=cost.floor_bytes, time_us=cost.time_s * 1e6,
                    memory=options.memory, calls=cost.calls, launches=cost.launches, host_ops=cost.host_ops,
                    eager_us=cost.eager_s * 1e6, traced_us=cost.traced_s * 1e6, ethernet_bytes=cost.ethernet_bytes,
                    unknown=cost.unknown)
    read = weights(graph)
    for tensor, fmt, nbytes in read.values():
        report.formats[fmt] = report.formats.get(fmt, 0) + nbytes
    report.formats = dict(sorted(report.formats.items(), key=lambda kv: -kv[1]))
    report.kept = [kept for kept in map(weight_reason, (tensor for tensor, _, _ in read.values()),
                                        (fmt for _, fmt, _ in read.values())) if kept]
    report.l1_budget = usable_l1_per_core(device)
    report.mesh, report.tp = conversion.module.mesh, conversion.module.tp
    report.dram_reserved, report.dram_budget = dram_use(graph, device).peak_bytes, dram_budget(device)
    report.regions = conversion.region_summaries()
    reasons = conversion.module.notes.get("place-memory", {}).get("reasons")
    for index, node in enumerate(graph.nodes):
        if node.op == "deallocate":
            continue
        out = next((t for t in node.outputs if layout_of(t) is not None and layout_of(t).on_device), None)
        dram = node_cost(node, device, index).dram_bytes
        if out is None:
            name = node.outputs[0].name if node.outputs else ""
            planned = reasons.get(node.outputs[0]) if reasons and node.outputs else ""  # a conv's prepared weight
            reason = f"{_host_reason(node)}; prepared: {planned}" if planned else _host_reason(node)
            report.rows.append(Row(index, node.op, name, "host", "", "", "", 0, dram, reason))
            continue
        lay = layout_of(out)
        sharded = lay.memory_layout not in (None, "interleaved")
        report.sharded += sharded
        report.rows.append(Row(index, node.op, out.name, lay.buffer, lay.memory_layout or "",
                               f"{lay.grid[0]}x{lay.grid[1]}" if sharded else "",
                               f"{lay.shard[0]}x{lay.shard[1]}" if sharded else "",
                               per_bank(out, lay, device), dram, reasons.get(out) if reasons else ""))
    n = len(graph.nodes)
    report.l1_per_core = [0] * n
    report.dram_live = [0] * n
    held = persistent_buffers(graph)
    for buf in buffers(graph):
        lay = layout_of(buf.root)
        size = per_bank(buf.root, lay, device)
        report.parameter_bytes += total_bytes(buf.root.shape, lay) if buf.is_param else 0
        # a weight holds its buffer from load_parameters on, before the forward pass's first call; a traced
        # run holds its inputs and outputs to the end (counted so, as the memory plan does: design §6.26)
        first, last = (0, n - 1) if buf.is_param else (buf.first, n - 1 if id(buf.root) in held else buf.last)
        live = report.l1_per_core if lay.buffer == "l1" else report.dram_live
        amount = size if lay.buffer == "l1" else total_bytes(buf.root.shape, lay)
        for step in range(first, last + 1):
            live[step] += amount
        producer = buf.root.inputs[0] if buf.root.inputs else None
        if producer is not None and activation_apart(producer):  # its intermediate, beside it at its birth
            live[first] += amount
    # conv weights the plan keeps resident (memory/conv_resident.py): planned from the first call on
    resident = sum(node.attrs.get("_resident_weights", 0) for node in graph.nodes if node.op == "conv2d")
    report.l1_per_core = [used + resident for used in report.l1_per_core]
    return report


def region_lines(regions: list[dict]) -> list[str]:
    """What the conversion summary and the report say of host regions: how many nodes they run, then one
    line per region with its op types and boundary tensors (a region is never silent)."""
    count = sum(len(r["nodes"]) for r in regions)
    lines = [f"host region nodes: {count} in {len(regions)} region{'s' if len(regions) != 1 else ''} (onnxruntime)"]
    for r in regions:
        ops: dict[str, int] = {}
        for _, op in r["nodes"]:
            ops[op] = ops.get(op, 0) + 1
        listed = ", ".join(f"{op} {n}" for op, n in sorted(ops.items()))
        inputs = ", ".join(escape_name(t) for t in r["inputs"]) or "none"
        outputs = ", ".join(escape_name(t) for t in r["outputs"])
        lines.append(f"  region {r['index']}: {len(r['nodes'])} node{'s' if len(r['nodes']) != 1 else ''} "
                     f"({listed}); in: {inputs}; out: {outputs}")
    return lines


BLOCK_FLOAT = ("bfp8", "bfp4")


def weight_reason(tensor, fmt: str):
    """(weight, ONNX node, format, why) of a matmul, linear, conv or embedding weight (the call's second
    operand: biases and norm parameters are not block-float candidates) read in a format that is not
    block-float, else None."""
    reader = next((r for r in tensor.outputs if len(r.inputs) > 1 and r.inputs[1] is tensor
                   and (r.op in MATRIX_OPS or r.op in CONV_OPS or r.op == "embedding")), None)
    if fmt in BLOCK_FLOAT or reader is None:
        return None
    upload = tensor.inputs[0]
    layer = escape_name(reader.attrs.get("_source", ""))
    why = upload.attrs.get("_format_reason")
    if why is None and reader.op in CONV_OPS:
        why = "a conv's host weight: ttnn prepares it on the device in float32 (as the host array)"
    return escape_name(upload.attrs["_param"]), layer, fmt, why or "no format chosen for it: the compute dtype"


def _host_reason(node) -> str:
    """Why a node's result stays on the host (the plan places device buffers only)."""
    if node.op == HOST_REGION:
        count = len(node.attrs["_region_nodes"])
        nodes = f"{count} ONNX node{'s' if count != 1 else ''}"
        return f"host: run by onnxruntime (host region {node.attrs['_region']}, {nodes})"
    readers = {consumer.op for out in node.outputs for consumer in out.outputs}
    if node.op == "from_torch" and readers & set(CONV_OPS):
        return "host: a conv weight; ttnn prepares it on the device at the conv's first call"
    if node.op == "from_torch":
        return "host: a weight a host fallback reads"
    if node.op == "to_torch":
        return "host: read back (a graph output or a host fallback's input)"
    return "host: computed on the host (host fallback)"
