"""Can a program's forward be captured as one ttnn trace?  An analysis of the final graph (it rewrites nothing).

A ttnn trace records the device commands of a stretch of ops and replays them with the same buffer addresses;
host work cannot be recorded: no read back to the host (to_torch, from_device), no write from it (from_torch,
to_device) and no host computation (host fallbacks, host regions) may sit between the first and the last
device op.  The forward is traceable when its only host steps are the uploads of the graph inputs (first) and
the downloads of the graph outputs (last).  The traced program then

  - uploads each input once into a persistent device buffer (`uploads`) and afterwards copies new values into
    that buffer (ttnn.copy_host_to_device_tensor), so the trace reads it at the address it was captured with;
  - captures `body`, leaving out every deallocation of an input's or an output's buffer (`kept`): inputs stay
    for the next copy, outputs are what the replay writes and the host reads;
  - reads the outputs with `downloads` after each replay.

    plan = trace_plan(graph)
    plan.reason   # None when traceable; else why not, naming the ONNX node ("host fallback: ONNX Mod 'm'")
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.aliases import buffer_roots
from onnx2ttnn.ir.ttnn_ops import HOST_COMPUTE, HOST_OPS, HOST_OUTPUT, HOST_REGION

# ttnn calls that move data between the host and the device (a trace cannot record them)
HOST_TRANSFERS = ("from_torch", "to_torch", "from_device", "to_device", "as_tensor")


@dataclass
class TracePlan:
    """How a forward splits into input uploads, a traceable device body and output downloads."""

    reason: Optional[str] = None  # why the forward cannot be traced (None: it can)
    uploads: list = field(default_factory=list)  # from_torch of graph inputs, in program order
    body: list = field(default_factory=list)  # the device ops to capture, in program order
    downloads: list = field(default_factory=list)  # to_torch / host_output of graph outputs, in program order
    kept: list = field(default_factory=list)  # deallocations left out of the body (inputs', outputs' buffers)

    @property
    def traceable(self) -> bool:
        return self.reason is None

    def summary(self) -> str:
        """One line for the program header and the conversion summary."""
        if self.traceable:
            return (f"traceable (--trace): {len(self.body)} device calls captured, {len(self.uploads)} persistent "
                    f"input buffer{'s' if len(self.uploads) != 1 else ''}")
        return f"not traceable (--trace refused): {self.reason}"


def trace_plan(graph: gs.Graph) -> TracePlan:
    """Split the forward of a final ttnn graph (parameter uploads excluded) for a traced program."""
    nodes = [n for n in graph.nodes if not n.attrs.get("_param")]
    inputs = {id(t) for t in graph.inputs}
    outputs = {id(t) for t in graph.outputs}
    plan = TracePlan()
    downloaded: set[int] = set()  # the device tensors the downloads read
    host_steps = []
    for node in nodes:
        if node.op == "from_torch" and id(node.inputs[0]) in inputs:
            plan.uploads.append(node)
        elif _is_download(node, outputs):
            plan.downloads.append(node)
            downloaded.add(id(node.inputs[0]))
        elif node.op != "deallocate" and _host_step(node):
            host_steps.append(node)
    # name the host computation itself rather than the read that feeds it
    host_steps.sort(key=lambda n: n.op not in (HOST_COMPUTE, HOST_REGION))
    plan.reason = _host_step(host_steps[0]) if host_steps else None
    if plan.reason is None:
        plan.reason = _outputs_not_downloaded(graph, plan)
    if plan.reason is not None:
        return TracePlan(reason=plan.reason)
    roots = buffer_roots(graph)
    keep = {id(roots.get(id(n.outputs[0]), n.outputs[0])) for n in plan.uploads}
    keep |= {id(roots.get(key, None)) for key in downloaded if roots.get(key) is not None}
    taken = {id(n) for n in plan.uploads + plan.downloads}
    for node in nodes:
        if id(node) in taken:
            continue
        if node.op == "deallocate" and id(roots.get(id(node.inputs[0]), node.inputs[0])) in keep:
            plan.kept.append(node)
        else:
            plan.body.append(node)
    return plan


def _is_download(node: gs.Node, outputs: set) -> bool:
    """A to_torch whose result is a graph output (or only feeds the host_output that returns it)."""
    if node.op == HOST_OUTPUT:
        return id(node.outputs[0]) in outputs and node.inputs[0].inputs[0].op == "to_torch"
    if node.op != "to_torch":
        return False
    result = node.outputs[0]
    return id(result) in outputs or (bool(result.outputs) and all(
        c.op == HOST_OUTPUT and id(c.outputs[0]) in outputs for c in result.outputs))


def _host_step(node: gs.Node) -> Optional[str]:
    """Why `node` cannot sit inside a trace, or None when it is a device op."""
    source = ascii(node.attrs.get("_source", ""))
    if node.op == HOST_REGION:
        return f"host region {node.attrs.get('_region')} (onnxruntime on the host) at {source}"
    if node.op == HOST_COMPUTE:
        return f"host fallback: ONNX {node.attrs.get('_fallback', '?')} {source} runs on the host"
    if node.op in HOST_TRANSFERS or node.op in HOST_OPS:
        direction = "read back to" if node.op in ("to_torch", "from_device") else "written from"
        return f"a value is {direction} the host inside the forward (ttnn.{node.op} at {source})"
    return None


def _outputs_not_downloaded(graph: gs.Graph, plan: TracePlan) -> Optional[str]:
    """Every graph output must come from a download of a device tensor (not, say, straight from an input)."""
    produced = {id(t) for n in plan.downloads for t in n.outputs}
    for t in graph.outputs:
        if id(t) not in produced:
            return f"output {ascii(t.name)} is not read from a device tensor"
    return None


def persistent_buffers(graph) -> frozenset:
    """id() of the buffer roots a traced run keeps allocated from their birth to the end of the forward and
    between replays: the persistent input buffers and the outputs each replay writes.  The memory planner
    counts them so (memory/buffers.py), since the eager program frees them earlier.  Empty when the forward
    cannot be traced.  `graph` is a graph or a memory PlanningView (its `inputs`, `outputs` and `nodes`)."""
    plan = trace_plan(graph)
    if not plan.traceable:
        return frozenset()
    roots = buffer_roots(graph)
    held = [n.outputs[0] for n in plan.uploads] + [n.inputs[0] for n in plan.downloads if n.op == "to_torch"]
    return frozenset(id(roots.get(id(t), t)) for t in held)
