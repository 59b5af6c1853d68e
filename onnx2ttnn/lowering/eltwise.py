"""Elementwise ONNX ops -> ttnn unary and binary ops (broadcasting, scalar operands, NHWC pass-through)."""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import NHWC, LoweringContext
from onnx2ttnn.lowering.registry import register

UNARY = {
    "Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Exp": "exp", "Log": "log", "Sqrt": "sqrt",
    "Neg": "neg", "Abs": "abs", "Erf": "erf", "Reciprocal": "reciprocal", "Sin": "sin", "Cos": "cos",
    "Floor": "floor", "Ceil": "ceil", "Sign": "sign", "Not": "logical_not", "IsNaN": "isnan",
}
BINARY = {
    "Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide", "Max": "maximum", "Min": "minimum",
    "Equal": "eq", "Greater": "gt", "GreaterOrEqual": "ge", "Less": "lt", "LessOrEqual": "le",
    "And": "logical_and", "Or": "logical_or", "Pow": "pow",
}
COMMUTATIVE = {"add", "multiply", "maximum", "minimum", "eq", "logical_and", "logical_or"}


def unary(ctx: LoweringContext, node: gs.Node, ttnn_op: str, **attrs) -> None:
    """Apply a unary ttnn op in whatever form its input is in."""
    x, form = ctx.value_with_form(node.inputs[0])
    ctx.bind(node.outputs[0], ctx.op(ttnn_op, [x], x.shape, name=node.outputs[0].name, **attrs), form)


def _register_unary(op_type: str, ttnn_op: str) -> None:
    register(op_type, 1, ttnn=(ttnn_op,))(lambda ctx, node: unary(ctx, node, ttnn_op))


for _op_type, _ttnn_op in UNARY.items():
    _register_unary(_op_type, _ttnn_op)


@register("Gelu", 20, ttnn=("gelu",))
def gelu(ctx: LoweringContext, node: gs.Node) -> None:
    approximate = node.attrs.get("approximate", "none")
    unary(ctx, node, "gelu", fast_and_approximate_mode=True if approximate == "tanh" else None)


@register("Gelu", 1, domain="onnx2ttnn", ttnn=("gelu",), note="fused from the Erf pattern")
def fused_gelu(ctx: LoweringContext, node: gs.Node) -> None:
    unary(ctx, node, "gelu")


def scalar_of(value: np.ndarray):
    """A Python scalar for a one-element constant (int for integer tensors)."""
    item = value.reshape(-1)[0].item()
    return float(item) if value.dtype.kind in "fb" else int(item)


def binary(ctx: LoweringContext, node: gs.Node, ttnn_op: str) -> None:
    """Lower a broadcasting binary op; scalar constants become scalar arguments."""
    a, b = node.inputs
    out = node.outputs[0]
    ca, cb = ctx.constant(a), ctx.constant(b)
    if cb is not None and cb.size == 1:
        _tensor_scalar(ctx, out, a, ttnn_op, scalar_of(cb))
    elif ca is not None and ca.size == 1 and ttnn_op in COMMUTATIVE:
        _tensor_scalar(ctx, out, b, ttnn_op, scalar_of(ca))
    elif ca is not None and ca.size == 1 and ttnn_op in ("subtract", "divide"):
        x, form = ctx.value_with_form(b)
        y = ctx.op(ttnn_op, [x], x.shape, name=out.name, input_tensor_a=scalar_of(ca))
        ctx.bind(out, y, form)
    elif cb is not None and ttnn_op == "divide" and cb.dtype.kind == "f":
        _tensor_tensor(ctx, out, a, gs.Constant(b.name + "_reciprocal", (1.0 / cb).astype(np.float32)),
                       "multiply")
    else:
        _tensor_tensor(ctx, out, a, b, ttnn_op)


def _tensor_scalar(ctx, out, tensor, ttnn_op, scalar) -> None:
    if ttnn_op == "divide" and isinstance(scalar, float) and scalar != 0.0:
        ttnn_op, scalar = "multiply", 1.0 / scalar
    x, form = ctx.value_with_form(tensor)
    arg = "exponent" if ttnn_op == "pow" else "input_tensor_b"
    ctx.bind(out, ctx.op(ttnn_op, [x], x.shape, name=out.name, **{arg: scalar}), form)


