"""lower-to-ttnn: replace every ONNX node by ttnn-domain nodes through the lowering registry (lowering/).

Reads: a fused ONNX graph with static shapes.  Writes: a new graph of ttnn nodes: graph inputs are host
tensors uploaded by `from_torch`, weights are `from_torch` nodes marked `_param` (loaded once by
load_parameters), outputs come back through `to_torch` (those a host fallback computed are returned as
they are, `host_output`: cast to their ONNX dtype).  A node with no rule, or whose rule declines it
(NotLowerable), goes to its host fallback (fallback/: to_torch, a torch helper, from_torch) unless
fallbacks are off; every op type left without either is reported at once, with its node count and the
schema version the model's opset resolves to (a rule serves only the schema versions it was checked
against: a newer or older version is unsupported, lowering/versions.py).
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
from onnx2ttnn.ir.dtypes import torch_dtype
from onnx2ttnn.ir.graph import Module, TensorSpec, onnx_domain, ttnn_node
from onnx2ttnn.ir.ttnn_ops import HOST_OUTPUT
from onnx2ttnn.lowering import lookup, lowering_versions
from onnx2ttnn.lowering.context import FLOAT, INDEX, LoweringContext
from onnx2ttnn.lowering.versions import is_onnx_domain, schema_version, unserved
from onnx2ttnn.passes.base import Pass, PassContext


class LowerToTTNN(Pass):
    name = "lower-to-ttnn"

    def run(self, module: Module, ctx: PassContext) -> None:
        graph = module.graph
        use_fallback = ctx.options.fallback
        bfloat16 = _bfloat16_as_float(graph)
        lctx = LoweringContext(ctx.options.dtype)
        lctx.dequantized = dict(module.dequantized)
        inputs = self._upload_inputs(graph, lctx, bfloat16)
        unsupported = _Unsupported(module.opset, failing=self._statically_missing(graph, module.opset,
                                                                                   use_fallback))
        fallbacks: Counter = Counter()
        for index, node in enumerate(graph.nodes):
            lctx.source = node.name or f"{node.op}_{index}"
            domain = onnx_domain(node)
            label = node.op if not domain else f"{domain}::{node.op}"
            rule = lookup(domain, node.op, module.opset)
            host = lookup_fallback(domain, node.op, module.opset)
            reason = None if rule is not None or host is not None else _unserved(domain, node.op, module.opset)
            if rule is not None:
                # with a fallback to go to, a rule's refusal of a variant declines the node
                reason = unsupported.attempt(lctx, node, rule.fn, refusal_declines=host is not None)
                if reason is None:
                    continue
            if host is not None and use_fallback:
                reason = self._fallback(unsupported, lctx, node, host, reason)
                if reason is None:
                    fallbacks[label] += 1
                    continue
            unsupported.add(lctx, node, label, reason, refused=host is not None and not use_fallback,
                            has_rule=rule is not None or host is not None,
                            version=schema_version(domain, node.op, module.opset))
        unsupported.raise_if_any()
        outputs = self._download_outputs(graph, lctx, bfloat16)
        _drop_unused_uploads(lctx)
        module.inputs = [TensorSpec(t.name, tuple(t.shape), np.dtype(t.dtype)) for t in inputs]
        module.outputs = [TensorSpec(t.name, tuple(t.shape), np.dtype(t.dtype)) for t in outputs]
        module.graph = gs.Graph(nodes=lctx.nodes, inputs=inputs, outputs=outputs, opset=module.opset,
                                name=graph.name)
        module.notes[self.name] = {"ttnn_nodes": len(lctx.nodes), "host_fallbacks": dict(sorted(fallbacks.items())),
                                   "quantized_weights": dict(sorted(lctx.weight_dtypes.items()))}

    @staticmethod
    def _fallback(unsupported: "_Unsupported", lctx: LoweringContext, node: gs.Node, host, declined) -> str | None:
        """Lower `node` with its host fallback; when that fails too, the error says why the rule declined."""
        try:
            return unsupported.attempt(lctx, node, lambda c, n: lower_with_fallback(c, n, host))
        except ConversionError as exc:
            if declined is None:
                raise
            raise ConversionError(f"{declined}; the host fallback cannot take over: {exc}") from None

    @staticmethod
    def _statically_missing(graph: gs.Graph, opset: int, use_fallback: bool) -> bool:
        """True when some node has neither a rule nor a usable fallback (the conversion will fail)."""
        for node in graph.nodes:
            domain = onnx_domain(node)
            if lookup(domain, node.op, opset) is None and not (
                    use_fallback and lookup_fallback(domain, node.op, opset) is not None):
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


BROKEN = "failed on an unsupported input"


class _Unsupported:
    """The nodes lowering could not handle, collected so that one error names every op type."""

    def __init__(self, opset: int, failing: bool) -> None:
        self.opset = opset
        self.failing = failing  # once the conversion is known to fail, later rule errors are not reported
        self.missing: dict[str, list[str]] = {}
        self.reasons: dict[str, str] = {}
        self.refused: set[str] = set()
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
            has_rule: bool, version: int | None) -> None:
        broken = reason is BROKEN and has_rule and any(t.name in self.placeholders for t in node.inputs)
        if not broken:  # (a node that failed only on an unsupported node's placeholder is not listed)
            self.missing.setdefault(label, []).append(lctx.source)
            if is_onnx_domain(onnx_domain(node)):
                self.versions[label] = version
            if reason and reason is not BROKEN:
                self.reasons.setdefault(label, reason)
            if refused:
                self.refused.add(label)
        for t in node.outputs:  # later nodes still lower, so that every unsupported op type is found
            if t.name:
                shape = [d if isinstance(d, int) else 1 for d in (t.shape or [1])] or [1]
                lctx.bind(t, gs.Variable(t.name + "_unsupported", dtype=FLOAT, shape=shape))
                self.placeholders.add(t.name)

    def raise_if_any(self) -> None:
        if self.missing:
            raise UnsupportedOpsError(self.missing, self.opset, self.reasons, tuple(self.refused), self.versions)


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
