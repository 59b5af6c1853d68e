"""Host fallbacks for spatial rearrangement and sampling ops (helpers in host/spatial.py)."""
from __future__ import annotations

from onnx2ttnn.errors import NotLowerable
from onnx2ttnn.fallback.registry import attr_kwargs, fallback


@fallback("DepthToSpace", versions=(1, 11, 13, 28), helper="host_depth_to_space")
def depth_to_space(node):
    """DepthToSpace-1 (DCR order); 11: `mode` (default DCR); 13: bfloat16; 28: the same signature."""
    return attr_kwargs(node, {"blocksize": None, "mode": "DCR"})


@fallback("SpaceToDepth", versions=(1, 13, 28), helper="host_space_to_depth")
def space_to_depth(node):
    """SpaceToDepth-1 (DCR order); 13: bfloat16; 28: `mode` (default DCR)."""
    return attr_kwargs(node, {"blocksize": None, "mode": "DCR"})


@fallback("GridSample", versions=(16, 20, 22), helper="host_grid_sample", note="2-D and 3-D (no 3-D cubic), as torch")
def grid_sample(node):
    """GridSample-16: 4-D inputs, modes bilinear/nearest/bicubic; 20: N-D, the modes renamed linear/cubic (the
    helper takes both names); 22: bfloat16."""
    kwargs = attr_kwargs(node, {"mode": "linear", "padding_mode": "zeros", "align_corners": 0})
    if len(node.inputs[0].shape or ()) not in (4, 5):
        raise NotLowerable(f"node {node.name!r}: GridSample over other than 2 or 3 spatial dimensions",
                           "only 2 or 3 spatial dimensions")
    return kwargs


@fallback("AffineGrid", versions=(20,), helper="host_affine_grid")
def affine_grid(node):
    return attr_kwargs(node, {"align_corners": 0})
