"""NHWC tensors for the simulator's convolution and pooling tests: upload an NCHW torch tensor as ttnn's NHWC
activation, read a flattened result back as NCHW, and call conv2d with the usual arguments."""
from __future__ import annotations

import torch


def bf16(x):
    return x.to(torch.bfloat16).float()


def nhwc_input(ttnn, device, x_nchw, flat=False, layout=None, memory_config=None):
    n, c, h, w = x_nchw.shape
    nhwc = x_nchw.permute(0, 2, 3, 1)
    if flat:
        nhwc = nhwc.reshape(1, 1, n * h * w, c)
    return ttnn.from_torch(nhwc, dtype=ttnn.bfloat16, layout=layout or ttnn.ROW_MAJOR_LAYOUT, device=device,
                           memory_config=memory_config)


def to_nchw(ttnn, t, n, oh, ow):
    flat = ttnn.to_torch(t).float()
    return flat.reshape(n, oh, ow, -1).permute(0, 3, 1, 2)


def conv(ttnn, device, x, w, b=None, **kw):
    n, c, h, width = x.shape
    return ttnn.conv2d(input_tensor=nhwc_input(ttnn, device, x, flat=kw.pop("flat", False),
                                               memory_config=kw.pop("input_memory_config", None)),
                       weight_tensor=ttnn.from_torch(w, dtype=ttnn.float32),
                       bias_tensor=None if b is None else ttnn.from_torch(b.reshape(1, 1, 1, -1), dtype=ttnn.float32),
                       in_channels=c, out_channels=w.shape[0], device=device, batch_size=n, input_height=h,
                       input_width=width, **kw)
