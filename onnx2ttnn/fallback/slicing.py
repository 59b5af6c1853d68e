"""Host fallback for Slice (helper in host/slicing.py): the slices ttnn cannot hold, such as empty results."""
from __future__ import annotations

from onnx2ttnn.fallback.registry import fallback


@fallback("Slice", versions=(10, 11, 13), helper="host_slice", note="slices ttnn cannot compute (empty results)")
def slice_(node):
    return {}
