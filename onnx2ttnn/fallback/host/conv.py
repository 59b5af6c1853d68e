"""Convolutions over any number of spatial dims: Conv, ConvTranspose (explicit pads from fallback/conv.py)."""
import torch


def _conv_op(rank, transposed):
    """torch's conv{1,2,3}d or conv_transpose{1,2,3}d for `rank` spatial dims."""
    name = ("conv_transpose" if transposed else "conv") + f"{rank}d"
    if rank not in (1, 2, 3):
        raise NotImplementedError(f"host convolution over {rank} spatial dims")
    return getattr(torch.nn.functional, name)


def host_conv(x, w, b=None, *, strides, dilations, pads, group=1):
    rank = x.dim() - 2
    padding = []
    for i in reversed(range(rank)):  # torch pads the last dim first
        padding += [pads[i], pads[rank + i]]
    xf = torch.nn.functional.pad(x.to(torch.float32), padding)
    bias = None if b is None else b.to(torch.float32)
    y = _conv_op(rank, False)(xf, w.to(torch.float32), bias, stride=strides, padding=0, dilation=dilations,
                              groups=group)
    return y.to(x.dtype)


def host_conv_transpose(x, w, b=None, *, strides, dilations, begins, out_spatial, group=1):
    rank = x.dim() - 2
    full = _conv_op(rank, True)(x.to(torch.float32), w.to(torch.float32), None, stride=strides, padding=0,
                                groups=group, dilation=dilations)
    extra = []
    for i in reversed(range(rank)):  # zeros at the end where the output reaches past the full result
        extra += [0, max(0, begins[i] + out_spatial[i] - full.shape[2 + i])]
    full = torch.nn.functional.pad(full, extra)
    index = [slice(None), slice(None)] + [slice(begins[i], begins[i] + out_spatial[i]) for i in range(rank)]
    y = full[tuple(index)]
    if b is not None:
        y = y + b.to(torch.float32).reshape([1, -1] + [1] * rank)
    return y.to(x.dtype)
