"""Reductions: ReduceMean/Sum/Max/Min -> ttnn.mean/sum/max/min (keepdim, then a reshape when dropping)."""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register

REDUCE = {"ReduceMean": "mean", "ReduceSum": "sum", "ReduceMax": "max", "ReduceMin": "min"}
# opset from which the axes are an input instead of an attribute
AXES_AS_INPUT = {"ReduceMean": 18, "ReduceSum": 13, "ReduceMax": 18, "ReduceMin": 18}


def reduce(ctx: LoweringContext, node: gs.Node, ttnn_op: str, axes) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    out = node.outputs[0]
    if axes is None or len(axes) == 0:
        if node.attrs.get("noop_with_empty_axes", 0):
            ctx.bind(out, x)
            return
        axes = list(range(rank))
    dims = sorted(int(a) % rank for a in axes)
    kept = [1 if i in dims else d for i, d in enumerate(x.shape)]
    dim = dims[0] if len(dims) == 1 else dims
    y = ctx.op(ttnn_op, [x], kept, name=out.name + ("" if node.attrs.get("keepdims", 1) else "_kept"),
               dim=dim, keepdim=True)
    shape = tuple(int(d) for d in out.shape) or (1,)
    if tuple(kept) != shape:
        y = ctx.op("reshape", [y], shape, name=out.name, shape=shape)
    ctx.bind(out, y)


def _register(op_type: str, ttnn_op: str) -> None:
    def with_attr(ctx, node):
        reduce(ctx, node, ttnn_op, node.attrs.get("axes"))

    def with_input(ctx, node):
        axes = None
        if len(node.inputs) > 1 and node.inputs[1].name:
            axes = ctx.require_constant(node.inputs[1], f"{op_type} axes").reshape(-1).tolist()
        reduce(ctx, node, ttnn_op, axes)

    register(op_type, 1, ttnn=(ttnn_op,))(with_attr)
    register(op_type, AXES_AS_INPUT[op_type], ttnn=(ttnn_op,), note="axes as input")(with_input)


for _op_type, _ttnn_op in REDUCE.items():
    _register(_op_type, _ttnn_op)
