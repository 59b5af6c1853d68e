"""Element-wise binary ops and ttnn.where: arithmetic, comparison and logic with broadcasting, tensor or scalar
operands, the fused activations of a binary kernel (input_tensor_a_activations, activations: sim/_activation.py).

Unary ops are in ops_eltwise.py.  Each op computes in float32 (int64 for integer tensors) from the stored,
already-rounded inputs and rounds the result once to the output dtype.  A scalar operand is rounded to the
tensor's dtype first (a bf16 tensor's scalar is a bf16 value on the device).  Comparisons return 1.0 / 0.0 in the
output dtype (input a's by default).  Supported dtypes follow the API docstrings; bfloat16 and float32 are
always accepted.  Integer facts measured on real ttnn (tools/ttnn_mock/probes/probe_integers.py,
docs/ttnn-facts.md): an int32 operand mixes with neither a uint32 nor a float one; divide of int32 returns FLOAT32
unless rounding_mode is given; pow of an int32 base takes a non-negative integer scalar exponent in TILE only;
where refuses a scalar value beside an int32 tensor value.  A ROW_MAJOR operand beside a TILE one is tilized first
into a temporary tile-padded copy in its own buffer type, freed when the call returns (docs/ttnn-facts.md §47).
"""
from __future__ import annotations

import torch

from ._activation import apply_activation, lhs_activations, parse_activation
from ._common import (device_result, output_config, require_dtype, require_tile, same_device, tensor_arg,
                      tilized_copy, values)
from ._rounding import round_scalar
from ._tensor import Tensor
from ._types import DataType as D, Layout

_FLOAT = frozenset({D.BFLOAT16, D.FLOAT32, D.BFLOAT8_B})
_ALL_INT = frozenset({D.INT32, D.UINT32, D.UINT16, D.UINT8})
_ARITH = _FLOAT | {D.INT32, D.UINT32, D.UINT16}

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
    copies = [tilized_copy(op, a, b), tilized_copy(op, b, a)]  # a ROW_MAJOR operand beside a TILE one
    a, b = (copy or t for copy, t in zip(copies, (a, b)))
    like = a if isinstance(a, Tensor) else b
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
    result = device_result(op, out, out_dtype, like._layout, like._device, mc)
    for copy in copies:
        if copy is not None:
            copy.deallocate(True)
    return result


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
