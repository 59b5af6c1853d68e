"""Host fallbacks for normalisation and activation ops ttnn has no call for (helpers in host/nn.py)."""
from __future__ import annotations

from onnx2ttnn.fallback.registry import attr_kwargs, fallback


@fallback("Hardmax", 1, helper="host_hardmax_2d", note="opsets 1-12: the input is coerced to 2-D at axis")
def hardmax_2d(node):
    return attr_kwargs(node, {"axis": 1})


@fallback("Hardmax", 13, helper="host_hardmax")
def hardmax(node):
    return attr_kwargs(node, {"axis": -1})


@fallback("LpNormalization", 1, helper="host_lp_normalization")
def lp_normalization(node):
    return attr_kwargs(node, {"axis": -1, "p": 2})


@fallback("MeanVarianceNormalization", 9, helper="host_mean_variance_normalization")
def mean_variance_normalization(node):
    return attr_kwargs(node, {"axes": [0, 2, 3]})


@fallback("LRN", 1, helper="host_lrn")
def lrn(node):
    return attr_kwargs(node, {"size": None, "alpha": 0.0001, "beta": 0.75, "bias": 1.0})


@fallback("Shrink", 9, helper="host_shrink")
def shrink(node):
    return attr_kwargs(node, {"lambd": 0.5, "bias": 0.0})


@fallback("Celu", 12, helper="host_celu")
def celu(node):
    return attr_kwargs(node, {"alpha": 1.0})
