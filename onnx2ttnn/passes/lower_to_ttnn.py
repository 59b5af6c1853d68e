"""lower-to-ttnn: replace every ONNX node by ttnn-domain nodes through the lowering registry (lowering/).

Reads: a fused ONNX graph with static shapes (and Module.rounding, the weights' rounding errors
measure-weight-gain computed, which it drops).  Writes: a new graph of ttnn nodes: graph inputs are host
tensors uploaded by `from_torch`, weights are `from_torch` nodes marked `_param` (loaded once by
load_parameters), outputs come back through `to_torch` (those a host fallback computed are returned as
they are, `host_output`: cast to their ONNX dtype; a sequence or map a host region returns is the output
itself, fallback/values.py).  A node with no rule, or whose rule declines it
(NotLowerable), goes to its host fallback (fallback/: to_torch, a torch helper, from_torch) unless
fallbacks are off; every op type left without either is reported at once, with its node count and the
schema version the model's opset resolves to (a rule serves only the schema versions it was checked
against: a newer or older version is unsupported, lowering/versions.py).  Small device ops between host
values and a host region join the region (fallback/absorb.py).  The output tail (lowering/accuracy.py)
is found first: a sigmoid or exp there reads a float32 input in a bf16 program.
Before: `y = Relu(x)`; after: `x_dev = ttnn.from_torch(x); y_dev = ttnn.relu(x_dev); y = ttnn.to_torch(y_dev)`.
"""
from __future__ import annotations

from collections import Counter

import ml_dtypes
import numpy as np
import onnx_graphsurgeon as gs
from onnx import TensorProto

from onnx2ttnn.errors import ConversionError, NotLowerable, UnsupportedOpsError
from onnx2ttnn.fallback import fallback_versions, lookup_fallback, lower_with_fallback
from onnx2ttnn.fallback.absorb import absorbed
from onnx2ttnn.fallback.values import is_value
from onnx2ttnn.fallback.regions import (Region, build_region, carriable, check_region, lower_region, node_reads,
                                        onnxruntime_runs, partition, schedule, summary)
from onnx2ttnn.ir.dtypes import torch_dtype
from onnx2ttnn.ir.graph import Module, TensorSpec, onnx_domain, ttnn_node
from onnx2ttnn.ir.ttnn_ops import HOST_OUTPUT
from onnx2ttnn.lowering import lookup, lowering_versions
from onnx2ttnn.lowering.accuracy import output_tail
from onnx2ttnn.lowering.context import FLOAT, INDEX, LoweringContext
from onnx2ttnn.lowering.versions import is_onnx_domain, schema_version, unserved
from onnx2ttnn.lowering.weight_dtype import count_weight_layers, exponential_tail, model_error_budget, tail_weights
from onnx2ttnn.passes.base import Pass, PassContext
from onnx2ttnn.passes.fold_constants import is_static


