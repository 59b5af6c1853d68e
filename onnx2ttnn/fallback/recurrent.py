"""Host fallbacks for LSTM, GRU and RNN (helper in host/recurrent.py): the variants the device rule declines
(lowering/recurrent.py) — sequence_lens shorter than the sequence, runtime weights, LSTM input_forget, more
unrolled steps than the budget — computed step by step with torch on the host, per the ONNX equations.
An activation neither computes is still unsupported, with the rule's reason."""
from __future__ import annotations

from onnx2ttnn.errors import ConversionError, NotLowerable
from onnx2ttnn.fallback.registry import attr_kwargs, fallback
from onnx2ttnn.lowering.recurrent_unroll import activation_list, direction_count


def _kwargs(node, cell: str) -> dict:
    try:
        acts = activation_list(node, cell, direction_count(node))
    except NotLowerable as exc:
        raise NotLowerable(f"node {node.name!r}: {exc.reason}", exc.reason) from None
    kwargs = attr_kwargs(node, {"direction": "forward", "layout": 0, "clip": None})
    if kwargs["clip"] is not None and not kwargs["clip"] > 0:
        raise ConversionError(f"node {node.name!r}: {cell} clip must be positive, got {kwargs['clip']}")
    kwargs.update(cell=cell, activations=[[a.name, a.alpha, a.beta] for d in acts for a in d])
    if cell == "GRU":
        kwargs.update(attr_kwargs(node, {"linear_before_reset": 0}))
    if cell == "LSTM":
        kwargs.update(attr_kwargs(node, {"input_forget": 0}))
    return kwargs


_NOTE = "any sequence_lens, runtime weights; the activations the device rule knows"


@fallback("LSTM", versions=(7, 14, 22), helper="host_recurrent", results=3, note=_NOTE + "; input_forget")
def lstm(node):
    return _kwargs(node, "LSTM")


@fallback("GRU", versions=(7, 14, 22), helper="host_recurrent", results=2, note=_NOTE)
def gru(node):
    return _kwargs(node, "GRU")


@fallback("RNN", versions=(7, 14, 22), helper="host_recurrent", results=2, note=_NOTE)
def rnn(node):
    return _kwargs(node, "RNN")
