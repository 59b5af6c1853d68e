"""MatMul, Gemm and the fused Linear (MatMul + bias Add) -> ttnn.matmul / ttnn.linear."""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register


def _matmul(ctx: LoweringContext, a: gs.Tensor, b: gs.Tensor, out: gs.Tensor, bias=None) -> None:
    """out = a @ b (+ bias): ttnn.linear when b is a weight, ttnn.matmul between two activations."""
    wb = ctx.constant(b)
    x = ctx.value(a)
    a_shape, out_shape = tuple(a.shape), tuple(out.shape)
    if len(a_shape) == 1:  # [K] @ [K, N]: treat as [1, K]
        x = ctx.op("reshape", [x], (1, a_shape[0]), name=a.name + "_row", shape=(1, a_shape[0]))
    if wb is not None and wb.ndim == 2:
        w = ctx.float_param(wb, b.name, key=(b.name, "weight"))
        inputs = [x, w]
        if bias is not None:
            inputs.append(ctx.float_param(np.asarray(bias).reshape(1, -1), out.name + "_bias",
                                          key=(out.name, "bias")))
        y_shape = out_shape if len(a_shape) > 1 else (1, out_shape[-1])
        y = ctx.op("linear", inputs, y_shape, name=out.name)
    else:
        xb = ctx.value(b)
        b_shape = tuple(b.shape)
        if len(b_shape) == 1:
            xb = ctx.op("reshape", [xb], (b_shape[0], 1), name=b.name + "_col", shape=(b_shape[0], 1))
            b_shape = (b_shape[0], 1)
        rank = max(len(x.shape), len(b_shape))
        x, xb = (_left_pad(ctx, t, rank) for t in (x, xb))
        shape = tuple(np.broadcast_shapes(tuple(x.shape)[:-2], tuple(xb.shape)[:-2])) + (x.shape[-2], b_shape[-1])
        y = ctx.op("matmul", [x, xb], shape, name=out.name)
        if bias is not None:
            y = ctx.op("add", [y, ctx.float_param(np.asarray(bias).reshape((1,) * (len(shape) - 1) + (-1,)),
                                                 out.name + "_bias", key=(out.name, "bias"))], shape,
                       name=out.name + "_biased")
    if tuple(y.shape) != out_shape:
        y = ctx.op("reshape", [y], out_shape, name=out.name + "_shaped", shape=out_shape)
    ctx.bind(out, y)


def _left_pad(ctx, x, rank):
    if len(x.shape) == rank:
        return x
    shape = (1,) * (rank - len(x.shape)) + tuple(x.shape)
    return ctx.op("reshape", [x], shape, name=x.name + "_ranked", shape=shape)


@register("MatMul", 1, ttnn=("linear", "matmul"))
def matmul(ctx: LoweringContext, node: gs.Node) -> None:
    _matmul(ctx, node.inputs[0], node.inputs[1], node.outputs[0])


@register("Linear", 1, domain="onnx2ttnn", ttnn=("linear",), note="fused MatMul + Add")
def linear(ctx: LoweringContext, node: gs.Node) -> None:
    bias = ctx.require_constant(node.inputs[2], "Linear bias")
    _matmul(ctx, node.inputs[0], node.inputs[1], node.outputs[0], bias=bias)


@register("Gemm", 1, ttnn=("linear", "matmul"))
def gemm(ctx: LoweringContext, node: gs.Node) -> None:
    a, b = node.inputs[0], node.inputs[1]
    c = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2].name else None
    alpha, beta = float(node.attrs.get("alpha", 1.0)), float(node.attrs.get("beta", 1.0))
    out = node.outputs[0]
    if node.attrs.get("transA", 0):
        x = ctx.value(a)
        a = gs.Variable(a.name + "_t", dtype=a.dtype, shape=list(reversed(a.shape)))
        ctx.bind(a, ctx.op("permute", [x], a.shape, name=a.name, dims=(1, 0)))
    wb = ctx.constant(b)
    bias = ctx.constant(c) if c is not None else None
    if wb is not None and (c is None or bias is not None) and (bias is None or bias.size == out.shape[-1]
                                                                or bias.size == 1):
        w = wb.T if node.attrs.get("transB", 0) else wb
        w = gs.Constant(b.name + ("_t" if node.attrs.get("transB", 0) else ""), (alpha * w).astype(np.float32))
        full_bias = None if bias is None else np.broadcast_to(beta * bias.reshape(-1), (out.shape[-1],))
        _matmul(ctx, a, w, out, bias=full_bias)
        return
    # general case: activations on both sides, or a full [M, N] C
    if node.attrs.get("transB", 0):
        xb = ctx.value(b)
        b = gs.Variable(b.name + "_t", dtype=b.dtype, shape=list(reversed(b.shape)))
        ctx.bind(b, ctx.op("permute", [xb], b.shape, name=b.name, dims=(1, 0)))
    prod = gs.Variable(out.name + "_ab", dtype=out.dtype, shape=list(out.shape))
    _matmul(ctx, a, b, prod)
    y = ctx.value(prod)
    if alpha != 1.0:
        y = ctx.op("multiply", [y], out.shape, name=out.name + "_alpha", input_tensor_b=alpha)
    if c is not None:
        xc = ctx.value(c) if bias is None else ctx.float_param(
            (beta * bias).reshape((1,) * (2 - bias.ndim) + bias.shape), c.name, key=(c.name, "gemm_c"))
        if bias is None and beta != 1.0:
            xc = ctx.op("multiply", [xc], xc.shape, name=c.name + "_beta", input_tensor_b=beta)
        y = ctx.op("add", [y, xc], out.shape, name=out.name)
    ctx.bind(out, y)
