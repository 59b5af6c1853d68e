"""Lowering one ONNX node to its host fallback: inputs to the host, the torch helper, results kept on the host.

The nodes it adds: a `to_torch` per device input (in the ONNX shape and dtype; flattened NHWC values are
reshaped and permuted back to NCHW on the host), one `host_compute` node calling the helper, and nothing
else: the results stay on the host and are uploaded with `from_torch` only when a ttnn op reads them
(LoweringContext.bind_host), so the memory passes see ordinary device tensors on both sides.
Before: `y = TopK(x, k)`; after: `x_host = ttnn.to_torch(x); y, i = host_topk(x_host, k, axis=-1, ...)`.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.fallback.registry import FallbackRule
from onnx2ttnn.ir.dtypes import host_torch_dtype
from onnx2ttnn.ir.graph import ttnn_node
from onnx2ttnn.ir.ttnn_ops import HOST_COMPUTE
from onnx2ttnn.lowering.context import LoweringContext

LITERAL_LIMIT = 64  # constant inputs up to this many elements are written into the call as torch.tensor(...)
INT32 = np.iinfo(np.int32)


def lower_with_fallback(ctx: LoweringContext, node: gs.Node, rule: FallbackRule) -> None:
    """Compute `node` on the host with the torch helper `rule` names."""
    kwargs = rule.fn(node)
    _check_static_outputs(ctx, node)
    inputs, args = [], []
    for index, tensor in enumerate(node.inputs):
        if not tensor.name:  # an omitted optional input
            args.append(None)
            continue
        value = ctx.constant(tensor)
        if value is not None:
            if value.size <= LITERAL_LIMIT:
                dtype = host_torch_dtype(value.dtype, f"node {ctx.source!r}: constant {tensor.name!r}")
                args.append(("const", dtype, tuple(int(d) for d in value.shape), value.reshape(-1).tolist()))
                continue
            if value.dtype.kind in "iu" and (value.min() < INT32.min or value.max() > INT32.max):
                raise ConversionError(f"node {ctx.source!r}: constant {tensor.name!r} holds integers outside "
                                      "int32, which ttnn tensors cannot carry")
        inputs.append(ctx.host_value(tensor, node.op))
        args.append(("input", len(inputs) - 1))
    outputs = [gs.Variable(f"{t.name or 'unused'}_host", dtype=np.dtype(t.dtype) if t.dtype is not None else None,
                           shape=[int(d) for d in t.shape] if t.shape is not None else None)
               for t in node.outputs]
    outputs += [gs.Variable(f"{node.outputs[0].name}_unused_host") for _ in range(rule.results - len(outputs))]
    ctx.nodes.append(ttnn_node(HOST_COMPUTE, inputs, outputs, ctx.source, _helper=rule.helper,
                               _family=rule.family, _args=tuple(args), _fallback=node.op, **kwargs))
    for tensor, host in zip(node.outputs, outputs):
        if tensor.name:
            ctx.bind_host(tensor, host)


def _check_static_outputs(ctx: LoweringContext, node: gs.Node) -> None:
    for t in node.outputs:
        if t.name and (t.shape is None or any(not isinstance(d, int) for d in t.shape)):
            raise ConversionError(f"node {ctx.source!r}: the host fallback for {node.op} needs a static output "
                                  f"shape, but shape inference gives {t.name!r} the shape {t.shape} (the shape "
                                  "depends on input values); pin the inputs that decide it as constants")
        if t.name and t.dtype is None:
            raise ConversionError(f"node {ctx.source!r}: output {t.name!r} has no known dtype")
