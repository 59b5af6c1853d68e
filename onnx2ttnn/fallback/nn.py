"""Host fallbacks for normalisation and activation ops ttnn has no call for (helpers in host/nn.py)."""
from __future__ import annotations

from onnx2ttnn.fallback.registry import attr_kwargs, fallback


@fallback("Hardmax", versions=(1, 11), helper="host_hardmax_2d",
          note="opsets 1-12: the input is coerced to 2-D at axis")
def hardmax_2d(node):
    """Hardmax-1: the input coerced to 2-D at `axis` (default 1); 11: negative axes."""
    return attr_kwargs(node, {"axis": 1})


@fallback("Hardmax", versions=(13,), helper="host_hardmax")
def hardmax(node):
    """Hardmax-13: along the one axis `axis` (default -1), no 2-D coercion; bfloat16."""
    return attr_kwargs(node, {"axis": -1})


@fallback("LpNormalization", versions=(1, 22), helper="host_lp_normalization")
def lp_normalization(node):
    return attr_kwargs(node, {"axis": -1, "p": 2})


@fallback("MeanVarianceNormalization", versions=(9, 13), helper="host_mean_variance_normalization")
def mean_variance_normalization(node):
    return attr_kwargs(node, {"axes": [0, 2, 3]})


@fallback("LRN", versions=(1, 13), helper="host_lrn")
def lrn(node):
    return attr_kwargs(node, {"size": None, "alpha": 0.0001, "beta": 0.75, "bias": 1.0})


@fallback("Shrink", versions=(9,), helper="host_shrink")
def shrink(node):
    return attr_kwargs(node, {"lambd": 0.5, "bias": 0.0})


@fallback("Celu", versions=(12, 28), helper="host_celu")
def celu(node):
    return attr_kwargs(node, {"alpha": 1.0})
