"""The declared schema of compiler notes: the `_`-prefixed attributes passes leave on ttnn nodes for later
passes and the emitter, and the one Python attribute they leave on tensors (its TTNNLayout).

A note is never a ttnn argument (ir/graph.argument_attrs drops it).  Each is declared once below with its
type (a typing annotation; a `Literal` lists the allowed values of an enum), what it means, the ops that may
carry it, who writes it and who reads it.  The IR verifier (ir/verify_ir.py) rejects a note nobody
declared, one of the wrong type and one on an op that may not carry it; `note()` reads a declared note.
Writers and readers are pipeline stages: a pass name (onnx2ttnn convert --print-pipeline), or `emit` (the
program writer), `convert` (the conversion summary), `report` (onnx2ttnn report) or `ir-dump` (--emit-ir and
--dump-ir-after, which show every note).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Optional, Union, get_args, get_origin

import numpy as np

from onnx2ttnn.ir.dtypes import TORCH_DTYPES
from onnx2ttnn.ir.layout import LAYOUT_DTYPES, PAGE_LAYOUTS, TTNNLayout
from onnx2ttnn.ir.ttnn_ops import HOST_COMPUTE, HOST_OUTPUT, HOST_REGION

LOWER, LAYOUTS, DECOMPOSE = "lower-to-ttnn", "assign-layouts", "decompose-layouts"
PLACE, DEALLOCS, MEMCFG, REUSE = "place-memory", "insert-deallocs", "assign-memory-configs", "reuse-conv-weights"
CONSUMERS = ("emit", "convert", "report", "ir-dump")  # stages after the pipeline that read notes

TorchDtype = Literal[TORCH_DTYPES]
Shape = tuple[int, ...]
NHWCDims = tuple[int, int, int, int]
# one argument of a host fallback's helper: an omitted optional input, a node input, or a small constant
HelperArg = Union[None, tuple[Literal["input"], int], tuple[Literal["const"], TorchDtype, Shape, list]]


@dataclass(frozen=True)
class Note:
    """One declared note: the node attribute `_<name>`."""

    name: str
    type: Any  # a typing annotation the value conforms to
    doc: str
    writers: tuple[str, ...]
    readers: tuple[str, ...]
    ops: tuple[str, ...] = ()  # the ops that may carry it (empty: any ttnn op)
    required_on: tuple[str, ...] = ()  # ops whose every node carries it once lowered

    @property
    def key(self) -> str:
        return "_" + self.name


NOTES: dict[str, Note] = {n.key: n for n in (
    Note("source", str, "the ONNX node (or `input X` / `output Y`) a ttnn node was lowered from (`A + B` for a "
         "fused epilogue): the comment above its call, the --per-op report and error messages",
         (LOWER, "fuse-epilogues", DECOMPOSE, PLACE, DEALLOCS), (DECOMPOSE, PLACE, DEALLOCS, MEMCFG, "emit")),
    Note("param", str, "the weight's key in the weights file and in the program's `params`: an upload done "
         "once by load_parameters, never deallocated", (LOWER,),
         (REUSE, PLACE, DEALLOCS, "emit", "convert", "report"), ops=("from_torch",)),
    Note("format_reason", str, "why a weight is uploaded in its format when a pass chose it for a reason worth "
         "saying (a dequantized weight kept in bfloat16: the rounding bfloat8_b would cause; a float weight --weights "
         "auto kept in bf16 or float32, with auto's reason): onnx2ttnn report "
         "lists the weights not in a block-float format with this reason, or the default one",
         (LOWER,), ("report",), ops=("from_torch",)),
    Note("dequantized", str, "the weight fold-dequantize (or a quantized op's rule) computed from integer codes, "
         "as a key of Module.dequantized: the emitter stores it as its codes and scales when they give it back "
         "exactly (emit/weights.py)", (LOWER,), ("emit",), ops=("from_torch",)),
    Note("host", bool, "a weight kept on the host (conv weights and biases, a host fallback's constants)",
         (LOWER,), (LAYOUTS,), ops=("from_torch",)),
    Note("input", str, "the graph input this upload reads (uploads nobody reads are dropped)",
         (LOWER,), (LOWER, DECOMPOSE), ops=("from_torch",)),
    Note("int_range", tuple[int, int], "(low, high) of the device's integer dtype, on the upload of an integer "
         "graph input whose values may lie outside it (int64 into int32): the program checks them at upload time "
         "(an error, never a wrap)", (DECOMPOSE,), ("emit",), ops=("from_torch",)),
    Note("index_rows", int, "the rows of the tables an integer graph input's upload indexes, when embeddings' "
         "indices are its only readers: the program checks its values lie in [-rows, rows - 1] (ONNX Gather's "
         "range) and wraps negative ones to index + rows on the host before the uint32 upload",
         (DECOMPOSE,), ("emit",), ops=("from_torch",)),
    Note("float_dest", bool, "a conv asked for a float32 result at the output tail (lowering/accuracy.py): its "
         "compute config accumulates in a float32 dest, which conv2d needs for a float32-accurate result; a "
         "linear on a QDQ weight's integer codes (lowering/weight_codes.py): HiFi4 and a float32 dest",
         (LOWER,), ("choose-kernel-configs",), ops=("conv2d", "conv_transpose2d", "linear")),
    Note("resident_weights", int, "the bytes per L1 bank the memory plan reserves for this conv's prepared weight "
         "and bias, kept resident in L1 (memory/conv_resident.py): the program moves them there after the first "
         "forward pass (settle_weights) and the cost model reads them from L1", (PLACE,), ("emit", "convert", "report"), ops=("conv2d",)),
    Note("output", str, "the graph output this download (or host fallback's result) returns",
         (LOWER,), ("ir-dump",), ops=("to_torch", HOST_OUTPUT)),
    Note("torch_dtype", TorchDtype, "the torch dtype the program casts a host tensor to: a download's result "
         "(its ONNX dtype, or what host fallbacks compute in), a host fallback's result before its upload",
         (LOWER, DECOMPOSE), ("emit",), ops=("to_torch", "from_torch", HOST_OUTPUT),
         required_on=("to_torch", HOST_OUTPUT)),
    Note("shape", Shape, "the shape a host tensor is reshaped to: after a download (its ONNX shape) or before "
         "an upload (the device shape: a rank-0 value is [1] on the device); on a mesh, the whole batch's",
         (LOWER, "place-on-mesh", "split-tensor-parallel"), ("emit",),
         ops=("to_torch", "from_torch")),
    Note("tp", tuple[Union[None, int, Literal["partial"]], ...], "tensor parallel (docs/design.md §6.21): each "
         "output's split along the mesh's tp axis, one chip's piece: a dim split over the chips, `partial` (a "
         "row-parallel linear's partial sums, which an all_reduce follows), or None (whole on every chip)",
         ("split-tensor-parallel",), ("place-on-mesh", "emit")),
    Note("ccl_chips", int, "a CCL op's chips along its cluster_axis (the cost model's ethernet bytes)",
         ("split-tensor-parallel",), (PLACE, "report", "ir-dump"), ops=("all_reduce", "reduce_scatter", "all_gather")),
    Note("nhwc", NHWCDims, "a download of a flattened NHWC [1, 1, N*H*W, C] tensor: its (N, H, W, C), to "
         "reshape and permute back to NCHW on the host (on a mesh, N of the whole batch)", (LOWER, "place-on-mesh"),
         ("emit",), ops=("to_torch",)),
    Note("fallback", str, "the ONNX op type a host fallback computes (`host region` for a host region): on its "
         "helper call, the downloads feeding it and the upload of its result", (LOWER,),
         (LOWER, LAYOUTS, DECOMPOSE, "emit"), ops=(HOST_COMPUTE, HOST_REGION, "to_torch", "from_torch"),
         required_on=(HOST_COMPUTE, HOST_REGION)),
    Note("pieces", tuple[int, int], "(chips, dim) in a data-parallel program: the host value this node reads or "
         "writes is the list of the chips' pieces (fallback/per_chip.py); a download splits its joined result "
         "along dim, a host computation runs once per piece (dim -1), an upload or a host-computed graph output "
         "joins the pieces along dim", ("place-on-mesh",), ("emit",),
         ops=("to_torch", "from_torch", HOST_COMPUTE, HOST_REGION, HOST_OUTPUT)),
    Note("region", int, "the index k of a host region (fallback/regions.py): its model is the program's REGIONS[k], "
         "its onnxruntime session params['region k']", (LOWER,), ("emit", "report"), ops=(HOST_REGION,),
         required_on=(HOST_REGION,)),
    Note("region_nodes", tuple[tuple[str, str], ...], "the ONNX nodes a host region runs, (name, op type with its "
         "domain outside ai.onnx): the program's comment at the call", (LOWER,), ("emit",), ops=(HOST_REGION,),
         required_on=(HOST_REGION,)),
    Note("region_feeds", tuple[tuple[str, str], ...], "a host region's model inputs, one per call input: (ONNX "
         "name, numpy dtype onnxruntime takes)", (LOWER,), ("emit",), ops=(HOST_REGION,),
         required_on=(HOST_REGION,)),
    Note("region_results", tuple[Optional[TorchDtype], ...], "the torch dtype each output of a host region is "
         "kept in on the host (what host fallbacks compute in); None for a sequence or map, kept as onnxruntime "
         "returns it (fallback/values.py)", (LOWER,), ("emit",), ops=(HOST_REGION,),
         required_on=(HOST_REGION,)),
    Note("helper", str, "the torch function a host fallback calls (fallback/host/<family>.py)", (LOWER,),
         ("emit",), ops=(HOST_COMPUTE,), required_on=(HOST_COMPUTE,)),
    Note("family", str, "the fallback/host module that defines the helper", (LOWER,), ("emit",),
         ops=(HOST_COMPUTE,), required_on=(HOST_COMPUTE,)),
    Note("args", tuple[HelperArg, ...], "the helper's positional arguments: None (an omitted optional input), "
         "('input', i) (node input i) or ('const', torch dtype, shape, values) (a constant written inline)",
         (LOWER,), ("emit",), ops=(HOST_COMPUTE,), required_on=(HOST_COMPUTE,)),
    Note("probes", list[tuple[str, Optional[NHWCDims]]], "the ONNX values this node's output holds, with "
         "their NHWC dims when flattened: verify --per-op compares each with onnxruntime",
         (LOWER, "fuse-epilogues"), ("emit",)),
    Note("dtype", Literal[tuple(LAYOUT_DTYPES)], "the output dtype a lowering rule pins (int32 where values may be "
         "negative, uint32 for embedding indices) instead of the one assign-layouts would choose", (LOWER,),
         (LOWER, LAYOUTS)),
    Note("input_layouts", tuple[Literal[PAGE_LAYOUTS], ...], "page layouts a rule asks of this call's "
         "inputs, overriding the op table's (pad asks ROW_MAJOR to pad the front)", (LOWER,),
         (LAYOUTS, DECOMPOSE)),
    Note("no_program_config", str, "why a matmul / linear reading a sharded input_tensor_a, or an SDPA call, gets no "
         "program config (ir/program_config.choose's or ir/sdpa_config.choose's reason): ttnn then picks its own",
         ("choose-program-configs",), ("ir-dump",),
         ops=("matmul", "linear", "transformer.scaled_dot_product_attention")),
    Note("move", bool, "a to_memory_config the auto policy planned (moves a DRAM-only result to L1)",
         ("insert-moves",), ("ir-dump",), ops=("to_memory_config",)),
)}

# the one Python attribute passes put on tensors (read and written through ir/graph.layout_of / set_layout)
LAYOUT_ATTRIBUTE = "ttnn_layout"
TENSOR_NOTES = {LAYOUT_ATTRIBUTE: Note(
    "ttnn_layout", TTNNLayout, "how and where the tensor lives (ir/layout.py), the single source of truth of "
    "every placement argument", (LAYOUTS, DECOMPOSE, PLACE), (DECOMPOSE, PLACE, DEALLOCS, MEMCFG, "report"))}


def note(node, name: str, default=None):
    """The value of declared note `name` (without the underscore) on `node`, or `default`."""
    key = "_" + name
    if key not in NOTES:
        raise KeyError(f"note {key!r} is not declared (ir/notes.py)")
    return node.attrs.get(key, default)


def problem(key: str, value, op: str) -> Optional[str]:
    """Why `value` may not be node attribute `key` of a `op` node (None when it may)."""
    declared = NOTES.get(key)
    if declared is None:
        return f"undeclared note {key!r} (declare it in ir/notes.py)"
    if declared.ops and op not in declared.ops:
        return f"note {key!r} on a {op} node (only {', '.join(declared.ops)} carry it)"
    if not conforms(value, declared.type):
        return f"note {key!r} = {value!r} is not of its declared type {describe(declared.type)}"
    return None


def conforms(value, kind) -> bool:
    """Whether `value` has the type the annotation `kind` describes (the subset of typing NOTES use)."""
    origin, args = get_origin(kind), get_args(kind)
    if kind is Any:
        return True
    if kind is None or kind is type(None):
        return value is None
    if origin is Union:
        return any(conforms(value, k) for k in args)
    if origin is Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(conforms(v, args[0]) for v in value)
        return len(value) == len(args) and all(conforms(v, k) for v, k in zip(value, args))
    if origin is list:
        return isinstance(value, list) and all(conforms(v, args[0]) for v in value) if args else \
            isinstance(value, list)
    if kind is int:
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    return isinstance(value, kind)


def describe(kind) -> str:
    """A short text of an annotation for error messages."""
    if get_origin(kind) is Literal:
        return "one of " + ", ".join(map(repr, get_args(kind)))
    return getattr(kind, "__name__", None) if isinstance(kind, type) else str(kind).replace("typing.", "")
