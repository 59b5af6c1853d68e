"""Element-wise ops: unary math and activations, binary arithmetic/comparison with broadcasting, where.

Each op computes in float32 (int64 for integer tensors) from the stored, already-rounded inputs and rounds
the result once to the output dtype.  Scalar operands are rounded to the tensor's dtype first (a bf16
tensor's scalar is a bf16 value on the device).  Comparisons return 1.0 / 0.0 in the output dtype (input
a's by default).  Supported dtypes follow the API docstrings; bfloat16 and float32 are always accepted.
Integer facts measured on real ttnn (tools/ttnn_mock/probes/probe_integers.py, docs/ttnn-facts.md): an int32
operand mixes with neither a uint32 nor a float one; neg and abs keep int32; clip returns FLOAT32 for an int32 input (clamp keeps it);
divide of int32 returns FLOAT32 unless rounding_mode is given; pow of an int32 base takes a non-negative
integer scalar exponent in TILE only; where refuses a scalar value beside an int32 tensor value.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ._activation import apply_activation, lhs_activations, parse_activation
from ._common import device_result, output_config, require_dtype, require_tile, same_device, tensor_arg, values
from ._rounding import round_scalar
from ._tensor import Tensor
from . import _sfpu
from ._types import DataType as D, GeluVariant, Layout, SigmoidMode

_FLOAT = frozenset({D.BFLOAT16, D.FLOAT32, D.BFLOAT8_B})
_ALL_INT = frozenset({D.INT32, D.UINT32, D.UINT16, D.UINT8})
_ARITH = _FLOAT | {D.INT32, D.UINT32, D.UINT16}


def _unary_impl(op: str, fn, allowed, input_tensor: Tensor, memory_config) -> Tensor:
    tensor_arg(op, "input_tensor", input_tensor)
    require_dtype(op, "input_tensor", input_tensor, allowed)
    out = fn(values(input_tensor))
    mc = output_config(op, memory_config, input_tensor, out.shape, input_tensor._layout)
    return device_result(op, out, input_tensor._dtype, input_tensor._layout, input_tensor._device, mc)


def _make_unary(name: str, fn, allowed=_FLOAT, doc: str = ""):
    op = f"ttnn.{name}"

    def unary(input_tensor: Tensor, *, memory_config=None) -> Tensor:
        return _unary_impl(op, fn, allowed, input_tensor, memory_config)

    unary.__name__ = unary.__qualname__ = name
    unary.__doc__ = doc or f"Element-wise {name}."
    return unary


def _float(fn):
    """Wrap a float-only torch function so integer inputs are computed as floats."""
    return lambda x: fn(x if x.is_floating_point() else x.double())


relu = _make_unary("relu", torch.relu, _FLOAT | _ALL_INT)
relu6 = _make_unary("relu6", lambda x: x.clamp(0, 6), _FLOAT | _ALL_INT)
log = _make_unary("log", torch.log)
sqrt = _make_unary("sqrt", torch.sqrt)
rsqrt = _make_unary("rsqrt", torch.rsqrt)
neg = _make_unary("neg", torch.neg, _FLOAT | {D.INT32})
abs = _make_unary("abs", torch.abs, _FLOAT | {D.INT32})
reciprocal = _make_unary("reciprocal", torch.reciprocal)
sin = _make_unary("sin", torch.sin)
cos = _make_unary("cos", torch.cos)
floor = _make_unary("floor", torch.floor)
ceil = _make_unary("ceil", torch.ceil)
sign = _make_unary("sign", torch.sign)
silu = _make_unary("silu", F.silu)
isnan = _make_unary("isnan", lambda x: torch.isnan(x).to(x.dtype), doc="1 where the input is NaN, else 0.")
isinf = _make_unary("isinf", lambda x: torch.isinf(x).to(x.dtype), doc="1 where the input is +-inf, else 0.")
isfinite = _make_unary("isfinite", lambda x: torch.isfinite(x).to(x.dtype), doc="1 where the input is finite.")
square = _make_unary("square", torch.square)
log1p = _make_unary("log1p", torch.log1p)
log2 = _make_unary("log2", torch.log2)
log10 = _make_unary("log10", torch.log10)
exp2 = _make_unary("exp2", torch.exp2)
expm1 = _make_unary("expm1", torch.expm1)
tan = _make_unary("tan", torch.tan)
atan = _make_unary("atan", torch.atan)
asin = _make_unary("asin", torch.asin)
acos = _make_unary("acos", torch.acos)
sinh = _make_unary("sinh", torch.sinh)
cosh = _make_unary("cosh", torch.cosh)
trunc = _make_unary("trunc", torch.trunc)
hardsigmoid = _make_unary("hardsigmoid", F.hardsigmoid)
hardswish = _make_unary("hardswish", F.hardswish)
softsign = _make_unary("softsign", F.softsign)
tanhshrink = _make_unary("tanhshrink", F.tanhshrink)
asinh = _make_unary("asinh", torch.asinh)
acosh = _make_unary("acosh", torch.acosh)
atanh = _make_unary("atanh", torch.atanh)
isposinf = _make_unary("isposinf", lambda x: torch.isposinf(x).to(x.dtype), doc="1 where the input is +inf, else 0.")
isneginf = _make_unary("isneginf", lambda x: torch.isneginf(x).to(x.dtype), doc="1 where the input is -inf, else 0.")
logical_not = _make_unary("logical_not", lambda x: (x == 0).to(x.dtype), _FLOAT | {D.INT32, D.UINT16, D.UINT32},
                          "1 where the input is 0, else 0.")


# ---- unary ops with accuracy variants: the kernels' arithmetic (_sfpu.py, docs/ttnn-facts.md §16) ----------

def _fp32_dest(input_tensor: Tensor) -> bool:
    """Whether the kernel runs with a float32 dest (DST_ACCUM_MODE): for float32 inputs (probe_unary_modes.py)."""
    return isinstance(input_tensor, Tensor) and input_tensor._dtype is D.FLOAT32


def _not_modelled(op: str, variant: str):
    raise RuntimeError(f"onnx2ttnn simulator: {op} with {variant} is a lookup-table kernel the simulator does "
                       "not model (docs/ttnn-facts.md §16); onnx2ttnn never emits it")


def sigmoid(input_tensor: Tensor, *, vector_mode: int = 4, mode: SigmoidMode = SigmoidMode.Accurate,
            memory_config=None) -> Tensor:
    """Logistic sigmoid.  mode Accurate: 1 / (1 + exp(-x)) (bfloat16: exp_21f and one Newton step, about one
    bfloat16 ulp); FastApproximate: the three-piece linear LUT (0 below -2, 1 above 2); AccurateWithFastExp:
    Schraudolph's exp, then the Newton reciprocal.  vector_mode 2 (VectorMode::C) computes the left half of
    every tile (columns 0-15 of each 32) and leaves the rest as it was."""
    if not isinstance(mode, SigmoidMode):
        raise TypeError(f"ttnn.sigmoid: mode must be a ttnn.SigmoidMode, got {mode!r}")
    if vector_mode not in (2, 4):
        raise RuntimeError(f"TT_FATAL: ttnn.sigmoid: vector_mode must be 2 or 4, got {vector_mode}")
    fp32 = _fp32_dest(input_tensor)
    if mode is SigmoidMode.FastApproximate:
        fn = lambda x: _sfpu.sigmoid_lut(x, fp32)  # noqa: E731
    elif mode is SigmoidMode.AccurateWithFastExp:
        fn = lambda x: _sfpu.sigmoid_fast_exp(x, fp32)  # noqa: E731
    else:
        fn = lambda x: _sfpu.sigmoid_accurate(x, fp32)  # noqa: E731
    if vector_mode == 2:
        inner = fn
        fn = lambda x: torch.where(_left_half_columns(x), inner(x), x)  # noqa: E731
    return _unary_impl("ttnn.sigmoid", fn, _FLOAT, input_tensor, memory_config)


def _left_half_columns(x: torch.Tensor) -> torch.Tensor:
    """True in columns 0-15 of every 32 (the tile faces VectorMode::C runs on), broadcastable over x."""
    if x.dim() == 0:
        return torch.tensor(True)
    return (torch.arange(x.shape[-1]) % 32) < 16


def sigmoid_accurate(input_tensor: Tensor, fast_and_approximate_mode: bool = False, *,
                     memory_config=None) -> Tensor:
    """Deprecated alias of ttnn.sigmoid: mode Accurate, or AccurateWithFastExp when fast_and_approximate_mode."""
    mode = SigmoidMode.AccurateWithFastExp if fast_and_approximate_mode else SigmoidMode.Accurate
    return sigmoid(input_tensor, mode=mode, memory_config=memory_config)


def exp(input_tensor: Tensor, *, fast_and_approximate_mode: bool = False, memory_config=None) -> Tensor:
    """e**x.  Accurate (default): exp_21f rounded to nearest for bfloat16, exact for float32 (modelled);
    fast_and_approximate_mode: Schraudolph's exp (about 4 % relative error)."""
    fp32 = _fp32_dest(input_tensor)
    return _unary_impl("ttnn.exp", lambda x: _sfpu.exp_kernel(x, bool(fast_and_approximate_mode), fp32), _FLOAT,
                       input_tensor, memory_config)


