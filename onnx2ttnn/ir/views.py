"""Which ttnn calls return a view that shares its input's device buffer.

One rule shared by the compiler (deallocation must free a shared buffer once, after the last use of any
alias) and the simulator (which must behave like the real library).  The facts, as the real ttnn 0.81.1
behaves: `ttnn.reshape` is a zero-copy view when the tensor is on the device, the last dimension does not
change and, in TILE layout, either the second-last dimension does not change or neither shape pads it
(both a multiple of 32).  A reshape to the same shape returns a new handle on the same buffer (an alias).
The rule was confirmed on the real library in mock mode (docs/ttnn-facts.md).
"""
from __future__ import annotations

from typing import Sequence

TILE = 32


def reshape_is_view(tile_layout: bool, in_shape: Sequence[int], out_shape: Sequence[int]) -> bool:
    """True when ttnn.reshape(in_shape -> out_shape) of a device tensor shares the input buffer."""
    in_shape, out_shape = tuple(in_shape), tuple(out_shape)
    if in_shape == out_shape:
        return True
    if not in_shape or not out_shape or in_shape[-1] != out_shape[-1]:
        return False
    if not tile_layout:
        return True
    h_in = in_shape[-2] if len(in_shape) >= 2 else 1
    h_out = out_shape[-2] if len(out_shape) >= 2 else 1
    return h_in == h_out or (h_in % TILE == 0 and h_out % TILE == 0)
