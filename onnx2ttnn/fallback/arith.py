"""Host fallbacks for arithmetic, bitwise, linear-algebra and reduction ops (helpers in host/arith.py)."""
from __future__ import annotations

from onnx2ttnn.fallback.registry import attr_kwargs, fallback


@fallback("Mod", 10, helper="host_mod")
def mod(node):
    return attr_kwargs(node, {"fmod": 0})


@fallback("BitShift", 11, helper="host_bit_shift")
def bit_shift(node):
    return attr_kwargs(node, {"direction": None})


def _bitwise(op_type: str, kind: str) -> None:
    fallback(op_type, 18, helper="host_bitwise")(lambda node: {"kind": kind})


for _op, _kind in (("BitwiseAnd", "and"), ("BitwiseOr", "or"), ("BitwiseXor", "xor"), ("BitwiseNot", "not")):
    _bitwise(_op, _kind)


@fallback("Xor", 7, helper="host_logical_xor")
def xor(node):
    return {}


@fallback("IsInf", 10, helper="host_is_inf")
def is_inf(node):
    return attr_kwargs(node, {"detect_negative": 1, "detect_positive": 1})


@fallback("Round", 11, helper="host_round")
def round_(node):
    return {}


@fallback("Det", 11, helper="host_det")
def det(node):
    return {}


@fallback("Einsum", 12, helper="host_einsum")
def einsum(node):
    return attr_kwargs(node, {"equation": None})


@fallback("CastLike", 15, helper="host_cast_like")
def cast_like(node):
    return {}


REDUCTIONS = {"ReduceL1": "l1", "ReduceL2": "l2", "ReduceLogSum": "log_sum", "ReduceLogSumExp": "log_sum_exp",
              "ReduceProd": "prod", "ReduceSumSquare": "sum_square", "ReduceSum": "sum", "ReduceMean": "mean",
              "ReduceMax": "max", "ReduceMin": "min"}
# the opset from which the axes are an input instead of an attribute
AXES_AS_INPUT = {"ReduceSum": 13}


def _reduction(op_type: str, kind: str) -> None:
    def with_attr(node):
        axes = node.attrs.get("axes")
        return dict(attr_kwargs(node, {"keepdims": 1}), kind=kind, axes_attr=list(axes) if axes is not None else [])

    def with_input(node):
        return dict(attr_kwargs(node, {"keepdims": 1, "noop_with_empty_axes": 0}), kind=kind)

    fallback(op_type, 1, helper="host_reduce")(with_attr)
    fallback(op_type, AXES_AS_INPUT.get(op_type, 18), helper="host_reduce", note="axes as input")(with_input)


for _op, _kind in REDUCTIONS.items():
    _reduction(_op, _kind)