def tanh(input_tensor: Tensor, *, memory_config=None, fast_and_approximate_mode: bool = False) -> Tensor:
    """tanh; the accurate kernel (default) is modelled exact; the fast one (a 6-piece LUT) is not modelled."""
    if fast_and_approximate_mode:
        _not_modelled("ttnn.tanh", "fast_and_approximate_mode=True")
    return _unary_impl("ttnn.tanh", torch.tanh, _FLOAT, input_tensor, memory_config)


def erf(input_tensor: Tensor, *, fast_and_approximate_mode: bool = False, memory_config=None) -> Tensor:
    """erf; the accurate kernel (default) is modelled exact; the fast one is not modelled."""
    if fast_and_approximate_mode:
        _not_modelled("ttnn.erf", "fast_and_approximate_mode=True")
    return _unary_impl("ttnn.erf", torch.erf, _FLOAT, input_tensor, memory_config)


def gelu(input_tensor: Tensor, *, variant: GeluVariant = GeluVariant.Accurate, memory_config=None) -> Tensor:
    """GELU (the `variant` overload; the legacy `fast_and_approximate_mode` one, True = FastLut, is not
    simulated).  variant Accurate: the erf form (modelled exact); Tanh: 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715
    x**3))) in float32; FastLut is not modelled."""
    if not isinstance(variant, GeluVariant):
        raise TypeError(f"ttnn.gelu: variant must be a ttnn.GeluVariant, got {variant!r}")
    if variant is GeluVariant.FastLut:
        _not_modelled("ttnn.gelu", "GeluVariant.FastLut")
    approx = "tanh" if variant is GeluVariant.Tanh else "none"
    return _unary_impl("ttnn.gelu", lambda x: F.gelu(x, approximate=approx), _FLOAT, input_tensor, memory_config)