class LowerToTTNN(Pass):
    name = "lower-to-ttnn"

    def run(self, module: Module, ctx: PassContext) -> None:
        graph = module.graph
        bfloat16 = _bfloat16_as_float(graph)
        opsets = _opsets(graph, module.opset)
        lowered = self._lower(module, ctx, bfloat16, opsets, list(graph.nodes), {})
        if lowered.hosted:  # nodes for onnxruntime: cut them out as regions, then lower again around them
            hosted = lowered.hosted + absorbed(list(graph.nodes), lowered.hosted, graph.inputs, graph.outputs,
                                               lambda n: _ort_runs(n, opsets))
            regions = _regions(graph, hosted, opsets)
            lowered = self._lower(module, ctx, bfloat16, opsets, _schedule(graph.nodes, regions), {
                id(n): r for r in regions for n in r.nodes})
            if lowered.hosted:
                raise ConversionError("internal error: host regions changed the nodes the device takes: "
                                      + ", ".join(repr(n.name) for n in lowered.hosted[:5]))
            module.regions = [r.model for r in regions]
        lctx = lowered.lctx
        outputs = self._download_outputs(graph, lctx, bfloat16)
        _drop_unused_uploads(lctx)
        module.inputs = [TensorSpec(t.name, tuple(t.shape), np.dtype(t.dtype)) for t in lowered.inputs]
        module.outputs = [TensorSpec(t.name, tuple(t.shape) if t.shape is not None else None, np.dtype(t.dtype))
                          for t in outputs]  # (a sequence or map: no shape, dtype object)
        module.graph = gs.Graph(nodes=lctx.nodes, inputs=lowered.inputs, outputs=outputs, opset=module.opset,
                                name=graph.name)
        module.rounding = None  # (no pass after this one judges weights)
        module.dequantized = lctx.dequantized  # with the copies rules made (a Gemm's transposed weight): for emit
        module.notes[self.name] = {"ttnn_nodes": len(lctx.nodes),
                                   "host_fallbacks": dict(sorted(lowered.fallbacks.items())),
                                   "host_regions": lowered.regions,
                                   "quantized_weights": dict(sorted(lctx.weight_dtypes.items())),
                                   "weight_formats": dict(sorted(lctx.weight_formats.items())),
                                   "weight_error": sum(lctx.weight_errors.values()),
                                   "error_budget": model_error_budget(lctx.exponential_tail, lctx.weight_gain)}

    def _lower(self, module: Module, ctx: PassContext, bfloat16: set[str], opsets: dict[str, int], items: list,
               region_of: dict[int, Region]) -> "_Lowered":
        """Lower `items` (ONNX nodes and host regions, in schedule order).  Without `region_of` (the first
        round), nodes only onnxruntime can run are collected in `hosted`, their outputs bound to placeholders
        so that the rest lowers; with it, the regions are lowered and their nodes skipped."""
        graph = module.graph
        use_fallback = ctx.options.fallback
        lctx = LoweringContext(module.compute_dtype)
        lctx.output_tail, lctx.output_names = output_tail(graph), frozenset(t.name for t in graph.outputs)
        lctx.dequantized = dict(module.dequantized)
        lctx.weights, lctx.weight_layers = ctx.options.weights, count_weight_layers(graph)
        lctx.activations = ctx.options.activations
        lctx.keep_bf16, lctx.tail_weights = frozenset(ctx.options.keep_bf16), tail_weights(graph, lctx.output_tail)
        lctx.exponential_tail = exponential_tail(graph, lctx.output_tail)
        lctx.weight_gain, lctx.tp = module.weight_gain, module.tp
        if module.rounding is not None:  # measure-weight-gain's rounding errors: each weight rounded once
            lctx.rounding = module.rounding
        inputs = self._upload_inputs(graph, lctx, bfloat16)
        unsupported = _Unsupported(module.opset, failing=self._statically_missing(graph, module.opset,
                                                                                   use_fallback, opsets))
        result = _Lowered(lctx, inputs)
        dynamic: set[str] = set()  # hosted nodes' outputs without a static shape: their readers stay on the host
        for index, item in enumerate(items):
            if isinstance(item, Region):
                lctx.source = item.source
                lower_region(lctx, item)
                result.regions.append(_region_summary(item))
                continue
            node = item
            if id(node) in region_of:
                continue
            lctx.source = node.name or f"{node.op}_{index}"
            domain = onnx_domain(node)
            label = node.op if not domain else f"{domain}::{node.op}"
            def ort_runs(node=node) -> bool:  # asked only of nodes the device may not take
                return _ort_runs(node, opsets)

            if dynamic and use_fallback and any(t.name in dynamic for t in node_reads(node)) and ort_runs():
                result.host(lctx, node, dynamic)  # reads a value whose shape onnxruntime decides at run time
                continue
            unshaped = _unshaped(node)
            if unshaped and use_fallback and ort_runs():
                result.host(lctx, node, dynamic)  # no rule can place a tensor of unknown shape on the device
                continue
            rule = lookup(domain, node.op, module.opset)
            host = lookup_fallback(domain, node.op, module.opset)
            reason = None if rule is not None or host is not None else _unserved(domain, node.op, module.opset)
            if unshaped:  # (a rule or a host fallback would need it)
                reason = f"the shape of {unshaped!r} is unknown after inference and folding"
            elif rule is not None:
                # with a fallback to go to, a rule's refusal of a variant declines the node
                reason = unsupported.attempt(lctx, node, rule.fn, refusal_declines=host is not None)
                if reason is None:
                    continue
            if host is not None and use_fallback and not unshaped:
                reason = self._fallback(unsupported, lctx, node, host, reason, declines=ort_runs())
                if reason is None:
                    result.fallbacks[label] += 1
                    continue
            runs = ort_runs()
            if runs and use_fallback:
                result.host(lctx, node, dynamic)
                continue
            unsupported.add(lctx, node, label, reason, refused=host is not None and not use_fallback,
                            has_rule=rule is not None or host is not None,
                            version=schema_version(domain, node.op, module.opset),
                            region=host is None and runs and not use_fallback)
        unsupported.raise_if_any()
        return result

    @staticmethod
    def _fallback(unsupported: "_Unsupported", lctx: LoweringContext, node: gs.Node, host, declined,
                  declines: bool = False) -> str | None:
        """Lower `node` with its host fallback; when that fails too, the error says why the rule declined.
        With `declines` (a host region can take the node), the fallback's refusal declines it too."""
        try:
            return unsupported.attempt(lctx, node, lambda c, n: lower_with_fallback(c, n, host),
                                       refusal_declines=declines)
        except ConversionError as exc:
            if declined is None:
                raise
            raise ConversionError(f"{declined}; the host fallback cannot take over: {exc}") from None

    @staticmethod
    def _statically_missing(graph: gs.Graph, opset: int, use_fallback: bool, opsets: dict[str, int]) -> bool:
        """True when some node has neither a rule nor a usable fallback or host region (the conversion will
        fail)."""
        for node in graph.nodes:
            domain = onnx_domain(node)
            if lookup(domain, node.op, opset) is None and not use_fallback:
                return True
            if lookup(domain, node.op, opset) is None and lookup_fallback(domain, node.op, opset) is None and \
                    not onnxruntime_runs(domain, node.op, opsets.get(domain)):
                return True
        return False

    @staticmethod
    def _upload_inputs(graph: gs.Graph, lctx: LoweringContext, bfloat16: set[str]) -> list[gs.Variable]:
        inputs = []
        for t in graph.inputs:
            if not isinstance(t, gs.Variable):
                continue
            if t.shape is None or any(not isinstance(d, int) for d in t.shape):
                raise ConversionError(f"input {t.name!r} has no static shape; use --input-shape")
            host = gs.Variable(t.name, dtype=_program_dtype(t, bfloat16), shape=list(t.shape))
            inputs.append(host)
            if not t.outputs and t not in graph.outputs:
                continue
            dtype = FLOAT if np.dtype(t.dtype).kind in "fb" else INDEX
            lctx.source = f"input {t.name}"
            dev = gs.Variable(t.name + "_dev", dtype=dtype, shape=list(t.shape) or [1])
            lctx.nodes.append(ttnn_node("from_torch", [host], [dev], lctx.source, _input=t.name))
            lctx.bind_input(t, dev, host)
        return inputs

    @staticmethod
    def _download_outputs(graph: gs.Graph, lctx: LoweringContext, bfloat16: set[str]) -> list[gs.Variable]:
        outputs = []
        for t in graph.outputs:
            lctx.source = f"output {t.name}"
            computed = lctx.host_result(t)
            if computed is not None and is_value(t):  # a sequence or map: the host region's result, as it is
                outputs.append(computed)
                continue
            if computed is not None:  # a host fallback computed it: no round trip through the device
                host = gs.Variable(t.name, dtype=_program_dtype(t, bfloat16), shape=list(computed.shape))
                lctx.nodes.append(ttnn_node(HOST_OUTPUT, [computed], [host], lctx.source, _output=t.name,
                                            _torch_dtype=torch_dtype(host.dtype, f"output {t.name!r}")))
                outputs.append(host)
                continue
            dev = lctx.value(t)
            shape = t.shape
            if shape is None or any(not isinstance(d, int) for d in shape):
                shape = dev.shape  # symbolic after inference, static once folded: the rules computed it
            host = gs.Variable(t.name, dtype=_program_dtype(t, bfloat16), shape=list(shape))
            reshape = tuple(host.shape) if tuple(dev.shape) != tuple(host.shape) else None
            lctx.nodes.append(ttnn_node("to_torch", [dev], [host], lctx.source, _output=t.name,
                                        _torch_dtype=torch_dtype(host.dtype, f"output {t.name!r}"), _shape=reshape))
            outputs.append(host)
        return outputs


