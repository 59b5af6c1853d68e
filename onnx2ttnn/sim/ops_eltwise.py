"""Element-wise unary ops: math, activations (with their accuracy variants: _sfpu.py), clamp and clip.

Binary ops and where are in ops_binary.py.  Each op computes in float32 (int64 for integer tensors) from the
stored, already-rounded input and rounds the result once to the output dtype.  A scalar bound is rounded to the
tensor's dtype first (a bf16 tensor's scalar is a bf16 value on the device).  Supported dtypes follow the API
docstrings; bfloat16 and float32 are always accepted.  Integer facts measured on real ttnn
(tools/ttnn_mock/probes/probe_integers.py, docs/ttnn-facts.md): neg and abs keep int32; clip returns FLOAT32 for an
int32 input (clamp keeps it).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ._common import device_result, output_config, require_dtype, tensor_arg, values
from ._rounding import round_scalar
from ._tensor import Tensor
from . import _sfpu
from ._types import DataType as D, GeluVariant, SigmoidMode

_FLOAT = frozenset({D.BFLOAT16, D.FLOAT32, D.BFLOAT8_B})
_ALL_INT = frozenset({D.INT32, D.UINT32, D.UINT16, D.UINT8})


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