def elu(input_tensor: Tensor, *, alpha: float = 1.0, memory_config=None) -> Tensor:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return _unary_impl("ttnn.elu", lambda x: F.elu(x, alpha), _FLOAT, input_tensor, memory_config)


def softplus(input_tensor: Tensor, *, beta: float = 1.0, threshold: float = 20.0, memory_config=None) -> Tensor:
    """log(1 + exp(beta x)) / beta, linear above threshold."""
    return _unary_impl("ttnn.softplus", lambda x: F.softplus(x, beta, threshold), _FLOAT, input_tensor,
                       memory_config)


def selu(input_tensor: Tensor, *, scale: float = 1.0507, alpha: float = 1.67326, memory_config=None) -> Tensor:
    """scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))."""
    return _unary_impl("ttnn.selu", lambda x: scale * torch.where(x > 0, x, alpha * torch.expm1(x)), _FLOAT,
                       input_tensor, memory_config)


def celu(input_tensor: Tensor, *, alpha: float = 1.0, memory_config=None) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return _unary_impl("ttnn.celu", lambda x: F.celu(x, alpha), _FLOAT, input_tensor, memory_config)


def mish(input_tensor: Tensor, *, fast_and_approximate_mode: bool = False, memory_config=None) -> Tensor:
    """x * tanh(softplus(x))."""
    return _unary_impl("ttnn.mish", F.mish, _FLOAT, input_tensor, memory_config)


def threshold(input_tensor: Tensor, threshold: float, value: float, *, memory_config=None) -> Tensor:
    """x where x > threshold, else value."""
    return _unary_impl("ttnn.threshold", lambda x: torch.where(x > threshold, x, torch.tensor(value, dtype=x.dtype)),
                       _FLOAT, input_tensor, memory_config)


def round(input_tensor: Tensor, *, decimals: int | None = 0, memory_config=None) -> Tensor:
    """Round to `decimals` decimal places, halves to even (the kernel's round_even)."""
    places = 0 if decimals is None else int(decimals)
    if not -6 <= places <= 7:
        raise RuntimeError(f"TT_FATAL: ttnn.round: decimals must be in [-6, 7], got {places}")
    return _unary_impl("ttnn.round", lambda x: torch.round(x, decimals=places), _FLOAT, input_tensor, memory_config)


