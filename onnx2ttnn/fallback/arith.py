"""Host fallbacks for arithmetic, bitwise, linear-algebra and reduction ops (helpers in host/arith.py)."""
from __future__ import annotations

import numpy as np
import onnx

from onnx2ttnn.errors import NotLowerable
from onnx2ttnn.fallback.registry import attr_kwargs, fallback
from onnx2ttnn.lowering.misc import declined_cast
from onnx2ttnn.lowering.reduce import REDUCE


@fallback("Mod", versions=(10, 13, 28), helper="host_mod")
def mod(node):
    return attr_kwargs(node, {"fmod": 0})


@fallback("Pow", versions=(7, 12, 13, 15), helper="host_pow",
          note="integer powers ttnn.pow cannot take (a tensor or negative exponent)")
def pow_(node):
    return {}


@fallback("BitShift", versions=(11, 28), helper="host_bit_shift")
def bit_shift(node):
    return attr_kwargs(node, {"direction": None})


def _bitwise(op_type: str, kind: str) -> None:
    fallback(op_type, versions=(18,), helper="host_bitwise")(lambda node: {"kind": kind})


for _op, _kind in (("BitwiseAnd", "and"), ("BitwiseOr", "or"), ("BitwiseXor", "xor"), ("BitwiseNot", "not")):
    _bitwise(_op, _kind)


@fallback("Xor", versions=(7,), helper="host_logical_xor")
def xor(node):
    return {}


@fallback("IsInf", versions=(10, 20), helper="host_is_inf")
def is_inf(node):
    return attr_kwargs(node, {"detect_negative": 1, "detect_positive": 1})


@fallback("Round", versions=(11, 22), helper="host_round")
def round_(node):
    return {}


@fallback("Det", versions=(11, 22), helper="host_det")
def det(node):
    return {}


@fallback("Einsum", versions=(12, 28), helper="host_einsum")
def einsum(node):
    return attr_kwargs(node, {"equation": None})


@fallback("Cast", versions=(13, 19, 21, 23, 24, 25, 28), helper="host_round_to_bfloat16",
          note="to bfloat16 in a float32 program: rounded to nearest even on the host")
def cast(node):
    """Only the cast lowering/misc.py declines for rounding to bfloat16 (a float32 program keeps every bit on the
    device, which left the rounding out: fuzz seed 173 case 288); torch rounds to nearest even, as onnxruntime
    and the spec's reference do.  Other declined casts go to a host region as before."""
    to = int(node.attrs.get("to", 0))
    if to != onnx.TensorProto.BFLOAT16:
        why = declined_cast(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(to)))
        raise NotLowerable(f"node {node.name!r}: {why}", why)
    return {}


@fallback("CastLike", versions=(15, 19, 21, 23, 24, 25), helper="host_cast_like")
def cast_like(node):
    return {}


def _reduction(op_type: str, kind: str, attr_versions: tuple[int, ...], input_versions: tuple[int, ...]) -> None:
    def with_attr(node):
        axes = node.attrs.get("axes")
        return dict(attr_kwargs(node, {"keepdims": 1}), kind=kind, axes_attr=list(axes) if axes is not None else [])

    def with_input(node):
        return dict(attr_kwargs(node, {"keepdims": 1, "noop_with_empty_axes": 0}), kind=kind)

    fallback(op_type, versions=attr_versions, helper="host_reduce")(with_attr)
    fallback(op_type, versions=input_versions, helper="host_reduce", note="axes as input")(with_input)


# the same reductions (kind names are host_reduce's) and schema versions as the lowering rules: axes as an
# attribute, then as an input
for _op, (_kind, _attr_versions, _input_versions) in REDUCE.items():
    _reduction(_op, _kind, _attr_versions, _input_versions)
