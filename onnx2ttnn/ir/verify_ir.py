"""The IR verifier: after a pass, check what must hold of the IR at that point (onnx2ttnn convert --verify-each).

Not to be confused with onnx2ttnn/verify.py, which runs the generated program and compares it with
onnxruntime: this module checks the compiler's own invariants, so that a broken IR is caught after the pass
that broke it, naming the pass, the node and the tensor.

A pass's contract is what must hold after it, and after every later pass (CONTRACTS).  Always:
- notes: every `_` attribute of a ttnn (or fused) node is declared in ir/notes.py, of its declared type, on
  an op that may carry it, and the ops that need a note have it; tensors carry no Python attribute but the
  ones graphsurgeon gives them and the declared layout, of type TTNNLayout;
- deallocations: no node reads a buffer (any of its views) after its `deallocate`, each buffer is
  deallocated at most once, only device buffers that are not weights are.
fold-constants: nodes are in topological order, each tensor written once (lowering walks them in order).
lower-to-ttnn: every node is a ttnn node whose op is in the op table (ir/ttnn_ops.op_info), reading no more
  tensors than the op takes; every declared output shape equals the one ttnn computes from the inputs and
  arguments (ir/ttnn_shapes.py), and the graph outputs have the shapes module.outputs declares.
assign-layouts: every tensor a ttnn node reads or writes (but the program's arguments and the weights'
  host arrays) has a legal TTNNLayout (ir/layout.py rules; a sharded one fits the tensor and the device
  grid), on the host exactly where the op puts or reads it (downloads, host fallbacks, host weights; to_torch
  reads either), and all views of a buffer share its placement.
decompose-layouts: every device input has the page layout its op needs (node_input_layout); the `dtype` and
  `layout` arguments of uploads, conversions and embeddings are the ones their output layouts call for.
choose-kernel-configs: every op whose entry names a kernel config keyword (ir/ttnn_ops) carries a KernelConfig
  under it (ir/kernel_config.py), and no other op carries one.
choose-program-configs: every matmul / linear reading a sharded input_tensor_a carries a ProgramConfig
  (ir/program_config.py) or says why not (note `_no_program_config`), so does every scaled_dot_product_attention
  with an SDPAConfig (ir/sdpa_config.py); no other call carries one.
place-memory: sharded tensors only where the probed op facts admit them, DRAM-only ops writing DRAM
  (ir/verify_placements.py).
insert-deallocs: every device buffer but the weights is deallocated (exactly once, with the check above).
assign-memory-configs: every op taking a memory_config has the one its output layout derives (ir/verify_placements.py).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Optional, Sequence

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import VerificationError
from onnx2ttnn.ir.aliases import buffer_roots
from onnx2ttnn.ir.graph import FUSED_DOMAIN, TTNN_DOMAIN, Module, TTNNRef, layout_of
from onnx2ttnn.ir.kernel_config import KernelConfig
from onnx2ttnn.ir.layout import LayoutError, TTNNLayout
from onnx2ttnn.ir.liveness import buffers
from onnx2ttnn.ir.program_config import ProgramConfig
from onnx2ttnn.ir.sdpa_config import SDPAConfig
from onnx2ttnn.ir.notes import NOTES, TENSOR_NOTES, problem
from onnx2ttnn.ir.layout import physical_2d
from onnx2ttnn.ir.ttnn_ops import (HOST_COMPUTE, HOST_OUTPUT, HOST_REGION, KERNEL_CONFIG_KEYWORDS, Page,
                                   node_input_layout, op_info)
from onnx2ttnn.ir.ttnn_shapes import ShapeError, inferred_shapes
from onnx2ttnn.ir.verify_placements import Found, memory_configs, placements

ALWAYS = ("notes", "deallocations")
CONTRACTS: dict[str, tuple[str, ...]] = {
    "fold-constants": ("schedule",),
    "lower-to-ttnn": ("ttnn-ops", "shapes"),
    "assign-layouts": ("layouts",),
    "decompose-layouts": ("pages", "conversions"),
    "choose-kernel-configs": ("kernel-configs",),
    "place-memory": ("placements",),
    "choose-program-configs": ("program-configs",),
    "insert-deallocs": ("freed",),
    "assign-memory-configs": ("memory-configs",),
}
NOTE_DOMAINS = (TTNN_DOMAIN, FUSED_DOMAIN)  # ttnn nodes and fused nodes (fusion/); ONNX nodes keep the model's own
HOST_RESULTS = ("to_torch", HOST_COMPUTE, HOST_REGION, HOST_OUTPUT)  # ops whose outputs are host tensors
CONVERSIONS = ("from_torch", "to_layout", "typecast", "embedding")  # their dtype / layout arguments follow layouts
EITHER_SIDE = ("to_torch",)  # reads a device tensor or a host ttnn tensor (a host weight a fallback reads)
MAX_SHOWN = 20  # problems listed in one error message
# the Python attributes graphsurgeon itself gives tensors (a Variable turned Constant keeps its own too)
_GS_ATTRIBUTES = set(vars(gs.Variable("v"))) | set(vars(gs.Constant("c", np.zeros(1))))
_REQUIRED = {}  # op -> the notes every node of it carries
for _note in NOTES.values():
    for _op in _note.required_on:
        _REQUIRED.setdefault(_op, []).append(_note.key)


class IRVerificationError(VerificationError):
    """The IR breaks a contract after a pass; `problems` lists every broken invariant found."""

    def __init__(self, after: str, problems: list[str]) -> None:
        self.after, self.problems = after, problems
        shown = "\n".join(f"  {p}" for p in problems[:MAX_SHOWN])
        more = f"\n  ... and {len(problems) - MAX_SHOWN} more" if len(problems) > MAX_SHOWN else ""
        super().__init__(f"IR verification failed after pass {after!r} ({len(problems)} problem"
                         f"{'s' if len(problems) != 1 else ''}):\n{shown}{more}")


def contracts_after(passes_run: Sequence[str]) -> tuple[str, ...]:
    """The checks that apply once these passes have run."""
    return tuple(dict.fromkeys(ALWAYS + tuple(c for name in passes_run for c in CONTRACTS.get(name, ()))))


def verify_ir(module: Module, after: str, passes_run: Sequence[str] = (), device=None) -> None:
    """Check the IR after pass `after` (`passes_run`: every pass run so far, `after` included); raise
    IRVerificationError naming the pass, and each problem's node and tensor."""
    graph = module.graph
    index = {id(n): i for i, n in enumerate(graph.nodes)}
    problems = []
    for check in contracts_after(list(passes_run) or [after]):
        try:
            for node, tensor, message in CHECKS[check](module, device):
                where = _node_text(node, index) if node is not None else "graph"
                what = f", tensor {tensor.name!r}" if tensor is not None else ""
                problems.append(f"[{check}] {where}{what}: {message}")
        except Exception as exc:  # an IR so broken the check cannot walk it: still name the pass
            problems.append(f"[{check}] cannot be checked: {type(exc).__name__}: {exc}")
    if problems:
        raise IRVerificationError(after, problems)