def softshrink(input_tensor: Tensor, *, lambd: float = 0.5, memory_config=None) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    return _unary_impl("ttnn.softshrink", lambda x: F.softshrink(x, lambd), _FLOAT, input_tensor, memory_config)


def hardshrink(input_tensor: Tensor, *, lambd: float = 0.5, memory_config=None) -> Tensor:
    """x where |x| > lambd, else 0."""
    return _unary_impl("ttnn.hardshrink", lambda x: F.hardshrink(x, lambd), _FLOAT, input_tensor, memory_config)


def leaky_relu(input_tensor: Tensor, negative_slope: float, *, memory_config=None) -> Tensor:
    """x for x >= 0, negative_slope * x otherwise."""
    return _unary_impl("ttnn.leaky_relu", _float(lambda x: F.leaky_relu(x, negative_slope)),
                       _FLOAT | {D.UINT32, D.UINT16, D.UINT8}, input_tensor, memory_config)


def hardtanh(input_tensor: Tensor, *, min_val: float = -1.0, max_val: float = 1.0, memory_config=None) -> Tensor:
    """Clamp to [min_val, max_val]."""
    return _unary_impl("ttnn.hardtanh", lambda x: x.clamp(min_val, max_val), _FLOAT, input_tensor, memory_config)


def _clamp_impl(op: str, input_tensor: Tensor, min, max, memory_config) -> Tensor:
    if min is None and max is None:
        raise RuntimeError(f"TT_FATAL: {op}: at least one of min or max must be given")
    tensor_arg(op, "input_tensor", input_tensor)
    require_dtype(op, "input_tensor", input_tensor, _FLOAT | {D.INT32})
    x = values(input_tensor)
    bounds = []
    for name, bound in (("min", min), ("max", max)):
        if isinstance(bound, Tensor):
            tensor_arg(op, name, bound)
            bounds.append(values(bound))
        else:
            bounds.append(None if bound is None else round_scalar(bound, input_tensor._dtype))
    lo, hi = bounds
    out = x
    if lo is not None:
        out = torch.maximum(out, lo) if isinstance(lo, torch.Tensor) else out.clamp(min=lo)
    if hi is not None:
        out = torch.minimum(out, hi) if isinstance(hi, torch.Tensor) else out.clamp(max=hi)
    mc = output_config(op, memory_config, input_tensor, out.shape, input_tensor._layout)
    out_dtype = D.FLOAT32 if op == "ttnn.clip" and input_tensor._dtype is D.INT32 else input_tensor._dtype
    return device_result(op, out, out_dtype, input_tensor._layout, input_tensor._device, mc)


def clip(input_tensor: Tensor, min=None, max=None, *, memory_config=None) -> Tensor:
    """Clamp to [min, max] (scalars or tensors; either may be None)."""
    return _clamp_impl("ttnn.clip", input_tensor, min, max, memory_config)


def clamp(input_tensor: Tensor, min=None, max=None, *, memory_config=None) -> Tensor:
    """Clamp to [min, max] (scalars or tensors; either may be None)."""
    return _clamp_impl("ttnn.clamp", input_tensor, min, max, memory_config)


# ---- binary ---------------------------------------------------------------------------------------------

def _operand(op: str, name: str, x, like: Tensor):
    if isinstance(x, Tensor):
        tensor_arg(op, name, x)
        return values(x)
    if isinstance(x, (bool, int, float)):
        return round_scalar(x, like._dtype)
    raise TypeError(f"{op}: {name} must be a ttnn.Tensor or a number, got {type(x).__name__}")


def _broadcast_shape(op: str, *tensors) -> tuple:
    shapes = [tuple(t._data.shape) for t in tensors if isinstance(t, Tensor)]
    try:
        return tuple(torch.broadcast_shapes(*shapes))
    except RuntimeError:
        raise RuntimeError(f"TT_FATAL: {op}: shapes {' and '.join(str(list(s)) for s in shapes)} are not "
                           "broadcastable") from None


