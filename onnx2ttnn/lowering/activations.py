"""Activation ONNX ops -> ttnn activations, passing ONNX's parameters explicitly.

When a ttnn op has the ONNX function with fixed constants (ttnn.hardsigmoid is relu6(x + 3) / 6), it is
used only for those constants; other parameters are composed from primitives.  Every rule keeps its input's
form, so activations after a convolution stay in flattened NHWC.  The later versions of these ops add
types only: bfloat16 (LeakyRelu 16, PRelu 16, most others 22), integers (PRelu 9), double/float16 (Celu 28).
The first schemas of HardSigmoid, LeakyRelu, Elu, Selu (version 1, with the legacy `consumed_inputs` hint and
no ONNX shape inference) and PRelu (1 and 6, before unidirectional broadcasting of the slope) are not claimed.
Sign lives here too: like PRelu's, its rule keeps a NaN where the ttnn op alone may not.
"""
from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import TTNNRef
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.eltwise import (binary_to, intermediate, is_integer, pass_through, ranked_operand,
                                       tensor_scalar, unary, unary_to)
from onnx2ttnn.lowering.registry import register

SELU_ALPHA = 1.67326319217681884765625  # ONNX Selu defaults (float32 values of the paper's constants)
SELU_GAMMA = 1.05070102214813232421875


def _attr(node: gs.Node, name: str, default: float) -> float:
    return float(node.attrs.get(name, default))


@register("Gelu", versions=(20,), ttnn=("gelu",), note="approximate='tanh': variant=GeluVariant.Tanh")
def gelu(ctx: LoweringContext, node: gs.Node) -> None:
    """Gelu-20: the erf form (ttnn's default, GeluVariant.Accurate) or, with approximate='tanh', the tanh form,
    GeluVariant.Tanh (not fast_and_approximate_mode=True: that selects the 6-piece FastLut, about 1 % absolute
    error; results/unary_modes.txt)."""
    if node.attrs.get("approximate", "none") == "tanh":
        unary(ctx, node, "gelu", variant=TTNNRef("GeluVariant.Tanh"))
    else:
        unary(ctx, node, "gelu")


@register("Gelu", versions=(1,), domain="onnx2ttnn", ttnn=("gelu",),
          note="fused from the Erf pattern, or the tanh one (approximate='tanh')")
def fused_gelu(ctx: LoweringContext, node: gs.Node) -> None:
    gelu(ctx, node)


@register("HardSigmoid", versions=(6, 22), ttnn=("hardsigmoid", "multiply", "divide", "add", "clip"),
          note="ttnn.hardsigmoid for alpha=1/6, beta=0.5; else clip(alpha*x + beta, 0, 1)")
def hard_sigmoid(ctx: LoweringContext, node: gs.Node) -> None:
    alpha, beta = _attr(node, "alpha", 0.2), _attr(node, "beta", 0.5)
    if math.isclose(alpha, 1.0 / 6.0, rel_tol=1e-6) and beta == 0.5:
        unary(ctx, node, "hardsigmoid")
        return
    out = node.outputs[0]
    scaled = intermediate(out, "scaled", out.shape)
    tensor_scalar(ctx, scaled, node.inputs[0], "multiply", alpha)
    shifted = intermediate(out, "shifted", out.shape)
    tensor_scalar(ctx, shifted, scaled, "add", beta)
    unary_to(ctx, shifted, out, "clip", min=0.0, max=1.0)


@register("HardSwish", versions=(14, 22), ttnn=("hardswish",))
def hard_swish(ctx: LoweringContext, node: gs.Node) -> None:
    unary(ctx, node, "hardswish")


@register("LeakyRelu", versions=(6, 16), ttnn=("leaky_relu",))
def leaky_relu(ctx: LoweringContext, node: gs.Node) -> None:
    unary(ctx, node, "leaky_relu", negative_slope=_attr(node, "alpha", 0.01))


