"""Host fallbacks for ops that index with tensors (helpers in host/indexing.py)."""
from __future__ import annotations

import numpy as np
import onnx

from onnx2ttnn.fallback.registry import attr_kwargs, fallback


@fallback("GatherElements", 11, helper="host_gather_elements")
def gather_elements(node):
    return attr_kwargs(node, {"axis": 0})


@fallback("Gather", 1, helper="host_gather", note="runtime indices into a runtime tensor")
def gather(node):
    return attr_kwargs(node, {"axis": 0})


@fallback("GatherND", 11, helper="host_gather_nd")
def gather_nd(node):
    return attr_kwargs(node, {"batch_dims": 0})


@fallback("Scatter", 9, helper="host_scatter_elements", note="deprecated alias of ScatterElements")
def scatter(node):
    return attr_kwargs(node, {"axis": 0})


@fallback("ScatterElements", 11, helper="host_scatter_elements")
def scatter_elements(node):
    return attr_kwargs(node, {"axis": 0, "reduction": "none"})


@fallback("ScatterND", 11, helper="host_scatter_nd")
def scatter_nd(node):
    return attr_kwargs(node, {"reduction": "none"})


@fallback("OneHot", 9, helper="host_one_hot")
def one_hot(node):
    return attr_kwargs(node, {"axis": -1})


@fallback("EyeLike", 9, helper="host_eye_like")
def eye_like(node):
    kwargs = attr_kwargs(node, {"k": 0})
    if "dtype" in node.attrs:
        kwargs["dtype"] = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(node.attrs["dtype"]))).name
    return kwargs
