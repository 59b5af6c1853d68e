"""Elementwise ONNX ops -> ttnn unary and binary ops (broadcasting, scalar operands, NHWC pass-through).

Integer and boolean ONNX tensors live on the device in the float compute dtype (booleans as 1.0 / 0.0), so
where integer semantics differ from float ones the rule says so: integer Div truncates its quotient.
Variadic ops (Max, Min, Sum, Mean) become a left fold of binary ops; a single input is passed through.
Activations with parameters live in lowering/activations.py.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import NHWC, LoweringContext
from onnx2ttnn.lowering.registry import lookup, register

UNARY = {
    "Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Exp": "exp", "Log": "log", "Sqrt": "sqrt",
    "Neg": "neg", "Abs": "abs", "Erf": "erf", "Reciprocal": "reciprocal", "Sin": "sin", "Cos": "cos",
    "Floor": "floor", "Ceil": "ceil", "Sign": "sign", "Not": "logical_not", "IsNaN": "isnan",
    "Tan": "tan", "Asin": "asin", "Acos": "acos", "Atan": "atan", "Sinh": "sinh", "Cosh": "cosh",
    "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh", "Round": "round",
}
BINARY = {
    "Add": "add", "Sub": "subtract", "Mul": "multiply",
    "Equal": "eq", "Greater": "gt", "GreaterOrEqual": "ge", "Less": "lt", "LessOrEqual": "le",
    "And": "logical_and", "Or": "logical_or", "Xor": "logical_xor", "Pow": "pow",
}
VARIADIC = {"Max": "maximum", "Min": "minimum", "Sum": "add"}
COMMUTATIVE = {"add", "multiply", "maximum", "minimum", "eq", "logical_and", "logical_or", "logical_xor"}


def is_integer(tensor: gs.Tensor) -> bool:
    """Whether an ONNX tensor has an integer element type."""
    return tensor.dtype is not None and np.dtype(tensor.dtype).kind in "iu"


def intermediate(out: gs.Tensor, suffix: str, shape) -> gs.Variable:
    """An ONNX-level tensor for a partial result of a rule that lowers one node to several ttnn ops."""
    return gs.Variable(f"{out.name}_{suffix}", dtype=out.dtype, shape=[int(d) for d in shape])


# ---- unary ----------------------------------------------------------------------------------------------

def unary(ctx: LoweringContext, node: gs.Node, ttnn_op: str, **attrs) -> None:
    """Apply a unary ttnn op in whatever form its input is in."""
    unary_to(ctx, node.inputs[0], node.outputs[0], ttnn_op, **attrs)


def unary_to(ctx: LoweringContext, tensor: gs.Tensor, out: gs.Tensor, ttnn_op: str, **attrs) -> None:
    """`out = ttnn_op(tensor)`, keeping the input's form."""
    x, form = ctx.value_with_form(tensor)
    ctx.bind(out, ctx.op(ttnn_op, [x], x.shape, name=out.name, **attrs), form)


def _register_unary(op_type: str, ttnn_op: str) -> None:
    register(op_type, 1, ttnn=(ttnn_op,))(lambda ctx, node: unary(ctx, node, ttnn_op))


for _op_type, _ttnn_op in UNARY.items():
    _register_unary(_op_type, _ttnn_op)


def pass_through(ctx: LoweringContext, tensor: gs.Tensor, out: gs.Tensor) -> None:
    """`out` is `tensor` (no ttnn op)."""
    ctx.bind(out, *ctx.value_with_form(tensor))


# ---- binary ---------------------------------------------------------------------------------------------

def scalar_of(value: np.ndarray):
    """A Python scalar for a one-element constant (int for integer tensors)."""
    item = value.reshape(-1)[0].item()
    return float(item) if value.dtype.kind in "fb" else int(item)


def binary(ctx: LoweringContext, node: gs.Node, ttnn_op: str, **attrs) -> None:
    binary_to(ctx, node.inputs[0], node.inputs[1], node.outputs[0], ttnn_op, **attrs)


