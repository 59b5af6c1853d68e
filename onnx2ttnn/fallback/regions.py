"""Host regions: the ONNX nodes nothing on the device or in torch serves, cut out and run by onnxruntime.

A node joins a host region when it has neither a ttnn lowering nor a torch fallback (or its rule declines
it) and onnxruntime's CPU provider runs it (`onnxruntime_runs`: a kernel of its domain, op and schema
version, or a schema with a function body onnxruntime inlines): a contrib op of com.microsoft, a Loop with
a data-dependent exit, sequence ops, anything a rule declines.  `partition` groups those nodes into
regions; `build_region` cuts one region out as a small ONNX model of its own (its constants as
initializers), which the generated program stores next to itself and runs with one
`onnxruntime.InferenceSession` opened in `load_parameters`.  The converter itself never runs the regions
(it only checks that onnxruntime accepts each model, `check_region`).

Partition (linear in the nodes and edges, one pass in schedule order and a union-find).  Every node gets a
level: a hosted node the largest level of its producers, a device node the largest of its device producers'
levels and its hosted producers' levels plus one (0 without producers).  Along any path the level never
falls, and it rises where a path leaves the hosted nodes for a device node.  A region is a connected set of
hosted nodes of one level, joined by their hosted producer -> consumer edges.  It is convex: a path that
leaves it through a device node reaches a higher level and cannot come back, and one that leaves it through
a hosted node of the same level would have joined that node to it.  So the program can run each region in
one call between the device ops before and after it.  Maximal as far as the levels see: two connected
hosted nodes are kept apart only when a device path from some hosted node reaches the later one.  Where
that path starts only in another region, merging them would have been legal; the partition is
conservative there (one region more, never a cycle).
Before: `a = Relu(x); b = com.microsoft::Gelu(a); y = Add(b, x)`; after: `a` on the device, downloaded, one
host region {Gelu} run by onnxruntime, `b` uploaded, `y` on the device.
"""
from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Optional

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.fallback.values import VALUE_DTYPE, is_value, kind
from onnx2ttnn.ir.graph import onnx_domain

REGION_FALLBACK = "host region"  # the _fallback note of a region's call and of the transfers around it

# ai.onnx op types no lowering rule or torch fallback serves whose ONNX backend node tests pass through host
# regions (tests/node: every non-excluded case, fp32), with the schema versions those cases exercise: what the
# support table lists and the node tests claim.  Any other op onnxruntime runs still goes to a region; it
# is only not claimed.  (If, Loop and Scan have rules, lowering/control_flow.py, which rewrite them or
# decline them into a region.)
REGION_CHECKED: dict[str, tuple[int, ...]] = {
    "BlackmanWindow": (17,), "CausalConvWithState": (27,), "CenterCropPad": (18,), "Col2Im": (18,), "Constant": (25,), "ConstantOfShape": (25,), "DeformConv": (22,),
    "HammingWindow": (17,), "HannWindow": (17,), "LinearAttention": (27,), "LpPool": (22,),
    "MelWeightMatrix": (17,), "NonMaxSuppression": (11,), "NonZero": (13,), "Size": (25,), "Swish": (24,),
    "TensorScatter": (24,), "TfIdfVectorizer": (9,)}


def region_checked(op_type: str, opset: int) -> bool:
    """Whether ai.onnx `op_type` in a model of opset `opset` resolves to a schema version REGION_CHECKED names."""
    from onnx2ttnn.lowering.versions import schema_version

    return schema_version("", op_type, opset) in REGION_CHECKED.get(op_type, ())


def label(node: gs.Node) -> str:
    """`Op` for an ai.onnx node, `domain::Op` for any other."""
    domain = onnx_domain(node)
    return node.op if not domain else f"{domain}::{node.op}"