class _Lowered:
    """One round of lowering: the context, the program's inputs, the fallbacks and regions lowered, and (the
    first round) the nodes only onnxruntime can run."""

    def __init__(self, lctx: LoweringContext, inputs: list[gs.Variable]) -> None:
        self.lctx = lctx
        self.inputs = inputs
        self.fallbacks: Counter = Counter()
        self.regions: list[dict] = []
        self.hosted: list[gs.Node] = []

    def host(self, lctx: LoweringContext, node: gs.Node, dynamic: set[str]) -> None:
        """`node` goes to a host region: its outputs get placeholders so that the rest lowers this round."""
        self.hosted.append(node)
        for t in node.outputs:
            if not t.name:
                continue
            if not is_static(t.shape):
                dynamic.add(t.name)
            shape = [d if isinstance(d, int) else 1 for d in (t.shape or [1])] or [1]
            dtype = FLOAT if t.dtype is None or is_value(t) or np.dtype(t.dtype).kind in "fb" else INDEX
            lctx.bind(t, gs.Variable(t.name + "_region", dtype=dtype, shape=shape))


def _ort_runs(node: gs.Node, opsets: dict[str, int]) -> bool:
    """Whether onnxruntime runs `node` and the program can carry its tensors (it may go to a host region)."""
    domain = onnx_domain(node)
    return onnxruntime_runs(domain, node.op, opsets.get(domain)) and carriable(node)