def _binary_impl(op: str, fn, allowed, a, b, dtype, memory_config, *, compare: bool = False,
                 activations=None, a_activations=None) -> Tensor:
    like = a if isinstance(a, Tensor) else b
    if not isinstance(like, Tensor):
        raise TypeError(f"{op}: at least one operand must be a ttnn.Tensor")
    tensors = [t for t in (a, b) if isinstance(t, Tensor)]
    for name, t in zip(("input_tensor_a", "input_tensor_b"), (a, b)):
        if isinstance(t, Tensor):
            tensor_arg(op, name, t)
            require_dtype(op, name, t, allowed)
    same_device(op, *tensors)
    _broadcast_shape(op, *tensors)
    kinds = {t._dtype for t in tensors}
    if len(kinds) == 2 and kinds & {D.INT32, D.UINT32}:  # int32 beside uint32 or beside a float
        raise RuntimeError(f"TT_FATAL: {op}: Mixed dtype is not supported (dtype A: "
                           f"DataType::{tensors[0]._dtype.name}, dtype B: DataType::{tensors[1]._dtype.name})")
    x, y = _operand(op, "input_tensor_a", a, like), _operand(op, "input_tensor_b", b, like)
    if a_activations:
        x = lhs_activations(op, a, x, a_activations)
    out = fn(x, y)
    for act in activations or ():  # fused into the binary kernel, before the rounding (docs/ttnn-facts.md §22)
        out = apply_activation(out.float() if out.is_floating_point() else out,
                               parse_activation(op, act, allow_string=False))
    if compare:
        out = out.to(torch.float32 if like._dtype in _FLOAT else torch.int64)
    out_dtype = dtype or like._dtype
    mc = output_config(op, memory_config, like, out.shape, like._layout)
    return device_result(op, out, out_dtype, like._layout, like._device, mc)


def _make_binary(name: str, fn, allowed=_ARITH, compare: bool = False, doc: str = "", lhs: bool = False):
    op = f"ttnn.{name}"

    def binary(input_tensor_a, input_tensor_b, *, dtype=None, memory_config=None, activations=None,
               input_tensor_a_activations=None) -> Tensor:
        if input_tensor_a_activations and not lhs:
            raise TypeError(f"{op}: input_tensor_a_activations is not modelled for this op")
        return _binary_impl(op, fn, allowed, input_tensor_a, input_tensor_b, dtype, memory_config, compare=compare,
                            activations=activations, a_activations=input_tensor_a_activations)

    binary.__name__ = binary.__qualname__ = name
    binary.__doc__ = doc or f"Element-wise {name} with broadcasting (tensor or scalar operands)."
    return binary


def _div(x, y):
    return x / y


_CMP = _FLOAT | _ALL_INT
add = _make_binary("add", lambda x, y: x + y, lhs=True)
subtract = _make_binary("subtract", lambda x, y: x - y, lhs=True)
multiply = _make_binary("multiply", lambda x, y: x * y, lhs=True)
maximum = _make_binary("maximum", lambda x, y: torch.maximum(*_tensors(x, y)), _FLOAT | {D.INT32, D.UINT32})
minimum = _make_binary("minimum", lambda x, y: torch.minimum(*_tensors(x, y)), _FLOAT | {D.INT32, D.UINT32})
eq = _make_binary("eq", lambda x, y: torch.eq(*_tensors(x, y)), _CMP, True)
ne = _make_binary("ne", lambda x, y: torch.ne(*_tensors(x, y)), _CMP, True)
gt = _make_binary("gt", lambda x, y: torch.gt(*_tensors(x, y)), _CMP, True)
ge = _make_binary("ge", lambda x, y: torch.ge(*_tensors(x, y)), _CMP, True)
lt = _make_binary("lt", lambda x, y: torch.lt(*_tensors(x, y)), _CMP, True)
le = _make_binary("le", lambda x, y: torch.le(*_tensors(x, y)), _CMP, True)
logical_and = _make_binary("logical_and", lambda x, y: torch.logical_and(*_tensors(x, y)), _ARITH, True)
logical_or = _make_binary("logical_or", lambda x, y: torch.logical_or(*_tensors(x, y)), _ARITH, True)
logical_xor = _make_binary("logical_xor", lambda x, y: torch.logical_xor(*_tensors(x, y)), _ARITH, True)
remainder = _make_binary("remainder", lambda x, y: torch.remainder(*_tensors(x, y)), _FLOAT | {D.INT32, D.UINT32},
                         doc="a - b * floor(a / b): the remainder takes the divisor's sign (torch.remainder).")
_ROUNDING = {None: lambda q: q, "trunc": torch.trunc, "floor": torch.floor}


