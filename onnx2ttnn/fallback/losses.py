"""Host fallbacks for loss ops (helpers in host/losses.py)."""
from __future__ import annotations

from onnx2ttnn.fallback.registry import attr_kwargs, fallback


@fallback("NegativeLogLikelihoodLoss", versions=(12, 13, 22), helper="host_negative_log_likelihood_loss")
def nll_loss(node):
    return attr_kwargs(node, {"reduction": "mean", "ignore_index": None})


@fallback("SoftmaxCrossEntropyLoss", versions=(12, 13), helper="host_softmax_cross_entropy_loss", results=2)
def softmax_cross_entropy_loss(node):
    return attr_kwargs(node, {"reduction": "mean", "ignore_index": None})