def _unshaped(node: gs.Node) -> str | None:
    """The name of a variable `node` reads whose shape is not static (None when all are)."""
    for tensor in node_reads(node):
        if isinstance(tensor, gs.Variable) and not is_static(tensor.shape):
            return tensor.name
    return None


def _opsets(graph: gs.Graph, opset: int) -> dict[str, int]:
    """Domain ("" for ai.onnx) -> the version the model imports it at."""
    found = {"": opset}
    for entry in graph.import_domains or ():
        domain = "" if entry.domain in ("", "ai.onnx") else entry.domain
        if domain:
            found[domain] = int(entry.version)
    return found


def _regions(graph: gs.Graph, hosted: list[gs.Node], opsets: dict[str, int]) -> list[Region]:
    """The host regions of the hosted nodes, each cut out as a model onnxruntime opens (else an error)."""
    readers: dict[int, list[gs.Node]] = {}
    for node in graph.nodes:
        for tensor in node_reads(node):
            readers.setdefault(id(tensor), []).append(node)
    regions = [build_region(k, group, graph, opsets, readers)
               for k, group in enumerate(partition(list(graph.nodes), {id(n) for n in hosted}))]
    for region in regions:
        refusal = check_region(region)
        if refusal is not None:
            ops = ", ".join(f"{op} ({n} node{'s' if n != 1 else ''})" for op, n in region.ops().items())
            raise ConversionError(f"no ttnn lowering or host fallback for {ops}, and onnxruntime cannot run them "
                                  f"as a host region either ({', '.join(repr(n.name) for n in region.nodes[:5])}): "
                                  f"{refusal}")
    return regions


def _schedule(nodes, regions: list[Region]) -> list:
    return schedule(list(nodes), regions)


def _region_summary(region: Region) -> dict:
    return summary(region)


BROKEN = "failed on an unsupported input"