def divide(input_tensor_a, input_tensor_b, *, rounding_mode: str | None = None, dtype=None,
           memory_config=None) -> Tensor:
    """a / b with broadcasting; rounding_mode "trunc" or "floor" rounds the quotient."""
    if rounding_mode not in _ROUNDING:
        raise RuntimeError(f"TT_FATAL: ttnn.divide: rounding_mode must be None, 'trunc' or 'floor', got "
                           f"{rounding_mode!r}")
    rnd = _ROUNDING[rounding_mode]
    like = input_tensor_a if isinstance(input_tensor_a, Tensor) else input_tensor_b
    if isinstance(like, Tensor) and like._dtype is D.INT32 and rounding_mode is None:
        if dtype not in (None, D.FLOAT32):
            raise RuntimeError("TT_FATAL: ttnn.divide: integer division with rounding_mode=None only accepts "
                               "dtype None or ttnn.float32")
        dtype = D.FLOAT32  # the true quotient
    return _binary_impl("ttnn.divide", lambda x, y: rnd(_div(x, y)), _FLOAT | {D.INT32}, input_tensor_a,
                        input_tensor_b, dtype, memory_config)


def fmod(input_tensor_a, input_tensor_b, *, memory_config=None) -> Tensor:
    """a - b * trunc(a / b): the remainder takes the dividend's sign (C fmod)."""
    return _binary_impl("ttnn.fmod", lambda x, y: torch.fmod(*_tensors(x, y)), _FLOAT | {D.INT32}, input_tensor_a,
                        input_tensor_b, None, memory_config)


def _tensors(x, y):
    """Make scalar operands tensors for torch functions that need two tensors."""
    ref = x if isinstance(x, torch.Tensor) else y
    conv = lambda v: v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=ref.dtype)  # noqa: E731
    return conv(x), conv(y)


def pow(input_tensor, exponent, *, dtype=None, memory_config=None) -> Tensor:
    """input ** exponent (tensor ** number, tensor ** tensor or number ** tensor); an int32/uint32 base takes
    a non-negative integer scalar exponent, in TILE layout."""
    if isinstance(input_tensor, Tensor) and input_tensor._dtype in (D.INT32, D.UINT32):
        if isinstance(exponent, Tensor) or isinstance(exponent, bool) or not isinstance(exponent, int) \
                or exponent < 0:
            raise RuntimeError(f"TT_FATAL: ttnn.pow: input tensor dtype DataType::{input_tensor._dtype.name} "
                               "takes only a non-negative integer scalar exponent")
        require_tile("ttnn.pow", "input_tensor", input_tensor)
        return _binary_impl("ttnn.pow", lambda x, y: x ** y, {D.INT32, D.UINT32}, input_tensor, exponent,
                            dtype, memory_config)
    return _binary_impl("ttnn.pow", lambda x, y: torch.pow(*_tensors(x, y)), _FLOAT, input_tensor, exponent,
                        dtype, memory_config)


def where(predicate: Tensor, true_value, false_value, *, memory_config=None) -> Tensor:
    """true_value where predicate != 0, else false_value (tensors or numbers, broadcast)."""
    op = "ttnn.where"
    tensor_arg(op, "predicate", predicate)
    tensors = [t for t in (predicate, true_value, false_value) if isinstance(t, Tensor)]
    for name, t in zip(("predicate", "true_value", "false_value"), (predicate, true_value, false_value)):
        if isinstance(t, Tensor):
            tensor_arg(op, name, t)
            require_dtype(op, name, t, _FLOAT | {D.INT32, D.UINT32})
            require_tile(op, name, t)
    same_device(op, *tensors)
    _broadcast_shape(op, *tensors)
    like = next((t for t in (true_value, false_value) if isinstance(t, Tensor)), predicate)
    value_tensors = [v for v in (true_value, false_value) if isinstance(v, Tensor)]
    if len(value_tensors) == 1 and like._dtype in _ALL_INT:
        raise RuntimeError(f"TT_FATAL: {op}: Mixed dtype is not supported (a scalar value beside a "
                           f"DataType::{like._dtype.name} tensor value)")
    cond = values(predicate) != 0
    tv = _operand(op, "true_value", true_value, like)
    fv = _operand(op, "false_value", false_value, like)
    ref = tv if isinstance(tv, torch.Tensor) else fv if isinstance(fv, torch.Tensor) else values(predicate).float()
    tv = tv if isinstance(tv, torch.Tensor) else torch.tensor(tv, dtype=ref.dtype)
    fv = fv if isinstance(fv, torch.Tensor) else torch.tensor(fv, dtype=ref.dtype)
    out = torch.where(cond, tv, fv)
    mc = output_config(op, memory_config, predicate, out.shape, Layout.TILE)
    return device_result(op, out, like._dtype, Layout.TILE, predicate._device, mc)