def _tensor_tensor(ctx, out, a, b, ttnn_op) -> None:
    form = _common_nhwc(ctx, a, b)
    if form is not None:
        xa, xb = (_nhwc_operand(ctx, t, form) for t in (a, b))
        ctx.bind(out, ctx.op(ttnn_op, [xa, xb], form.flat_shape, name=out.name), form)
        return
    rank = len(out.shape)
    xa, xb = (_ranked_operand(ctx, t, rank) for t in (a, b))
    ctx.bind(out, ctx.op(ttnn_op, [xa, xb], out.shape, name=out.name))


def _common_nhwc(ctx, a, b):
    """The NHWC form both operands can share without leaving it, else None."""
    forms = [ctx.value_with_form(t)[1] if ctx.constant(t) is None else None for t in (a, b)]
    runtime = [f for f, t in zip(forms, (a, b)) if ctx.constant(t) is None]
    if not runtime or any(f is None for f in runtime) or len(set(runtime)) != 1:
        return None
    form = runtime[0]
    for t in (a, b):
        c = ctx.constant(t)
        if c is not None and _channel_vector(c, form) is None:
            return None
    return form


def _channel_vector(c: np.ndarray, form: NHWC):
    """A constant broadcast over N, H, W (shape [C,1,1], [1,C,1,1], [1] ...) as a [1,1,1,C] array."""
    shape = (1,) * (4 - c.ndim) + c.shape if c.ndim <= 4 else None
    if shape is None or shape[0] != 1 or shape[2] != 1 or shape[3] != 1 or shape[1] not in (1, form.c):
        return None
    return np.broadcast_to(c.reshape(shape[1]), (form.c,)).reshape(1, 1, 1, form.c)


def _nhwc_operand(ctx, tensor, form):
    c = ctx.constant(tensor)
    if c is None:
        return ctx.value_with_form(tensor)[0]
    return ctx.param(_channel_vector(c, form), tensor.name, key=(tensor.name, "nhwc"))


def _ranked_operand(ctx, tensor, rank):
    """The operand with its shape left-padded with ones to `rank` (ttnn broadcasts equal ranks best)."""
    c = ctx.constant(tensor)
    if c is not None:
        return ctx.param(c.reshape((1,) * (rank - c.ndim) + c.shape), tensor.name, key=(tensor.name, rank))
    x = ctx.value(tensor)
    if len(x.shape) == rank:
        return x
    shape = (1,) * (rank - len(x.shape)) + tuple(x.shape)
    return ctx.op("reshape", [x], shape, name=tensor.name + "_ranked", shape=shape)


def _register_binary(op_type: str, ttnn_op: str) -> None:
    register(op_type, 1, ttnn=(ttnn_op,))(lambda ctx, node: binary(ctx, node, ttnn_op))


for _op_type, _ttnn_op in BINARY.items():
    _register_binary(_op_type, _ttnn_op)


@register("Where", 9, ttnn=("where",))
def where(ctx: LoweringContext, node: gs.Node) -> None:
    cond, x, y = node.inputs
    out = node.outputs[0]
    rank = len(out.shape)
    args, attrs = [_ranked_operand(ctx, cond, rank)], {}
    for param, t in (("true_value", x), ("false_value", y)):
        c = ctx.constant(t)
        if c is not None and c.size == 1:
            attrs[param] = scalar_of(c.astype(np.float32))
        else:
            args.append(_ranked_operand(ctx, t, rank))
    ctx.bind(out, ctx.op("where", args, out.shape, name=out.name, **attrs))


@register("Clip", 11, ttnn=("clip",))
def clip(ctx: LoweringContext, node: gs.Node) -> None:
    bounds = {}
    for index, key in ((1, "min"), (2, "max")):
        if len(node.inputs) > index and node.inputs[index].name:
            bounds[key] = float(ctx.require_constant(node.inputs[index], f"Clip {key}").reshape(-1)[0])
    _clip(ctx, node, bounds)


@register("Clip", 6, ttnn=("clip",))
def clip_6(ctx: LoweringContext, node: gs.Node) -> None:
    _clip(ctx, node, {"min": float(node.attrs.get("min", -3.4028234663852886e38)),
                      "max": float(node.attrs.get("max", 3.4028234663852886e38))})


def _clip(ctx, node, bounds) -> None:
    if bounds.get("min") == 0.0 and bounds.get("max") == 6.0:
        unary(ctx, node, "relu6")
    else:
        unary(ctx, node, "clip", **bounds)