def _node_text(node: gs.Node, index: dict) -> str:
    if node.domain == TTNN_DOMAIN:
        return f"node {index.get(id(node), '?')} ttnn.{node.op} (from {node.attrs.get('_source', '')!r})"
    return f"node {index.get(id(node), '?')} {node.op} {node.name!r}"


def _notes(module: Module, device) -> Found:
    for node in module.graph.nodes:
        if node.domain not in NOTE_DOMAINS:
            continue
        for key, value in node.attrs.items():
            wrong = problem(key, value, node.op) if key.startswith("_") else None
            if wrong:
                yield node, None, wrong
        for key in _REQUIRED.get(node.op, ()) if node.domain == TTNN_DOMAIN else ():
            if key not in node.attrs:
                yield node, None, f"lacks note {key!r}, which every {node.op} carries"
    for node, tensor in _tensors(module.graph):
        extra = set(vars(tensor)) - _GS_ATTRIBUTES - set(TENSOR_NOTES)
        if extra:
            yield node, tensor, f"undeclared tensor attribute(s) {', '.join(sorted(extra))} (ir/notes.py)"
        layout = layout_of(tensor)
        if layout is not None and not isinstance(layout, TTNNLayout):
            yield node, tensor, f"layout {layout!r} is not a TTNNLayout"


def _tensors(graph: gs.Graph):
    """(a node using it, tensor) for every tensor the nodes read or write, each once."""
    seen = set()
    for node in graph.nodes:
        for tensor in list(node.inputs) + list(node.outputs):
            if id(tensor) not in seen:
                seen.add(id(tensor))
                yield node, tensor


def _ttnn_ops(module: Module, device) -> Found:
    for node in module.graph.nodes:
        if node.domain != TTNN_DOMAIN:
            yield node, None, f"is not a ttnn node (domain {node.domain!r}) after lowering"
            continue
        try:
            info = op_info(node.op)
        except KeyError as exc:
            yield node, None, str(exc.args[0])
            continue
        slots = [p for p in info.inputs if p not in node.attrs]  # an argument given as a value takes its slot
        if not info.variadic_input and len(node.inputs) > len(slots):
            yield node, None, (f"reads {len(node.inputs)} tensors but ttnn.{node.op} takes {len(slots)} here "
                               f"({', '.join(slots) or 'none'}): the emitter would drop the rest")