@register("PRelu", versions=(7, 9, 16), ttnn=("leaky_relu", "relu", "minimum", "multiply", "add", "lt", "where"),
          note="one-element finite slope: leaky_relu; a finite constant slope (or integers): relu(x) + slope * "
               "min(x, 0); else where(x < 0, slope * x, x)")
def prelu(ctx: LoweringContext, node: gs.Node) -> None:
    """PRelu-7 (unidirectional broadcasting); 9: integers; 16: bfloat16.  The sum relu(x) + slope * min(x, 0)
    is x for x >= 0 only while slope * 0 is 0: an infinite or NaN slope (or one computed at run time, which
    may be) selects instead (fuzz seed 61 case 1494: an inf slope over |x| gave NaN, the spec x)."""
    x, slope = node.inputs
    out = node.outputs[0]
    value = ctx.constant(slope)
    finite = value is not None and (value.dtype.kind in "iub" or bool(np.all(np.isfinite(value))))
    if finite and value.size == 1:
        unary(ctx, node, "leaky_relu", negative_slope=float(value.reshape(-1)[0]))
        return
    if not finite and np.dtype(out.dtype).kind == "f":
        _prelu_select(ctx, x, slope, out)
        return
    positive = intermediate(out, "positive", x.shape)
    unary_to(ctx, x, positive, "relu")
    negative = intermediate(out, "negative", x.shape)
    tensor_scalar(ctx, negative, x, "minimum", 0.0)
    scaled = intermediate(out, "scaled", out.shape)
    binary_to(ctx, negative, slope, scaled, "multiply")
    binary_to(ctx, positive, scaled, out, "add")


def _prelu_select(ctx: LoweringContext, x: gs.Tensor, slope: gs.Tensor, out: gs.Tensor) -> None:
    """out = where(x < 0, slope * x, x): no product reaches where x >= 0 (x NaN: not < 0, so NaN)."""
    rank = len(out.shape)
    xr, sr = ranked_operand(ctx, x, rank), ranked_operand(ctx, slope, rank)
    below = ctx.op("lt", [xr], xr.shape, name=out.name + "_below", input_tensor_b=0.0)
    scaled = ctx.op("multiply", [xr, sr], out.shape, name=out.name + "_scaled")
    ctx.bind(out, ctx.op("where", [below, scaled, xr], out.shape, name=out.name))


@register("Elu", versions=(6, 22), ttnn=("elu",))
def elu(ctx: LoweringContext, node: gs.Node) -> None:
    unary(ctx, node, "elu", alpha=_attr(node, "alpha", 1.0))


@register("Selu", versions=(6, 22), ttnn=("selu",))
def selu(ctx: LoweringContext, node: gs.Node) -> None:
    unary(ctx, node, "selu", scale=_attr(node, "gamma", SELU_GAMMA), alpha=_attr(node, "alpha", SELU_ALPHA))


@register("Celu", versions=(12, 28), ttnn=("celu",))
def celu(ctx: LoweringContext, node: gs.Node) -> None:
    """alpha 0 or not finite is declined (its host fallback computes the spec's formula as onnxruntime does: for
    alpha 0, 0 below zero and NaN from 0 on, x / 0 being +-inf or NaN; what ttnn.celu's kernel makes of a
    division by 0 or inf * 0 is not known; fuzz seed 71 case 680 crashed the simulator, whose torch celu refuses
    alpha 0)."""
    alpha = _attr(node, "alpha", 1.0)
    if alpha == 0 or not math.isfinite(alpha):  # (seed 83 case 1228: alpha inf, inf * 0 in the formula)
        ctx.decline(f"alpha {alpha} (a division by zero or inf * 0 in the formula)")
    unary(ctx, node, "celu", alpha=alpha)


@register("Softplus", versions=(1, 22), ttnn=("softplus",), note="beta=1; linear above 20 (ttnn's threshold)")
def softplus(ctx: LoweringContext, node: gs.Node) -> None:
    unary(ctx, node, "softplus", beta=1.0, threshold=20.0)


@register("Softsign", versions=(1, 22), ttnn=("softsign",))
def softsign(ctx: LoweringContext, node: gs.Node) -> None:
    unary(ctx, node, "softsign")


