"""Host fallbacks for ordering and scanning ops (helpers in host/sorting.py)."""
from __future__ import annotations

from onnx2ttnn.fallback.registry import attr_kwargs, fallback


@fallback("TopK", versions=(1,), helper="host_topk_k", note="k as an attribute")
def topk_attr(node):
    return attr_kwargs(node, {"k": None, "axis": -1})


@fallback("TopK", versions=(10, 11, 24), helper="host_topk")
def topk(node):
    return attr_kwargs(node, {"axis": -1, "largest": 1, "sorted": 1})


def _arg_reduce(kind: str, versions: tuple[int, ...], op_type: str, last_index: bool) -> None:
    defaults = {"axis": 0, "keepdims": 1}
    if last_index:
        defaults["select_last_index"] = 0

    def rule(node):
        return dict(attr_kwargs(node, defaults), kind=kind)

    fallback(op_type, versions=versions, helper="host_arg_reduce")(rule)


for _op, _kind in (("ArgMax", "max"), ("ArgMin", "min")):
    _arg_reduce(_kind, (1, 11), _op, False)
    _arg_reduce(_kind, (12, 13), _op, True)  # select_last_index from 12 on


@fallback("CumSum", versions=(11, 14), helper="host_cumulative")
def cumsum(node):
    return dict(attr_kwargs(node, {"exclusive": 0, "reverse": 0}), kind="sum")


@fallback("CumProd", versions=(26,), helper="host_cumulative")
def cumprod(node):
    return dict(attr_kwargs(node, {"exclusive": 0, "reverse": 0}), kind="prod")


@fallback("Trilu", versions=(14,), helper="host_trilu")
def trilu(node):
    return attr_kwargs(node, {"upper": 1})


@fallback("ReverseSequence", versions=(10, 28), helper="host_reverse_sequence")
def reverse_sequence(node):
    return attr_kwargs(node, {"batch_axis": 1, "time_axis": 0})
