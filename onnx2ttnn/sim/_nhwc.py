"""NHWC helpers the simulator's convolutions and pools share: argument pairs, padding, and the views
between ttnn's NHWC activations ([N, H, W, C] or flattened [1, 1, N*H*W, C]) and torch's NCHW."""
from __future__ import annotations

import torch

from ._common import values
from ._tensor import Tensor


def pair(op: str, name: str, v) -> tuple:
    v = [int(x) for x in (v if isinstance(v, (list, tuple)) else (v, v))]
    if len(v) != 2:
        raise RuntimeError(f"TT_FATAL: {op}: {name} must have 2 values, got {v}")
    return tuple(v)


def padding_4(op: str, padding) -> tuple:
    """(top, bottom, left, right) from 2 (h, w) or 4 values."""
    p = [int(x) for x in (padding if isinstance(padding, (list, tuple)) else (padding, padding))]
    if len(p) == 2:
        return p[0], p[0], p[1], p[1]
    if len(p) == 4:
        return tuple(p)
    raise RuntimeError(f"TT_FATAL: {op}: padding must have 2 (h, w) or 4 (top, bottom, left, right) values, got {p}")


def nchw(op: str, t: Tensor, n: int, h: int, w: int, c: int) -> torch.Tensor:
    """The NHWC input ([N,H,W,C] or [1,1,N*H*W,C]) as a float NCHW torch tensor."""
    shape = list(t._data.shape)
    if shape[-1] != c or t._data.numel() != n * h * w * c:
        raise RuntimeError(f"TT_FATAL: {op}: input of shape {shape} does not match batch_size={n}, "
                           f"height={h}, width={w}, channels={c} (expected [N,H,W,C] or [1,1,N*H*W,C])")
    return values(t).reshape(n, h, w, c).permute(0, 3, 1, 2)


def flat_nhwc(out: torch.Tensor) -> torch.Tensor:
    n, c, oh, ow = out.shape
    return out.permute(0, 2, 3, 1).reshape(1, 1, n * oh * ow, c)