@register("Mish", versions=(18, 22), ttnn=("mish",))
def mish(ctx: LoweringContext, node: gs.Node) -> None:
    unary(ctx, node, "mish")


@register("ThresholdedRelu", versions=(10, 22), ttnn=("threshold",), note="x where x > alpha, else 0")
def thresholded_relu(ctx: LoweringContext, node: gs.Node) -> None:
    unary(ctx, node, "threshold", threshold=_attr(node, "alpha", 1.0), value=0.0)


@register("Shrink", versions=(9,), ttnn=("hardshrink", "softshrink", "sign", "multiply", "divide", "subtract", "lt",
                                         "add", "where"),
          note="bias 0: hardshrink; bias = lambd: softshrink; else h - bias * sign(h), h = hardshrink(x); "
               "lambd < 0: where(x < -lambd, x + bias, x - bias)")
def shrink(ctx: LoweringContext, node: gs.Node) -> None:
    lambd, bias = _attr(node, "lambd", 0.5), _attr(node, "bias", 0.0)
    if lambd < 0:
        _shrink_negative(ctx, node, lambd, bias)
    elif bias == 0.0:
        unary(ctx, node, "hardshrink", lambd=lambd)
    elif bias == lambd:
        unary(ctx, node, "softshrink", lambd=lambd)
    else:
        out = node.outputs[0]
        kept = intermediate(out, "kept", out.shape)
        unary_to(ctx, node.inputs[0], kept, "hardshrink", lambd=lambd)
        side = intermediate(out, "side", out.shape)
        unary_to(ctx, kept, side, "sign")
        shift = intermediate(out, "shift", out.shape)
        tensor_scalar(ctx, shift, side, "multiply", bias)
        binary_to(ctx, kept, shift, out, "subtract")


def _shrink_negative(ctx: LoweringContext, node: gs.Node, lambd: float, bias: float) -> None:
    """lambd < 0: both of the spec's conditions hold between lambd and -lambd and the first wins, so the output
    is x + bias below -lambd and x - bias from there on, never 0 (x itself when bias is 0).  Neither shrink
    kernel has this case: hardshrink zeroes nothing, softshrink refuses a negative lambd in torch, and what
    ttnn's kernels make of one is not known (fuzz seed 107 case 810: lambd -1e9 gave x - bias for x > 0)."""
    x, out = node.inputs[0], node.outputs[0]
    if bias == 0.0:
        pass_through(ctx, x, out)
        return
    value, form = ctx.value_with_form(x)
    below = ctx.op("lt", [value], value.shape, name=out.name + "_below", input_tensor_b=-lambd)
    raised = ctx.op("add", [value], value.shape, name=out.name + "_raised", input_tensor_b=bias)
    lowered = ctx.op("subtract", [value], value.shape, name=out.name + "_lowered", input_tensor_b=bias)
    ctx.bind(out, ctx.op("where", [below, raised, lowered], value.shape, name=out.name), form)


@register("Sign", versions=(9, 13), ttnn=("sign", "isnan", "where"), note="floats: where(isnan(x), x, sign(x))")
def sign(ctx: LoweringContext, node: gs.Node) -> None:
    """Sign-9 (13: bfloat16).  A float NaN stays NaN, as onnxruntime and the spec's numpy give (the simulator's
    ttnn.sign is torch's, 0 for NaN, and what ttnn's kernel gives is not known; fuzz seed 137 case 240:
    Sign(Tan(inf * Tanh(x))) gave 0 where onnxruntime gives NaN)."""
    x, out = node.inputs[0], node.outputs[0]
    if is_integer(x):
        unary(ctx, node, "sign")
        return
    value, form = ctx.value_with_form(x)
    signs = ctx.op("sign", [value], value.shape, name=out.name + "_sign")
    nan = ctx.op("isnan", [value], value.shape, name=out.name + "_nan")
    ctx.bind(out, ctx.op("where", [nan, value, signs], value.shape, name=out.name), form)
