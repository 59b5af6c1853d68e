"""lower-to-ttnn: replace every ONNX node by ttnn-domain nodes through the lowering registry (lowering/).

Reads: a fused ONNX graph with static shapes.  Writes: a new graph of ttnn nodes: graph inputs are host
tensors uploaded by `from_torch`, weights are `from_torch` nodes marked `_param` (loaded once by
load_parameters), outputs come back through `to_torch`.  All unsupported op types are reported at once.
Before: `y = Relu(x)`; after: `x_dev = ttnn.from_torch(x); y_dev = ttnn.relu(x_dev); y = ttnn.to_torch(y_dev)`.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError, UnsupportedOpsError
from onnx2ttnn.ir.graph import Module, TensorSpec, onnx_domain, ttnn_node
from onnx2ttnn.lowering import lookup
from onnx2ttnn.lowering.context import FLOAT, INDEX, LoweringContext
from onnx2ttnn.passes.base import Pass, PassContext


def _np_dtype(dtype) -> np.dtype:
    """graphsurgeon gives numpy dtypes, or the ONNX type number for types numpy lacks (bfloat16)."""
    if isinstance(dtype, int):
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(dtype))
    return np.dtype(dtype)


class LowerToTTNN(Pass):
    name = "lower-to-ttnn"

    def run(self, module: Module, ctx: PassContext) -> None:
        graph = module.graph
        rules = self._rules(graph, module.opset)
        lctx = LoweringContext()
        inputs = self._upload_inputs(graph, lctx)
        for index, node in enumerate(graph.nodes):
            lctx.source = node.name or f"{node.op}_{index}"
            rules[id(node)].fn(lctx, node)
        outputs = self._download_outputs(graph, lctx)
        module.inputs = [TensorSpec(t.name, tuple(t.shape), _np_dtype(t.dtype)) for t in inputs]
        module.outputs = [TensorSpec(t.name, tuple(t.shape), _np_dtype(t.dtype)) for t in outputs]
        module.graph = gs.Graph(nodes=lctx.nodes, inputs=inputs, outputs=outputs, opset=module.opset,
                                name=graph.name)
        module.notes[self.name] = {"ttnn_nodes": len(lctx.nodes)}

    @staticmethod
    def _rules(graph: gs.Graph, opset: int) -> dict:
        """The rule of every node; raises listing every op type that has none."""
        rules, missing = {}, {}
        for index, node in enumerate(graph.nodes):
            domain = onnx_domain(node)
            rule = lookup(domain, node.op, opset)
            if rule is None:
                key = node.op if not domain else f"{domain}::{node.op}"
                missing.setdefault(key, []).append(node.name or f"{node.op}_{index}")
            rules[id(node)] = rule
        if missing:
            raise UnsupportedOpsError(missing, opset)
        return rules

    @staticmethod
    def _upload_inputs(graph: gs.Graph, lctx: LoweringContext) -> list[gs.Variable]:
        inputs = []
        for t in graph.inputs:
            if not isinstance(t, gs.Variable):
                continue
            if t.shape is None or any(not isinstance(d, int) for d in t.shape):
                raise ConversionError(f"input {t.name!r} has no static shape; use --input-shape")
            host = gs.Variable(t.name, dtype=_np_dtype(t.dtype), shape=list(t.shape))
            inputs.append(host)
            if not t.outputs:
                continue
            dtype = FLOAT if _np_dtype(t.dtype).kind in "fb" else INDEX
            lctx.source = f"input {t.name}"
            dev = gs.Variable(t.name + "_dev", dtype=dtype, shape=list(t.shape) or [1])
            lctx.nodes.append(ttnn_node("from_torch", [host], [dev], lctx.source, _input=t.name))
            lctx.bind_input(t, dev)
        return inputs

    @staticmethod
    def _download_outputs(graph: gs.Graph, lctx: LoweringContext) -> list[gs.Variable]:
        outputs = []
        for t in graph.outputs:
            lctx.source = f"output {t.name}"
            dev = lctx.value(t)
            shape = t.shape
            if shape is None or any(not isinstance(d, int) for d in shape):
                shape = dev.shape  # symbolic after inference, static once folded: the rules computed it
            host = gs.Variable(t.name, dtype=_np_dtype(t.dtype), shape=list(shape))
            lctx.nodes.append(ttnn_node("to_torch", [dev], [host], lctx.source, _output=t.name,
                                        _torch_dtype=str(_np_dtype(t.dtype))))
            outputs.append(host)
        return outputs