def _schedule(module: Module, device) -> Found:
    graph = module.graph
    written = {id(t) for t in graph.inputs}
    for node in graph.nodes:
        for tensor in node.inputs:
            if tensor.name and not isinstance(tensor, gs.Constant) and id(tensor) not in written:
                yield node, tensor, "reads a tensor no earlier node writes (not in topological order?)"
        for tensor in node.outputs:
            if id(tensor) in written:
                yield node, tensor, "writes a tensor already written"
            written.add(id(tensor))
    for tensor in graph.outputs:
        if not isinstance(tensor, gs.Constant) and id(tensor) not in written:
            yield None, tensor, "graph output that no node writes"


def _shapes(module: Module, device) -> Found:
    for node in module.graph.nodes:
        try:
            shapes = inferred_shapes(node)
        except ShapeError as exc:
            yield node, None, str(exc)
            continue
        if shapes and node.op == "from_torch" and node.attrs.get("_tp"):  # a weight split over the chips
            shapes = [tuple(d // module.tp if k == dim else d for k, d in enumerate(shape))
                      for shape, dim in zip(shapes, node.attrs["_tp"])]
        for tensor, shape in zip(node.outputs, shapes or ()):
            declared = tuple(tensor.shape) if tensor.shape is not None else None
            if declared != shape:
                yield node, tensor, f"declared shape {declared} but ttnn computes {shape}"
    specs = {spec.onnx_name: spec for spec in module.outputs}
    for tensor in module.graph.outputs:
        spec = specs.get(tensor.name)
        if spec is not None and spec.shape is None:  # a sequence or map (fallback/values.py): no shape
            continue
        if spec is not None and tuple(tensor.shape) != tuple(spec.shape):
            yield None, tensor, f"graph output of shape {tuple(tensor.shape)}, declared {tuple(spec.shape)}"


def _layouts(module: Module, device) -> Found:
    for node, tensor in _tensors(module.graph):
        if not tensor.inputs:
            continue  # the program's arguments and the weights' host arrays: no ttnn tensor yet
        layout = layout_of(tensor)
        if layout is None:
            yield node, tensor, "has no TTNNLayout after assign-layouts"
            continue
        message = _illegal(tensor, layout, device)
        if message:
            yield node, tensor, message
    for node in module.graph.nodes:
        for tensor in node.outputs:
            layout = layout_of(tensor)
            host = node.op in HOST_RESULTS or (node.op == "from_torch" and bool(node.attrs.get("_host")))
            if layout is not None and layout.on_device == host:
                yield node, tensor, f"{layout} but {node.op} writes {'host' if host else 'device'} tensors here"
        for i, tensor in enumerate(node.inputs if node.op not in EITHER_SIDE else ()):
            layout = layout_of(tensor)
            host = node_input_layout(node, i) == Page.HOST
            if layout is not None and layout.on_device == host:
                yield node, tensor, f"{layout} but {node.op} reads a {'host' if host else 'device'} tensor here"
    yield from _views(module.graph)


def _illegal(tensor: gs.Tensor, layout: TTNNLayout, device) -> Optional[str]:
    """Why a layout is not legal for this tensor (None when it is)."""
    broken = _broken(layout)
    if broken:
        return f"illegal layout {layout}: {broken}"
    if layout.memory_layout in (None, "interleaved"):
        return None
    height, width = physical_2d(tensor.shape, layout)
    (gx, gy), (sh, sw) = layout.grid, layout.shard
    along_h, along_w = -(-height // sh), -(-width // sw)
    fits = {"height_sharded": sw == width and along_h <= gx * gy,
            "width_sharded": sh == height and along_w <= gx * gy,
            "block_sharded": along_h <= gy and along_w <= gx}[layout.memory_layout]
    if not fits:
        return f"{layout} does not fit the tensor's {height}x{width} (padded 2-D)"
    if device is not None and (gx > device.grid_x or gy > device.grid_y):
        return f"{layout} needs more cores than {device.name}'s {device.grid_x}x{device.grid_y}"
    return None


@functools.lru_cache(maxsize=4096)
def _broken(layout: TTNNLayout) -> str:
    """The rule of ir/layout.py a layout breaks ("" when none): rebuilt, it runs the checks again."""
    try:
        dataclasses.replace(layout)
    except (LayoutError, TypeError) as exc:
        return str(exc)
    return ""


def _views(graph: gs.Graph) -> Found:
    """Every view of a buffer is placed like the buffer (they share it)."""
    for buf in buffers(graph):
        placed = _placement(layout_of(buf.root))
        for member in buf.members[1:]:
            if _placement(layout_of(member)) != placed:
                yield member.inputs[0], member, (f"view placed {layout_of(member)} but its buffer "
                                                 f"{buf.root.name!r} is {layout_of(buf.root)}")


def _placement(layout: TTNNLayout) -> tuple:
    return layout.buffer, layout.memory_layout, layout.grid, layout.shard


def _pages(module: Module, device) -> Found:
    for node in module.graph.nodes:
        for i, tensor in enumerate(node.inputs):
            layout = layout_of(tensor)
            if layout is None or not layout.on_device:
                continue
            need = node_input_layout(node, i)
            if need == Page.SAME:
                need = layout_of(node.inputs[0]).page
            if need in (Page.TILE, Page.ROW_MAJOR) and layout.page != need:
                yield node, tensor, f"input {i} is {layout.page} but ttnn.{node.op} needs {need} here"


def _conversions(module: Module, device) -> Found:
    for node in module.graph.nodes:
        out = layout_of(node.outputs[0]) if node.outputs and node.op in CONVERSIONS else None
        if out is None:
            continue
        wanted = {"dtype": TTNNRef(out.ttnn_dtype)} if node.op in ("from_torch", "typecast") else {}
        if out.on_device and node.op != "typecast":
            wanted["layout"] = TTNNRef("TILE_LAYOUT" if out.is_tile else "ROW_MAJOR_LAYOUT")
        for name, value in wanted.items():
            if node.attrs.get(name) != value:
                yield node, node.outputs[0], f"{name}={node.attrs.get(name)!r} but its layout {out} calls for {value!r}"


def _deallocations(module: Module, device) -> Found:
    graph = module.graph
    if not any(node.op == "deallocate" for node in graph.nodes):
        return
    roots = buffer_roots(graph)
    weights = {id(n.outputs[0]) for n in graph.nodes if n.op == "from_torch" and n.attrs.get("_param")}
    freed: dict[int, int] = {}  # id(buffer root) -> index of its deallocate
    for index, node in enumerate(graph.nodes):
        for tensor in node.inputs:
            root = roots.get(id(tensor), tensor)
            if id(root) in freed:
                what = "deallocates again" if node.op == "deallocate" else "reads"
                yield node, tensor, (f"{what} buffer {root.name!r} after its deallocate (node {freed[id(root)]})")
        if node.op != "deallocate":
            continue
        tensor = node.inputs[0] if node.inputs else None
        layout = layout_of(tensor) if tensor is not None else None
        if layout is None or not layout.on_device or node.outputs or len(node.inputs) != 1:
            yield node, tensor, "a deallocate takes one device tensor and writes nothing"
            continue
        root = roots.get(id(tensor), tensor)
        if id(root) in weights:
            yield node, tensor, "deallocates a weight (loaded once by load_parameters)"
        freed.setdefault(id(root), index)


def _freed(module: Module, device) -> Found:
    graph = module.graph
    roots = buffer_roots(graph)
    freed = {id(roots.get(id(n.inputs[0]), n.inputs[0])) for n in graph.nodes if n.op == "deallocate" and n.inputs}
    for buf in buffers(graph):
        if not buf.is_param and id(buf.root) not in freed:
            yield buf.root.inputs[0], buf.root, "device buffer never deallocated"


def _kernel_configs(module: Module, device) -> Found:
    for node in module.graph.nodes:
        keyword = op_info(node.op).kernel_config
        for name in KERNEL_CONFIG_KEYWORDS:
            value = node.attrs.get(name)
            if name == keyword and not isinstance(value, KernelConfig):
                yield node, None, f"{name} is {value!r}, not a KernelConfig (choose-kernel-configs sets one)"
            elif name != keyword and value is not None:
                yield node, None, f"{name} on ttnn.{node.op}, whose entry takes {keyword or 'no kernel config'}"


def _program_configs(module: Module, device) -> Found:
    for node in module.graph.nodes:
        value = node.attrs.get("program_config")
        layout = layout_of(node.inputs[0]) if node.domain == TTNN_DOMAIN and node.inputs else None
        sharded = layout is not None and layout.memory_layout in ("height_sharded", "width_sharded")
        if node.op == "transformer.scaled_dot_product_attention":
            if not isinstance(value, SDPAConfig) and "_no_program_config" not in node.attrs:
                yield node, None, f"an SDPA call whose program_config is {value!r}, not an SDPAConfig or a reason"
            continue
        if value is not None and not (isinstance(value, ProgramConfig) and sharded):
            yield node, None, f"program_config {value!r} on a call that is not a sharded matmul / linear"
        elif value is None and sharded and op_info(node.op).program_config and "_no_program_config" not in node.attrs:
            yield node, None, "a sharded matmul / linear without a program config or a reason (_no_program_config)"


CHECKS = {"notes": _notes, "deallocations": _deallocations, "ttnn-ops": _ttnn_ops, "schedule": _schedule,
          "shapes": _shapes, "layouts": _layouts, "pages": _pages, "conversions": _conversions,
          "placements": placements, "freed": _freed, "memory-configs": memory_configs,
          "kernel-configs": _kernel_configs, "program-configs": _program_configs}
