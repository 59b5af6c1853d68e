"""Host fallbacks for ops that index with tensors (helpers in host/indexing.py)."""
from __future__ import annotations

import numpy as np
import onnx

from onnx2ttnn.fallback.registry import attr_kwargs, fallback


@fallback("GatherElements", versions=(11, 13), helper="host_gather_elements")
def gather_elements(node):
    return attr_kwargs(node, {"axis": 0})


@fallback("Gather", versions=(1, 11, 13), helper="host_gather", note="runtime indices into a runtime tensor")
def gather(node):
    return attr_kwargs(node, {"axis": 0})


@fallback("GatherND", versions=(11, 12, 13), helper="host_gather_nd")
def gather_nd(node):
    """GatherND-11; 12: `batch_dims`; 13: bfloat16."""
    return attr_kwargs(node, {"batch_dims": 0})


@fallback("Scatter", versions=(9,), helper="host_scatter_elements", note="deprecated alias of ScatterElements")
def scatter(node):
    """Scatter-9.  Scatter-11 is deprecated (a model holding it is invalid: onnx and onnxruntime refuse it):
    not claimed."""
    return attr_kwargs(node, {"axis": 0})


@fallback("ScatterElements", versions=(11, 13, 16, 18), helper="host_scatter_elements")
def scatter_elements(node):
    """ScatterElements-11; 13: bfloat16; 16: `reduction` add/mul; 18: max/min too."""
    return attr_kwargs(node, {"axis": 0, "reduction": "none"})


@fallback("ScatterND", versions=(11, 13, 16, 18), helper="host_scatter_nd")
def scatter_nd(node):
    """ScatterND-11; 13: bfloat16; 16: `reduction` add/mul; 18: max/min too."""
    return attr_kwargs(node, {"reduction": "none"})


@fallback("OneHot", versions=(11, 28), helper="host_one_hot")
def one_hot(node):
    """OneHot-11: indices in [-depth, depth) (negative ones counted from the end, as the helper does; OneHot-9
    gave them all off values: not claimed), negative axes; 28: bfloat16."""
    return attr_kwargs(node, {"axis": -1})


@fallback("EyeLike", versions=(9, 22), helper="host_eye_like")
def eye_like(node):
    kwargs = attr_kwargs(node, {"k": 0})
    if "dtype" in node.attrs:
        kwargs["dtype"] = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(node.attrs["dtype"]))).name
    return kwargs