def binary_to(ctx: LoweringContext, a: gs.Tensor, b: gs.Tensor, out: gs.Tensor, ttnn_op: str, **attrs) -> None:
    """`out = ttnn_op(a, b)` with broadcasting; one-element constants become scalar arguments."""
    ca, cb = ctx.constant(a), ctx.constant(b)
    if cb is not None and cb.size == 1:
        tensor_scalar(ctx, out, a, ttnn_op, scalar_of(cb), **attrs)
    elif ca is not None and ca.size == 1 and ttnn_op in COMMUTATIVE:
        tensor_scalar(ctx, out, b, ttnn_op, scalar_of(ca), **attrs)
    elif ca is not None and ca.size == 1 and ttnn_op in ("subtract", "divide"):
        x, form = ctx.value_with_form(b)
        y = ctx.op(ttnn_op, [x], x.shape, name=out.name, input_tensor_a=scalar_of(ca), **attrs)
        ctx.bind(out, y, form)
    elif cb is not None and ttnn_op == "divide" and cb.dtype.kind == "f" and not attrs:
        _tensor_tensor(ctx, out, a, gs.Constant(b.name + "_reciprocal", (1.0 / cb).astype(np.float32)),
                       "multiply")
    else:
        _tensor_tensor(ctx, out, a, b, ttnn_op, **attrs)


def tensor_scalar(ctx, out, tensor, ttnn_op, scalar, **attrs) -> None:
    """`out = ttnn_op(tensor, scalar)` in the tensor's form (float division becomes a multiplication)."""
    if ttnn_op == "divide" and isinstance(scalar, float) and scalar != 0.0 and not attrs:
        ttnn_op, scalar = "multiply", 1.0 / scalar
    x, form = ctx.value_with_form(tensor)
    arg = "exponent" if ttnn_op == "pow" else "input_tensor_b"
    ctx.bind(out, ctx.op(ttnn_op, [x], x.shape, name=out.name, **{arg: scalar}, **attrs), form)


def _tensor_tensor(ctx, out, a, b, ttnn_op, **attrs) -> None:
    form = _common_nhwc(ctx, a, b)
    if form is not None:
        xa, xb = (_nhwc_operand(ctx, t, form) for t in (a, b))
        ctx.bind(out, ctx.op(ttnn_op, [xa, xb], form.flat_shape, name=out.name, **attrs), form)
        return
    rank = len(out.shape)
    xa, xb = (ranked_operand(ctx, t, rank) for t in (a, b))
    ctx.bind(out, ctx.op(ttnn_op, [xa, xb], out.shape, name=out.name, **attrs))


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


def ranked_operand(ctx, tensor, rank):
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


@register("Div", 1, ttnn=("divide", "multiply"), note="integer division truncates (rounding_mode='trunc')")
def div(ctx: LoweringContext, node: gs.Node) -> None:
    if is_integer(node.inputs[0]) and is_integer(node.inputs[1]):
        binary(ctx, node, "divide", rounding_mode="trunc")
    else:
        binary(ctx, node, "divide")


@register("Mod", 10, ttnn=("remainder", "fmod"), note="fmod=0: divisor's sign (remainder); fmod=1: dividend's")
def mod(ctx: LoweringContext, node: gs.Node) -> None:
    binary(ctx, node, "fmod" if int(node.attrs.get("fmod", 0)) else "remainder")


# ---- variadic -------------------------------------------------------------------------------------------

def fold(ctx: LoweringContext, inputs, out: gs.Tensor, ttnn_op: str) -> None:
    """`out = op(...op(op(x0, x1), x2)..., xn)`; one input is passed through."""
    inputs = [t for t in inputs if t.name]
    if len(inputs) == 1:
        pass_through(ctx, inputs[0], out)
        return
    acc = inputs[0]
    for index, tensor in enumerate(inputs[1:], start=1):
        if index == len(inputs) - 1:
            target = out
        else:
            target = intermediate(out, f"partial{index}", np.broadcast_shapes(tuple(acc.shape), tuple(tensor.shape)))
        binary_to(ctx, acc, tensor, target, ttnn_op)
        acc = target


def _register_variadic(op_type: str, ttnn_op: str) -> None:
    register(op_type, 1, ttnn=(ttnn_op,), note="variadic: a chain of binary ops")(
        lambda ctx, node: fold(ctx, node.inputs, node.outputs[0], ttnn_op))


for _op_type, _ttnn_op in VARIADIC.items():
    _register_variadic(_op_type, _ttnn_op)