class _Unsupported:
    """The nodes lowering could not handle, collected so that one error names every op type."""

    def __init__(self, opset: int, failing: bool) -> None:
        self.opset = opset
        self.failing = failing  # once the conversion is known to fail, later rule errors are not reported
        self.missing: dict[str, list[str]] = {}
        self.reasons: dict[str, str] = {}
        self.refused: set[str] = set()
        self.region_refused: set[str] = set()  # op types only a host region would run (--no-fallback)
        self.versions: dict[str, int | None] = {}  # ai.onnx op type -> the schema version its nodes resolve to
        self.placeholders: set[str] = set()  # outputs of unsupported nodes (and of nodes they broke)

    def attempt(self, lctx: LoweringContext, node: gs.Node, lower, refusal_declines: bool = False) -> str | None:
        """Run `lower(lctx, node)`; None when it succeeded, else why it declined (the context is rolled back).
        With `refusal_declines`, a ConversionError from the rule counts as declining too."""
        state = lctx.checkpoint()
        try:
            lower(lctx, node)
            return None
        except NotLowerable as exc:
            lctx.rollback(state)
            return exc.reason
        except ConversionError as exc:
            if refusal_declines:
                lctx.rollback(state)
                return str(exc)
            if not (self.failing or self.missing):
                raise
            lctx.rollback(state)
            return BROKEN
        except Exception:
            if not (self.failing or self.missing):
                raise
            lctx.rollback(state)  # fed by an unsupported node's placeholder; the error below says enough
            return BROKEN

    def add(self, lctx: LoweringContext, node: gs.Node, label: str, reason, refused: bool,
            has_rule: bool, version: int | None, region: bool = False) -> None:
        broken = reason is BROKEN and has_rule and any(t.name in self.placeholders for t in node.inputs)
        if not broken:  # (a node that failed only on an unsupported node's placeholder is not listed)
            self.missing.setdefault(label, []).append(lctx.source)
            if is_onnx_domain(onnx_domain(node)):
                self.versions[label] = version
            if reason and reason is not BROKEN:
                self.reasons.setdefault(label, reason)
            if refused:
                self.refused.add(label)
            if region:
                self.region_refused.add(label)
        for t in node.outputs:  # later nodes still lower, so that every unsupported op type is found
            if t.name:
                shape = [d if isinstance(d, int) else 1 for d in (t.shape or [1])] or [1]
                lctx.bind(t, gs.Variable(t.name + "_unsupported", dtype=FLOAT, shape=shape))
                self.placeholders.add(t.name)

    def raise_if_any(self) -> None:
        if self.missing:
            raise UnsupportedOpsError(self.missing, self.opset, self.reasons, tuple(self.refused), self.versions,
                                      tuple(self.region_refused))


def _unserved(domain: str, op_type: str, opset: int) -> str | None:
    """Why no rule serves a node that has neither a lowering rule nor a fallback at this opset (None when the
    op has no rule of any version)."""
    checked = sorted(set(lowering_versions(domain, op_type)) | set(fallback_versions(domain, op_type)))
    return unserved(domain, op_type, opset, checked) or None


def _bfloat16_as_float(graph: gs.Graph) -> set[str]:
    """ONNX bfloat16 tensors (graphsurgeon keeps the type's enum: numpy has no bfloat16) become float32
    inside the compiler; returns their names, so the program's inputs and outputs keep the real type."""
    names = set()
    for tensor in graph.tensors().values():
        if isinstance(tensor.dtype, int) and tensor.dtype == TensorProto.BFLOAT16:
            tensor.dtype = np.dtype(np.float32)
            names.add(tensor.name)
    return names


def _program_dtype(tensor: gs.Tensor, bfloat16: set[str]) -> np.dtype:
    """The dtype the generated program gives a graph input or output."""
    return np.dtype(ml_dtypes.bfloat16) if tensor.name in bfloat16 else np.dtype(tensor.dtype)


def _drop_unused_uploads(lctx: LoweringContext) -> None:
    """Graph inputs only host fallbacks read are not uploaded."""
    for node in [n for n in lctx.nodes if n.attrs.get("_input") and not n.outputs[0].outputs]:
        node.inputs.clear()
        node.outputs.clear()
        lctx.nodes.remove(node)