# --- what onnxruntime runs ---------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _kernels() -> dict[tuple[str, str], tuple[tuple[int, int], ...]]:
    """(domain, op) -> the version ranges of onnxruntime's CPU kernels."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    table: dict[tuple[str, str], list] = {}
    for kernel in state.get_all_opkernel_def():
        if kernel.provider == "CPUExecutionProvider":
            domain = "" if kernel.domain in ("", "ai.onnx") else kernel.domain
            table.setdefault((domain, kernel.op_name), []).append(tuple(kernel.version_range))
    return {key: tuple(ranges) for key, ranges in table.items()}


@lru_cache(maxsize=None)
def onnxruntime_runs(domain: str, op_type: str, version: Optional[int]) -> bool:
    """Whether onnxruntime's CPU provider runs `op_type` of `domain` in a model importing the domain at
    `version`: a kernel covers the schema version that serves it, or the schema has a function body."""
    schema = None
    with contextlib.suppress(onnx.defs.SchemaError):
        schema = onnx.defs.get_schema(op_type, max_inclusive_version=version or 1, domain=domain)
    since = schema.since_version if schema is not None else version or 1
    if any(lo <= since <= hi for lo, hi in _kernels().get((domain, op_type), ())):
        return True
    return schema is not None and (schema.has_function or schema.has_context_dependent_function)


def carriable(node: gs.Node) -> bool:
    """False when a tensor of the node has an element type numpy has none for (graphsurgeon keeps the
    TensorProto enum: float8, int4, ...): the program could not pass it between onnxruntime and the device.
    A sequence or map (fallback/values.py) never goes to the device: it does not count."""
    return not any(isinstance(t.dtype, (int, np.integer)) and not isinstance(t.dtype, bool)
                   for t in list(node.inputs) + list(node.outputs) if t.name and not is_value(t))


# --- what a node reads -------------------------------------------------------------------------------
def node_reads(node: gs.Node) -> list[gs.Tensor]:
    """The tensors `node` reads: its inputs, then the outer-scope tensors its subgraphs (Loop, If, Scan
    bodies) use, each once, in a fixed order."""
    reads = {id(t): t for t in node.inputs if t.name}
    for subgraph in node.subgraphs():
        for tensor in subgraph._foreign_tensors().values():  # graphsurgeon's own walk of nested bodies
            if tensor.name:  # (an omitted optional input of a body's node is an empty-named tensor)
                reads.setdefault(id(tensor), tensor)
    return list(reads.values())


# --- partition --------------------------------------------------------------------------------------
def partition(nodes: list[gs.Node], hosted: set[int]) -> list[list[gs.Node]]:
    """The host regions of `nodes` (in topological order) whose ids are in `hosted`: each a list of nodes in
    schedule order, the regions ordered by their first node (see the module docstring)."""
    position = {id(n): i for i, n in enumerate(nodes)}
    level: dict[int, int] = {}
    parent = list(range(len(nodes)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, node in enumerate(nodes):
        is_hosted = id(node) in hosted
        mine, joins = 0, []
        for tensor in node_reads(node):
            for producer in tensor.inputs:
                j = position.get(id(producer))
                if j is None:
                    continue
                hosted_producer = id(producer) in hosted
                mine = max(mine, level[j] + (1 if hosted_producer and not is_hosted else 0))
                if hosted_producer and is_hosted:
                    joins.append(j)
        level[i] = mine
        for j in joins:
            if level[j] == mine:
                a, b = root(i), root(j)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    groups: dict[int, list[gs.Node]] = {}
    for i, node in enumerate(nodes):
        if id(node) in hosted:
            groups.setdefault(root(i), []).append(node)
    return [groups[key] for key in sorted(groups)]


# --- one region as a model -----------------------------------------------------------------------------
@dataclass
class Region:
    """One host region: its nodes, the runtime tensors it reads and the tensors it gives the rest."""

    index: int
    nodes: list[gs.Node]
    inputs: list[gs.Variable]  # runtime values from outside (constants become the model's initializers)
    outputs: list[gs.Variable]  # values read outside the region, or graph outputs
    model: bytes = b""
    members: set[int] = field(default_factory=set)  # ids of its nodes
    read_outside: set[int] = field(default_factory=set)  # ids of its outputs that nodes outside it read

    @property
    def source(self) -> str:
        return f"{REGION_FALLBACK} {self.index}"

    def ops(self) -> dict[str, int]:
        """ONNX op label -> how many of the region's nodes have it."""
        counts: dict[str, int] = {}
        for node in self.nodes:
            counts[label(node)] = counts.get(label(node), 0) + 1
        return dict(sorted(counts.items()))


def build_region(index: int, nodes: list[gs.Node], graph: gs.Graph, opsets: dict[str, int],
                 readers: dict[int, list[gs.Node]]) -> Region:
    """Region `index` of `nodes` (one group of `partition`) in `graph`: its boundary and its ONNX model
    importing the domains `opsets`.  `readers` maps a tensor id to the nodes that read it (subgraph reads
    included)."""
    members = {id(n) for n in nodes}
    made = {id(t) for n in nodes for t in n.outputs if t.name}
    graph_outputs = {id(t) for t in graph.outputs}
    inputs: dict[int, gs.Tensor] = {}
    for node in nodes:
        for tensor in node_reads(node):
            if id(tensor) not in made and isinstance(tensor, gs.Variable):
                inputs.setdefault(id(tensor), tensor)
    outputs = [t for n in nodes for t in n.outputs if t.name and (
        id(t) in graph_outputs or any(id(r) not in members for r in readers.get(id(t), ())))]
    read_outside = {id(t) for t in outputs if any(id(r) not in members for r in readers.get(id(t), ()))}
    region = Region(index, list(nodes), list(inputs.values()), outputs, members=members, read_outside=read_outside)
    region.model = _model_bytes(region, opsets)
    return region