@register("Mean", 1, ttnn=("add", "multiply"), note="variadic: a chain of adds, then a multiply by 1/n")
def mean(ctx: LoweringContext, node: gs.Node) -> None:
    inputs = [t for t in node.inputs if t.name]
    out = node.outputs[0]
    if len(inputs) == 1:
        pass_through(ctx, inputs[0], out)
        return
    total = intermediate(out, "sum", out.shape)
    fold(ctx, inputs, total, "add")
    tensor_scalar(ctx, out, total, "multiply", 1.0 / len(inputs))


# ---- selection and clamping -----------------------------------------------------------------------------

@register("Where", 9, ttnn=("where",))
def where(ctx: LoweringContext, node: gs.Node) -> None:
    cond, x, y = node.inputs
    out = node.outputs[0]
    rank = len(out.shape)
    args, attrs = [ranked_operand(ctx, cond, rank)], {}
    for param, t in (("true_value", x), ("false_value", y)):
        c = ctx.constant(t)
        if c is not None and c.size == 1:
            attrs[param] = scalar_of(c.astype(np.float32))
        else:
            args.append(ranked_operand(ctx, t, rank))
    ctx.bind(out, ctx.op("where", args, out.shape, name=out.name, **attrs))


@register("Clip", 11, ttnn=("clip", "maximum", "minimum"), note="runtime bounds: maximum then minimum")
def clip(ctx: LoweringContext, node: gs.Node) -> None:
    bounds = {key: node.inputs[i] for i, key in ((1, "min"), (2, "max"))
              if len(node.inputs) > i and node.inputs[i].name}
    if any(ctx.constant(t) is None for t in bounds.values()):
        _clip_with_tensors(ctx, node, bounds)
        return
    _clip(ctx, node, {key: float(ctx.constant(t).reshape(-1)[0]) for key, t in bounds.items()})


@register("Clip", 6, ttnn=("clip",))
def clip_6(ctx: LoweringContext, node: gs.Node) -> None:
    _clip(ctx, node, {"min": float(node.attrs.get("min", -3.4028234663852886e38)),
                      "max": float(node.attrs.get("max", 3.4028234663852886e38))})


def _clip(ctx, node, bounds) -> None:
    if not bounds:
        pass_through(ctx, node.inputs[0], node.outputs[0])
    elif bounds.get("min") == 0.0 and bounds.get("max") == 6.0:
        unary(ctx, node, "relu6")
    else:
        unary(ctx, node, "clip", **bounds)


def _clip_with_tensors(ctx, node, bounds) -> None:
    """ONNX Clip is min(max(x, lo), hi): with a runtime bound, one maximum and/or one minimum."""
    x, out = node.inputs[0], node.outputs[0]
    steps = [(op, bounds[key]) for op, key in (("maximum", "min"), ("minimum", "max")) if key in bounds]
    acc = x
    for index, (ttnn_op, bound) in enumerate(steps):
        target = out if index == len(steps) - 1 else intermediate(out, "lower_clipped", out.shape)
        binary_to(ctx, acc, bound, target, ttnn_op)
        acc = target


# ---- predicates and casts -------------------------------------------------------------------------------

@register("IsInf", 10, ttnn=("isinf", "isposinf", "isneginf"))
def isinf(ctx: LoweringContext, node: gs.Node) -> None:
    positive = int(node.attrs.get("detect_positive", 1))
    negative = int(node.attrs.get("detect_negative", 1))
    if positive and negative:
        unary(ctx, node, "isinf")
    elif positive or negative:
        unary(ctx, node, "isposinf" if positive else "isneginf")
    else:  # detects nothing: all false
        found = intermediate(node.outputs[0], "isinf", node.outputs[0].shape)
        unary_to(ctx, node.inputs[0], found, "isinf")
        tensor_scalar(ctx, node.outputs[0], found, "multiply", 0.0)


@register("CastLike", 15, ttnn=("typecast",), note="lowered as Cast to the second input's type")
def cast_like(ctx: LoweringContext, node: gs.Node) -> None:
    x, like = node.inputs[:2]
    to = like.dtype if isinstance(like.dtype, int) else onnx.helper.np_dtype_to_tensor_dtype(np.dtype(like.dtype))
    cast = gs.Node("Cast", attrs={"to": to}, inputs=[x], outputs=[node.outputs[0]])
    try:
        lookup("", "Cast", 21).fn(ctx, cast)
    finally:  # detach the helper node from the tensors it borrowed
        cast.inputs.clear()
        cast.outputs.clear()
