"""Values that are not tensors: ONNX sequences and maps (ZipMap's `seq(map(int64, tensor(float)))`, a
SplitToSequence's list), which only onnxruntime handles.

In the ONNX IR graphsurgeon marks them by their `type` (`sequence_type`, `map_type`); their dtype is the
element's, or the TensorProto enum UNDEFINED (0) for a sequence of maps.  In the ttnn IR a host region's
output of that kind is a host variable of numpy dtype `object` and no shape (VALUE_DTYPE): the program
keeps what onnxruntime returned (a list of dicts, a list of arrays) and returns it as the graph output, as
is.  No device op reads one: a hosted node's value has no static shape, so its readers are hosted too
(lower-to-ttnn), and a region input or an output the device reads that is not a tensor is refused, naming
it (fallback/regions.py `lower_region`).
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

VALUE_DTYPE = np.dtype(object)  # the ttnn IR's dtype of a host value that is not a tensor


def is_value(tensor: gs.Tensor) -> bool:
    """Whether ONNX `tensor` is a sequence or map rather than a tensor (graphsurgeon's `type`)."""
    return getattr(tensor, "type", "tensor_type") not in ("tensor_type", None)


def is_value_var(var: gs.Tensor) -> bool:
    """Whether ttnn-IR variable `var` holds a sequence or map onnxruntime returned (VALUE_DTYPE)."""
    return var.dtype is not None and not isinstance(var.dtype, int) and np.dtype(var.dtype) == VALUE_DTYPE


def kind(tensor: gs.Tensor) -> str:
    """'a sequence' or 'a map', for messages."""
    return "a map" if getattr(tensor, "type", "") == "map_type" else "a sequence"