def _model_bytes(region: Region, opsets: dict[str, int]) -> bytes:
    """The region as a serialized ONNX model: its nodes, their constants as initializers, its boundary
    tensors as the model's inputs and outputs (with their dtypes and shapes)."""
    sub = gs.Graph(nodes=region.nodes, inputs=region.inputs, outputs=region.outputs,
                   name=f"onnx2ttnn_host_region_{region.index}")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            model = gs.export_onnx(sub, do_type_check=False)
    except Exception as exc:  # graphsurgeon raises many types on what it cannot export
        raise ConversionError(f"{region.source} ({_names(region)}): cannot cut it out as an ONNX model: "
                              f"{exc}") from None
    present = {t.name for t in model.graph.initializer}
    for node in region.nodes:  # constants a subgraph reads from outside (graphsurgeon exports only its own)
        for tensor in node_reads(node):
            if isinstance(tensor, gs.Constant) and tensor.name not in present:
                model.graph.initializer.append(onnx.numpy_helper.from_array(np.asarray(tensor.values), tensor.name))
                present.add(tensor.name)
    values = {t.name for t in region.outputs if is_value(t)}
    for vi in model.graph.output:  # (graphsurgeon writes a sequence of maps as a sequence of UNDEFINED tensors)
        if vi.name in values:
            vi.ClearField("type")  # onnxruntime infers the type of an output declared without one
    used = {onnx_domain(n) for n in _all_nodes(region.nodes)}
    del model.opset_import[:]
    for domain in sorted(used | {""}):
        model.opset_import.append(onnx.helper.make_opsetid(domain, opsets.get(domain, 1)))
    model.producer_name = "onnx2ttnn host region"
    if _open_subgraphs(model.graph):
        _symbolic_inputs(model.graph)
    for vi in list(model.graph.input) + list(model.graph.output):
        if vi.name not in values and vi.type.tensor_type.elem_type == onnx.TensorProto.UNDEFINED:
            raise ConversionError(f"{region.source} ({_names(region)}): tensor {vi.name!r} has no known dtype")
    return model.SerializeToString()


def _open_subgraphs(graph: onnx.GraphProto) -> bool:
    """Drop the value infos inside the bodies of `graph`'s nodes (shape inference filled them for the static
    input shapes; onnxruntime infers them again); True when there were bodies."""
    found = False
    for node in graph.node:
        for attr in node.attribute:
            for body in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                del body.value_info[:]
                _open_subgraphs(body)
                found = True
    return found


def _symbolic_inputs(graph: onnx.GraphProto) -> None:
    """The region's inputs keep their rank but not their sizes: onnxruntime checks every branch of an If
    against the input shapes when it opens the model, and a branch the inputs never take at run time may not
    fit them (silero-vad's 8 kHz branch on 512 samples of 16 kHz audio).  The program checks the shapes the
    region returns."""
    for value in graph.input:
        for index, dim in enumerate(value.type.tensor_type.shape.dim):
            dim.Clear()
            dim.dim_param = f"d{index}"


def _all_nodes(nodes: Iterable[gs.Node]):
    for node in nodes:
        yield node
        for subgraph in node.subgraphs():
            yield from _all_nodes(subgraph.nodes)


def _names(region: Region, shown: int = 5) -> str:
    names = [f"{n.name!r} ({label(n)})" for n in region.nodes[:shown]]
    return ", ".join(names) + (f", ... ({len(region.nodes)} nodes)" if len(region.nodes) > shown else "")


def check_region(region: Region) -> Optional[str]:
    """None when onnxruntime opens the region's model, else its reason."""
    from onnx2ttnn import ort

    try:
        ort.session(region.model)
    except ConversionError as exc:
        return str(exc)
    return None


def numpy_dtype(tensor: gs.Tensor) -> str:
    """The numpy dtype name of a region boundary tensor (its ONNX dtype)."""
    return np.dtype(tensor.dtype).name


