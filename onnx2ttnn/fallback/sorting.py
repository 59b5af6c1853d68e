"""Host fallbacks for ordering and scanning ops (helpers in host/sorting.py)."""
from __future__ import annotations

from onnx2ttnn.fallback.registry import attr_kwargs, fallback


@fallback("TopK", 1, helper="host_topk_k", note="k as an attribute")
def topk_attr(node):
    return attr_kwargs(node, {"k": None, "axis": -1})


@fallback("TopK", 10, helper="host_topk")
def topk(node):
    return attr_kwargs(node, {"axis": -1, "largest": 1, "sorted": 1})


def _arg_reduce(kind: str, since: int, op_type: str, last_index: bool) -> None:
    defaults = {"axis": 0, "keepdims": 1}
    if last_index:
        defaults["select_last_index"] = 0

    def rule(node):
        return dict(attr_kwargs(node, defaults), kind=kind)

    fallback(op_type, since, helper="host_arg_reduce")(rule)


for _op, _kind in (("ArgMax", "max"), ("ArgMin", "min")):
    _arg_reduce(_kind, 1, _op, False)
    _arg_reduce(_kind, 12, _op, True)


@fallback("CumSum", 11, helper="host_cumulative")
def cumsum(node):
    return dict(attr_kwargs(node, {"exclusive": 0, "reverse": 0}), kind="sum")


@fallback("CumProd", 26, helper="host_cumulative")
def cumprod(node):
    return dict(attr_kwargs(node, {"exclusive": 0, "reverse": 0}), kind="prod")


@fallback("Trilu", 14, helper="host_trilu")
def trilu(node):
    return attr_kwargs(node, {"upper": 1})


@fallback("ReverseSequence", 10, helper="host_reverse_sequence")
def reverse_sequence(node):
    return attr_kwargs(node, {"batch_axis": 1, "time_axis": 0})
