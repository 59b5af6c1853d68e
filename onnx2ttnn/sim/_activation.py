"""Fused activations: ttnn.UnaryOpType, ttnn.UnaryWithParam, and the string names linear accepts.

matmul/linear take `activation="relu"` (or a UnaryWithParam); conv2d takes Conv2dConfig(activation=
UnaryWithParam(UnaryOpType.RELU)).  The activation is applied in float32 before the result is rounded.
"""
from __future__ import annotations

import enum

import torch
import torch.nn.functional as F

from ._types import GeluVariant


class UnaryOpType(enum.Enum):
    """The unary op kinds usable as fused activations (a subset of the real enum)."""

    RELU = 0
    RELU6 = 1
    GELU = 2
    GELU_TANH = 3
    SILU = 4
    SIGMOID = 5
    TANH = 6
    EXP = 7
    LEAKY_RELU = 8
    HARDTANH = 9
    RELU_MAX = 10
    RELU_MIN = 11
    IDENTITY = 12
    SQRT = 13
    RSQRT = 14
    SOFTPLUS = 15
    ABS = 16
    NEG = 17
    HARDSIGMOID = 18
    HARDSWISH = 19
    ELU = 20
    ROUND = 21


class UnaryWithParam:
    """An activation kind plus its float parameters, e.g. UnaryWithParam(UnaryOpType.LEAKY_RELU, 0.1)."""

    __slots__ = ("op_type", "params")

    def __init__(self, arg0, arg1=None, arg2=None, /):
        params = tuple(p for p in (arg1, arg2) if p is not None)
        if isinstance(arg0, tuple):
            arg0, params = arg0[0], tuple(arg0[1:])
        if not isinstance(arg0, UnaryOpType):
            raise TypeError(f"UnaryWithParam: expected a ttnn.UnaryOpType, got {arg0!r}")
        self.op_type, self.params = arg0, [float(p) for p in params]

    def __eq__(self, other):
        return isinstance(other, UnaryWithParam) and (self.op_type, self.params) == (other.op_type, other.params)

    def __hash__(self):
        return hash((self.op_type, tuple(self.params)))

    def __repr__(self):
        params = "".join(f", {p}" for p in self.params)
        return f"UnaryWithParam({self.op_type}{params})"


def _param(act: UnaryWithParam, i: int, default: float) -> float:
    return act.params[i] if len(act.params) > i else default


_KIND = {
    UnaryOpType.RELU: lambda x, a: torch.relu(x),
    UnaryOpType.RELU6: lambda x, a: x.clamp(0.0, 6.0),
    UnaryOpType.GELU: lambda x, a: F.gelu(x),  # GELU 0.0 (the accurate kernel); other params: _NOT_MODELLED
    UnaryOpType.GELU_TANH: lambda x, a: F.gelu(x, approximate="tanh"),
    UnaryOpType.SILU: lambda x, a: F.silu(x),
    UnaryOpType.SIGMOID: lambda x, a: torch.sigmoid(x),
    UnaryOpType.TANH: lambda x, a: torch.tanh(x),
    UnaryOpType.EXP: lambda x, a: torch.exp(x),
    UnaryOpType.LEAKY_RELU: lambda x, a: F.leaky_relu(x, _param(a, 0, 0.01)),
    UnaryOpType.HARDTANH: lambda x, a: x.clamp(_param(a, 0, -1.0), _param(a, 1, 1.0)),
    UnaryOpType.RELU_MAX: lambda x, a: torch.relu(x).clamp(max=_param(a, 0, 0.0)),
    UnaryOpType.RELU_MIN: lambda x, a: torch.maximum(x, torch.tensor(_param(a, 0, 0.0))),
    UnaryOpType.IDENTITY: lambda x, a: x,
    UnaryOpType.SQRT: lambda x, a: torch.sqrt(x),
    UnaryOpType.RSQRT: lambda x, a: torch.rsqrt(x),
    UnaryOpType.SOFTPLUS: lambda x, a: F.softplus(x, _param(a, 0, 1.0), _param(a, 1, 20.0)),
    UnaryOpType.ABS: lambda x, a: x.abs(),
    UnaryOpType.NEG: lambda x, a: -x,
    UnaryOpType.HARDSIGMOID: lambda x, a: F.hardsigmoid(x),
    UnaryOpType.HARDSWISH: lambda x, a: F.hardswish(x),
    UnaryOpType.ELU: lambda x, a: F.elu(x, _param(a, 0, 1.0)),
    # round_tile(i, decimals), ttnn.round's own SFPU call (probe_qdq_pair.py): halves to even
    UnaryOpType.ROUND: lambda x, a: torch.round(x, decimals=int(_param(a, 0, 0.0))),
}