def schedule(nodes: list[gs.Node], regions: list[Region]) -> list:
    """`nodes` with each region's nodes replaced by the region, in a topological order that keeps the
    original one wherever it can (Kahn's algorithm taking the earliest ready item): a region runs once its
    last input is ready, and what reads its outputs follows it."""
    import heapq

    owner = {id(n): r for r in regions for n in r.nodes}
    items: list = []
    key_of: dict[int, int] = {}
    for node in nodes:
        region = owner.get(id(node))
        item = region if region is not None else node
        if id(item) not in key_of:
            key_of[id(item)] = len(items)
            items.append(item)
    index = {id(n): key_of[id(owner.get(id(n), n))] for n in nodes}
    consumers: list[set[int]] = [set() for _ in items]
    waiting = [0] * len(items)
    for node in nodes:
        me = index[id(node)]
        for tensor in node_reads(node):
            for producer in tensor.inputs:
                other = index.get(id(producer))
                if other is not None and other != me and me not in consumers[other]:
                    consumers[other].add(me)
                    waiting[me] += 1
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(items[i])
        for j in consumers[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    if len(order) != len(items):
        raise ConversionError("internal error: the host regions are not convex (a cycle through the device)")
    return order


def lower_region(ctx, region: Region) -> None:
    """Lower one region: its runtime inputs to the host, one `host_region` call running its model with
    onnxruntime, its outputs kept on the host until a ttnn op reads them (ctx.bind_host)."""
    from onnx2ttnn.ir.dtypes import host_torch_dtype
    from onnx2ttnn.ir.graph import ttnn_node
    from onnx2ttnn.ir.ttnn_ops import HOST_REGION

    for tensor in region.outputs:
        shape = tensor.shape
        if is_value(tensor):
            if id(tensor) in region.read_outside:
                raise ConversionError(f"node {_producer(tensor)} runs on the host (onnxruntime, {region.source}), "
                                      f"and its output {tensor.name!r} is {kind(tensor)}, not a tensor, which the "
                                      "device cannot read")
            continue  # a graph output: returned as onnxruntime gives it (fallback/values.py)
        if tensor.dtype is None:
            raise ConversionError(f"{region.source}: output {tensor.name!r} of node {_producer(tensor)} has no "
                                  "known dtype")
        if (shape is None or any(not isinstance(d, int) for d in shape)) and id(tensor) in region.read_outside:
            raise ConversionError(
                f"node {_producer(tensor)} runs on the host (onnxruntime, {region.source}), and its output "
                f"{tensor.name!r} has the shape {list(shape) if shape is not None else 'unknown'}, which depends on "
                "input values, but the device reads it; pin the inputs that decide it as constants")
        if np.dtype(tensor.dtype).kind not in "biuf":
            raise ConversionError(f"{region.source}: output {tensor.name!r} of node {_producer(tensor)} is of "
                                  f"dtype {np.dtype(tensor.dtype)}, which the program cannot carry")
    for tensor in region.inputs:
        if is_value(tensor):
            raise ConversionError(f"{region.source}: input {tensor.name!r} is {kind(tensor)}, not a tensor, which "
                                  "the program cannot carry to onnxruntime")
        if tensor.dtype is None or np.dtype(tensor.dtype).kind not in "biuf":
            raise ConversionError(f"{region.source}: input {tensor.name!r} has dtype "
                                  f"{np.dtype(tensor.dtype) if tensor.dtype is not None else 'unknown'}, which the "
                                  "program cannot carry to onnxruntime")
    inputs = [ctx.host_value(t, REGION_FALLBACK) for t in region.inputs]
    # a graph output onnxruntime decides the shape of keeps its symbolic dims (the program returns it as is)
    # (a sequence or map is a graph output: the region's result is the program's, under the output's name)
    outputs = [gs.Variable(t.name, dtype=VALUE_DTYPE) if is_value(t) else
               gs.Variable(f"{t.name}_host", dtype=np.dtype(t.dtype),
                           shape=[int(d) if isinstance(d, int) else None for d in t.shape] if t.shape is not None
                           else None) for t in region.outputs]
    feeds = tuple((t.name, numpy_dtype(t)) for t in region.inputs)
    # (None: a sequence or map, kept as onnxruntime returns it)
    results = tuple(None if is_value(t) else host_torch_dtype(np.dtype(t.dtype), f"{region.source}: output {t.name!r}")
                    for t in region.outputs)
    ctx.nodes.append(ttnn_node(HOST_REGION, inputs, outputs, region.source, _fallback=REGION_FALLBACK,
                               _region=region.index, _region_nodes=tuple((n.name, label(n)) for n in region.nodes),
                               _region_feeds=feeds, _region_results=results))
    for tensor, host in zip(region.outputs, outputs):
        ctx.bind_host(tensor, host)


def _producer(tensor: gs.Tensor) -> str:
    node = tensor.inputs[0] if tensor.inputs else None
    return f"{node.name!r} ({label(node)})" if node is not None else repr(tensor.name)


def summary(region: Region) -> dict:
    """What the conversion summary, the report and the notes say of a region: its index, nodes (name, op),
    input and output tensor names, and its model's size."""
    return {"index": region.index, "nodes": [(n.name, label(n)) for n in region.nodes],
            "inputs": [t.name for t in region.inputs], "outputs": [t.name for t in region.outputs],
            "model_bytes": len(region.model)}
