"""Elementwise ONNX ops -> ttnn unary and binary ops (broadcasting, scalar operands, NHWC pass-through).

Integer ONNX tensors live on the device as int32 and booleans in the float compute dtype (1.0 / 0.0); the
op table says which ttnn inputs take int32 (`integer_inputs`: lowering declines any other call, and a host
fallback computes the node).  Where integer semantics differ from float ones the rule says so: integer Div
truncates its quotient, integer Clip is a clamp (clip returns floats), integer Pow takes a non-negative
integer scalar exponent (else host_pow), integer Where takes its values as tensors (ttnn refuses a scalar
beside int32 values).
Variadic ops (Max, Min, Sum, Mean) become a left fold of binary ops; a single input is passed through.
Activations with parameters live in lowering/activations.py.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.ttnn_ops import Dtype, op_info
from onnx2ttnn.lowering.accuracy import tail_float32
from onnx2ttnn.lowering.context import NHWC, LoweringContext, check_int32, is_integer_value
from onnx2ttnn.lowering.registry import lookup, register
from onnx2ttnn.lowering.scalar_form import scaling_form

# ONNX op -> (ttnn op, schema versions checked).  Version 1 of the older ops (with the legacy
# `consumed_inputs` hint) has no ONNX shape inference and is not claimed; every later version only adds types:
# integers (Abs, Neg 6; Relu 14), bfloat16 (13, trigonometric/hyperbolic 22), float8 (IsNaN 20).
UNARY = {
    "Relu": ("relu", (6, 13, 14)), "Sigmoid": ("sigmoid", (6, 13)), "Tanh": ("tanh", (6, 13)),
    "Exp": ("exp", (6, 13)), "Log": ("log", (6, 13)), "Sqrt": ("sqrt", (6, 13)), "Neg": ("neg", (6, 13)),
    "Abs": ("abs", (6, 13)), "Erf": ("erf", (9, 13)), "Reciprocal": ("reciprocal", (6, 13)),
    "Sin": ("sin", (7, 22)), "Cos": ("cos", (7, 22)), "Floor": ("floor", (6, 13)), "Ceil": ("ceil", (6, 13)),
    "Not": ("logical_not", (1,)), "IsNaN": ("isnan", (9, 13, 20)),  # (Sign: lowering/activations.py)
    "Tan": ("tan", (7, 22)), "Asin": ("asin", (7, 22)), "Acos": ("acos", (7, 22)), "Atan": ("atan", (7, 22)),
    "Sinh": ("sinh", (9, 22)), "Cosh": ("cosh", (9, 22)), "Asinh": ("asinh", (9, 22)),
    "Acosh": ("acosh", (9, 22)), "Atanh": ("atanh", (9, 22)), "Round": ("round", (11, 22)),
}
# Numpy-style broadcasting is version 7 on; before it, `broadcast`/`axis` attributes aligned the second operand
# (neither onnxruntime nor the onnx reference runs those versions): not claimed.  Later versions add types:
# integers (Greater/Less 9, Equal 11, Add/Sub/Mul/Div 14 the small ones), a separate exponent type (Pow 12),
# bfloat16 (13, 15, 16), strings (Equal 19, never on the device).
BINARY = {
    "Add": ("add", (7, 13, 14)), "Sub": ("subtract", (7, 13, 14)), "Mul": ("multiply", (7, 13, 14)),
    "Equal": ("eq", (7, 11, 13, 19)), "Greater": ("gt", (7, 9, 13)), "GreaterOrEqual": ("ge", (12, 16)),
    "Less": ("lt", (7, 9, 13)), "LessOrEqual": ("le", (12, 16)),
    "And": ("logical_and", (7,)), "Or": ("logical_or", (7,)), "Xor": ("logical_xor", (7,)),
    "Pow": ("pow", (7, 12, 13, 15)),
}
# Versions 6 take equal shapes, 8 broadcasts numpy-style (the fold broadcasts either way); 12 adds integer
# types to Max/Min, 13 bfloat16.
VARIADIC = {"Max": ("maximum", (6, 8, 12, 13)), "Min": ("minimum", (6, 8, 12, 13)), "Sum": ("add", (6, 8, 13))}
COMMUTATIVE = {"add", "multiply", "maximum", "minimum", "eq", "logical_and", "logical_or", "logical_xor"}


def is_integer(tensor: gs.Tensor) -> bool:
    """Whether an ONNX tensor has an integer element type."""
    return tensor.dtype is not None and np.dtype(tensor.dtype).kind in "iu"


def intermediate(out: gs.Tensor, suffix: str, shape) -> gs.Variable:
    """An ONNX-level tensor for a partial result of a rule that lowers one node to several ttnn ops."""
    return gs.Variable(f"{out.name}_{suffix}", dtype=out.dtype, shape=[int(d) for d in shape])


def device_uint32(ids: gs.Variable) -> bool:
    """Whether integer indices are uint32 on the device: an argmax result or a typecast pinned to uint32
    (through ops that keep their input's dtype), or an upload read through views only (assign-layouts uploads
    it as uint32 for embedding; the program refuses a negative value at upload time rather than let it wrap).
    Other integers are int32 (signed: negative indices are wrapped from the end first)."""
    var, views_only = ids, True
    while var.inputs:
        producer = var.inputs[0]
        if producer.op == "argmax" or producer.attrs.get("_dtype") == "u32":
            return True
        if producer.op == "from_torch":  # an upload checks its values fit uint32 (negative ones are refused)
            return views_only
        info = op_info(producer.op)
        if producer.attrs.get("_dtype") or info.output_dtype != Dtype.FOLLOWS_INTEGER_INPUT or not producer.inputs:
            return False
        views_only = views_only and info.view
        var = producer.inputs[0]
    return False



# ---- unary ----------------------------------------------------------------------------------------------

def unary(ctx: LoweringContext, node: gs.Node, ttnn_op: str, **attrs) -> None:
    """Apply a unary ttnn op in whatever form its input is in (with a float32 input at an output tail:
    lowering/accuracy.py)."""
    if not attrs and tail_float32(ctx, node, ttnn_op):
        return
    unary_to(ctx, node.inputs[0], node.outputs[0], ttnn_op, **attrs)


def unary_to(ctx: LoweringContext, tensor: gs.Tensor, out: gs.Tensor, ttnn_op: str, **attrs) -> None:
    """`out = ttnn_op(tensor)`, keeping the input's form.  A uint32 input (an argmin's, an index upload's) is
    int32 first: ttnn's unary ops refuse uint32 (ttnn.neg: "unsupported dtype DataType::UINT32"; fuzz seed 103
    case 888), and negating one needs a signed type anyway."""
    x, form = ctx.value_with_form(tensor)
    if is_integer_value(x) and device_uint32(x):
        x = ctx.as_int32(x, out.name + "_signed")
    ctx.bind(out, ctx.op(ttnn_op, [x], x.shape, name=out.name, **attrs), form)


def _register_unary(op_type: str, ttnn_op: str, versions: tuple[int, ...]) -> None:
    register(op_type, versions=versions, ttnn=(ttnn_op,))(lambda ctx, node: unary(ctx, node, ttnn_op))


for _op_type, (_ttnn_op, _versions) in UNARY.items():
    _register_unary(_op_type, _ttnn_op, _versions)


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
    for tensor, c in ((a, ca), (b, cb)):
        if c is not None and c.size == 1 and c.dtype.kind in "iu":  # a scalar argument of an int32 op
            check_int32(c, f"node {ctx.source!r}: constant {tensor.name!r}")
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
    """`out = ttnn_op(tensor, scalar)` in the tensor's form; a float scaling is a multiplication or a division,
    whichever holds its scalar more exactly (lowering/scalar_form.py)."""
    if ttnn_op in ("multiply", "divide") and isinstance(scalar, float) and not attrs:
        ttnn_op, scalar = scaling_form(ttnn_op, scalar, ctx.dtype)
    x, form = ctx.value_with_form(tensor)
    arg = "exponent" if ttnn_op == "pow" else "input_tensor_b"
    ctx.bind(out, ctx.op(ttnn_op, [x], x.shape, name=out.name, **{arg: scalar}, **attrs), form)


def _tensor_tensor(ctx, out, a, b, ttnn_op, **attrs) -> None:
    form = _common_nhwc(ctx, a, b)
    if form is not None:
        xa, xb = (ctx.as_int32(_nhwc_operand(ctx, t, form), f"{t.name}_int32") for t in (a, b))
        xa, xb = ctx.one_kind(xa, xb)
        ctx.bind(out, ctx.op(ttnn_op, [xa, xb], form.flat_shape, name=out.name, **attrs), form)
        return
    rank = len(out.shape)
    xa, xb = (ranked_operand(ctx, t, rank) for t in (a, b))
    xa, xb = (ctx.as_int32(x, f"{x.name}_int32") for x in (xa, xb))  # no int32 x uint32 on ttnn
    xa, xb = ctx.one_kind(xa, xb)
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


def _register_binary(op_type: str, ttnn_op: str, versions: tuple[int, ...]) -> None:
    scaling = ttnn_op == "multiply"  # by a constant: a division where bfloat16 holds the divisor (scalar_form.py)
    register(op_type, versions=versions, ttnn=(ttnn_op, "divide") if scaling else (ttnn_op,),
             note="by a constant 1/c: divide by c where bf16 holds c" if scaling else "")(
        lambda ctx, node: binary(ctx, node, ttnn_op))


for _op_type, (_ttnn_op, _versions) in BINARY.items():
    if _op_type != "Pow":
        _register_binary(_op_type, _ttnn_op, _versions)


@register("Pow", versions=BINARY["Pow"][1], ttnn=("pow",),
          note="integer base: a non-negative integer scalar exponent (else host_pow)")
def pow_(ctx: LoweringContext, node: gs.Node) -> None:
    """Pow-7 (numpy broadcasting); 12: integer types and a separate exponent type; 13, 15: bfloat16.  ttnn.pow
    of an int32 base takes only a non-negative integer scalar exponent (probe_integers.py); other integer
    powers are declined (host fallback host_pow)."""
    base, exponent = node.inputs
    if is_integer(base):
        e = ctx.constant(exponent)
        if e is None or e.size != 1 or not np.isfinite(e).all() or e.reshape(-1)[0] < 0 \
                or e.reshape(-1)[0] != np.round(e.reshape(-1)[0]):
            ctx.decline("ttnn.pow of an int32 base takes only a non-negative integer scalar exponent")
        tensor_scalar(ctx, node.outputs[0], base, "pow", int(e.reshape(-1)[0]))
        return
    binary(ctx, node, "pow")


@register("Div", versions=(7, 13, 14), ttnn=("divide", "multiply"),
          note="integer division truncates (rounding_mode='trunc')")
def div(ctx: LoweringContext, node: gs.Node) -> None:
    """Div-7 on (numpy broadcasting, as BINARY); 13: bfloat16; 14: 8- and 16-bit integers."""
    if is_integer(node.inputs[0]) and is_integer(node.inputs[1]):
        binary(ctx, node, "divide", rounding_mode="trunc")
    else:
        binary(ctx, node, "divide")


@register("Mod", versions=(10, 13, 28), ttnn=("remainder", "fmod"),
          note="fmod=0: divisor's sign (remainder); fmod=1: dividend's")
def mod(ctx: LoweringContext, node: gs.Node) -> None:
    """Mod-10; 13: bfloat16; 28: fmod=0 defined for floats too (A - floor(A/B) * B, what remainder computes)."""
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


def _register_variadic(op_type: str, ttnn_op: str, versions: tuple[int, ...]) -> None:
    register(op_type, versions=versions, ttnn=(ttnn_op,), note="variadic: a chain of binary ops")(
        lambda ctx, node: fold(ctx, node.inputs, node.outputs[0], ttnn_op))


for _op_type, (_ttnn_op, _versions) in VARIADIC.items():
    _register_variadic(_op_type, _ttnn_op, _versions)


@register("Mean", versions=(6, 8, 13), ttnn=("add", "multiply", "divide"),
          note="variadic: a chain of adds, then a scaling by 1/n (a division by n in bf16)")
def mean(ctx: LoweringContext, node: gs.Node) -> None:
    """Mean-6 (equal shapes); 8: numpy broadcasting; 13: bfloat16."""
    inputs = [t for t in node.inputs if t.name]
    out = node.outputs[0]
    if len(inputs) == 1:
        pass_through(ctx, inputs[0], out)
        return
    total = intermediate(out, "sum", out.shape)
    fold(ctx, inputs, total, "add")
    tensor_scalar(ctx, out, total, "multiply", 1.0 / len(inputs))


# ---- selection and clamping -----------------------------------------------------------------------------

@register("Where", versions=(9, 16), ttnn=("where",))
def where(ctx: LoweringContext, node: gs.Node) -> None:
    """Where-9; 16: bfloat16."""
    cond, x, y = node.inputs
    out = node.outputs[0]
    rank = len(out.shape)
    args, attrs = [ranked_operand(ctx, cond, rank)], {}
    for param, t in (("true_value", x), ("false_value", y)):
        c = ctx.constant(t)
        if c is not None and c.size == 1 and not is_integer(t):  # int32 values must be tensors (probe)
            attrs[param] = scalar_of(c.astype(np.float32))
        else:
            args.append(ctx.as_int32(ranked_operand(ctx, t, rank), f"{t.name}_int32"))
    ctx.bind(out, ctx.op("where", args, out.shape, name=out.name, **attrs))


@register("Clip", versions=(11, 12, 13), ttnn=("clip", "clamp", "maximum", "minimum"),
          note="runtime bounds: maximum then minimum; integers: clamp")
def clip(ctx: LoweringContext, node: gs.Node) -> None:
    """Clip-11: the bounds are optional inputs (before: attributes, clip_6); 12: integer types; 13: bfloat16."""
    bounds = {key: node.inputs[i] for i, key in ((1, "min"), (2, "max"))
              if len(node.inputs) > i and node.inputs[i].name}
    if any(ctx.constant(t) is None for t in bounds.values()):
        _clip_with_tensors(ctx, node, bounds)
        return
    if is_integer(node.inputs[0]):  # ttnn.clip turns int32 into FLOAT32; clamp keeps it (probe_integers.py)
        for t in bounds.values():
            check_int32(ctx.constant(t), f"node {ctx.source!r}: bound {t.name!r}")
        ints = {key: int(ctx.constant(t).reshape(-1)[0]) for key, t in bounds.items()}
        if ints:
            unary(ctx, node, "clamp", **ints)
        else:
            pass_through(ctx, node.inputs[0], node.outputs[0])
        return
    _clip(ctx, node, {key: float(ctx.constant(t).reshape(-1)[0]) for key, t in bounds.items()})


@register("Clip", versions=(6,), ttnn=("clip",))
def clip_6(ctx: LoweringContext, node: gs.Node) -> None:
    """Clip-6: `min` / `max` attributes, float types."""
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

@register("IsInf", versions=(10, 20), ttnn=("isinf", "isposinf", "isneginf"))
def isinf(ctx: LoweringContext, node: gs.Node) -> None:
    """IsInf-10; 20: bfloat16, float16 and float8 inputs."""
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


@register("CastLike", versions=(15, 19, 21, 23, 24, 25), ttnn=("typecast",),
          note="lowered as Cast to the second input's type")
def cast_like(ctx: LoweringContext, node: gs.Node) -> None:
    """CastLike-15, then the types (and float8 `saturate`, `round_mode`) Cast gains in 19-25: as Cast."""
    x, like = node.inputs[:2]
    to = like.dtype if isinstance(like.dtype, int) else onnx.helper.np_dtype_to_tensor_dtype(np.dtype(like.dtype))
    cast = gs.Node("Cast", attrs={"to": to}, inputs=[x], outputs=[node.outputs[0]])
    try:
        lookup("", "Cast", 21).fn(ctx, cast)
    finally:  # detach the helper node from the tensors it borrowed
        cast.inputs.clear()
        cast.outputs.clear()
