"""Normalisation and activation ops: Hardmax, LpNormalization, MeanVarianceNormalization, LRN, Shrink, Celu."""
import torch


def _nn_coerce_2d(x, axis):
    """x viewed as [prod(shape[:axis]), prod(shape[axis:])] (the opset < 13 softmax-family convention)."""
    axis = axis % max(x.dim(), 1)
    rows = 1
    for d in x.shape[:axis]:
        rows *= d
    return x.reshape(rows, -1)


def _nn_hardmax(x, axis):
    picked = torch.argmax(x, dim=axis, keepdim=True)  # the first maximum, as ONNX wants
    return torch.zeros_like(x).scatter_(axis, picked, 1)


def host_hardmax(x, *, axis=-1):
    return _nn_hardmax(x, axis)


def host_hardmax_2d(x, *, axis=1):
    return _nn_hardmax(_nn_coerce_2d(x, axis), 1).reshape(x.shape)


def host_lp_normalization(x, *, axis=-1, p=2):
    norm = x.abs().pow(p).sum(dim=axis, keepdim=True).pow(1.0 / p)
    return torch.where(norm == 0, torch.zeros_like(x), x / norm)


def host_mean_variance_normalization(x, *, axes=(0, 2, 3)):
    """In float64: a float32 mean of equal values is off by a rounding, which the division by the slice's own
    deviation turns into an output near +-1 where the spec's is 0 (x - mean is 0, so is the deviation)."""
    dims = [int(a) for a in axes]
    wide = x.to(torch.float64)
    centered = wide - wide.mean(dim=dims, keepdim=True)
    std = (centered ** 2).mean(dim=dims, keepdim=True).sqrt()
    return (centered / (std + 1e-9)).to(x.dtype)


def host_lrn(x, *, size, alpha=0.0001, beta=0.75, bias=1.0):
    square = (x * x).transpose(0, 1)  # channels first
    channels = square.shape[0]
    total = torch.zeros_like(square)
    low, high = (size - 1) // 2, size - 1 - (size - 1) // 2
    for c in range(channels):
        total[c] = square[max(0, c - low): min(channels, c + high + 1)].sum(dim=0)
    return x / (bias + alpha / size * total.transpose(0, 1)) ** beta


def host_shrink(x, *, lambd=0.5, bias=0.0):
    zero = torch.zeros_like(x)
    return torch.where(x < -lambd, x + bias, torch.where(x > lambd, x - bias, zero)).to(x.dtype)


def host_celu(x, *, alpha=1.0):
    return torch.clamp(x, min=0) + torch.clamp(alpha * (torch.exp(x / alpha) - 1), max=0)