# the string names and what real ttnn 0.81.1 makes of them (docs/ttnn-facts.md §22: "gelu" runs gelu_tile<0u>,
# the accurate erf form, like UnaryWithParam(GELU, 0.0); "exp" runs exp_tile<1u>, the fast exp; "sigmoid" the
# standalone sigmoid's kernel, sigmoid_tile<VectorMode::RC, 0u>: its vector mode RC (4) and accurate flag)
_BY_NAME = {
    "relu": (UnaryOpType.RELU,), "relu6": (UnaryOpType.RELU6,), "gelu": (UnaryOpType.GELU, 0.0),
    "gelu_tanh": (UnaryOpType.GELU_TANH,), "silu": (UnaryOpType.SILU,), "sigmoid": (UnaryOpType.SIGMOID, 4.0, 0.0),
    "tanh": (UnaryOpType.TANH,), "exp": (UnaryOpType.EXP, 1.0), "identity": (UnaryOpType.IDENTITY,),
    "sqrt": (UnaryOpType.SQRT,), "rsqrt": (UnaryOpType.RSQRT,), "softplus": (UnaryOpType.SOFTPLUS,),
    "abs": (UnaryOpType.ABS,), "neg": (UnaryOpType.NEG,), "hardsigmoid": (UnaryOpType.HARDSIGMOID,),
    "hardswish": (UnaryOpType.HARDSWISH,),
}


def parse_activation(op: str, activation, *, allow_string: bool = True) -> UnaryWithParam | None:
    """Normalise an `activation` argument to a UnaryWithParam (None stays None)."""
    if activation is None:
        return None
    if isinstance(activation, UnaryWithParam):
        return activation
    if isinstance(activation, str) and allow_string:
        kind = _BY_NAME.get(activation.lower())
        if kind is None:
            raise RuntimeError(f"TT_FATAL: {op}: unknown activation {activation!r}; known: "
                               f"{', '.join(sorted(_BY_NAME))}")
        return UnaryWithParam(*kind)
    expected = "a string or ttnn.UnaryWithParam" if allow_string else "a ttnn.UnaryWithParam"
    raise TypeError(f"{op}: activation must be {expected}, got {activation!r}")


def apply_activation(x: torch.Tensor, activation: UnaryWithParam | None) -> torch.Tensor:
    """Apply a fused activation to float32 values."""
    if activation is None:
        return x
    _refuse_unmodelled("fused activation", activation)
    return _KIND[activation.op_type](x, activation)


# what real ttnn 0.81.1 runs after an interleaved matmul / linear with no program config: the standalone unary
# op's own kernel (docs/ttnn-facts.md §22: the same SFPU chain and kernel hash), as (kind, params) -> (op, kwargs)
_STANDALONE = {
    (UnaryOpType.RELU, ()): ("relu", {}), (UnaryOpType.GELU, (0.0,)): ("gelu", {}),
    (UnaryOpType.SILU, ()): ("silu", {}), (UnaryOpType.SIGMOID, (4.0, 0.0)): ("sigmoid", {}),
    (UnaryOpType.TANH, ()): ("tanh", {}), (UnaryOpType.GELU_TANH, ()): ("gelu", {"variant": GeluVariant.Tanh}),
    (UnaryOpType.EXP, (1.0,)): ("exp", {"fast_and_approximate_mode": True}),
}
# kernels the simulator does not model (§16, §22): GELU 1.0 compiles gelu_tile<1u>, the FastLut; GELU with no
# parameter gelu_tile(0), the template's default flag (another kernel build than the accurate gelu_tile<0u>)
_NOT_MODELLED = {(UnaryOpType.GELU, ()), (UnaryOpType.GELU, (1.0,))}


def standalone_activation(op: str, activation: UnaryWithParam | None):
    """A callable computing `activation` as ttnn runs it after a plain matmul: the simulator's standalone op on the
    rounded result (None: no such op; the in-kernel model applies)."""
    if activation is None:
        return None
    key = (activation.op_type, tuple(activation.params))
    _refuse_unmodelled(op, activation)
    if key not in _STANDALONE:
        return None
    from . import ops_eltwise

    name, kwargs = _STANDALONE[key]
    fn = getattr(ops_eltwise, name)
    return lambda tensor, memory_config: fn(tensor, memory_config=memory_config, **kwargs)


def _refuse_unmodelled(op: str, activation: UnaryWithParam) -> None:
    if (activation.op_type, tuple(activation.params)) in _NOT_MODELLED:
        raise RuntimeError(f"onnx2ttnn simulator: {op} with {activation!r} runs a lookup-table kernel the "
                           "simulator does not model (docs/ttnn-facts.md §22); onnx2ttnn never emits it")


def lhs_activations(op: str, a, x: torch.Tensor, activations) -> torch.Tensor:
    """A binary op's input_tensor_a_activations on input a's values `x`: each applied in turn in the binary
    kernel's dest (its PROCESS_LHS_ACTIVATIONS, probe_qdq_pair.py), then held in the dest's format (bfloat16 for
    a bfloat16 input, float32 for a float32 one) for the op."""
    from ._rounding import compute_view, to_storage
    from ._tensor import Tensor
    from ._types import DataType

    if not isinstance(a, Tensor) or a._dtype not in (DataType.BFLOAT16, DataType.FLOAT32):
        raise RuntimeError(f"onnx2ttnn simulator: {op}: input_tensor_a_activations are modelled on a bfloat16 or "
                           "float32 tensor input_tensor_a only")
    for act in activations:
        x = apply_activation(x.float(), parse_activation(op, act, allow_string=False))
    return compute_view(to_storage(x, a._dtype))
