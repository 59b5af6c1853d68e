"""Arithmetic, bitwise and linear-algebra ops: Mod, Pow (integer powers), BitShift, Bitwise*, IsInf, Round, Det, Einsum, CastLike,
Cast to bfloat16 (rounded), and the reductions ttnn has no call for (ReduceL1/L2/LogSum/LogSumExp/Prod/SumSquare)."""
import torch


def host_mod(a, b, *, fmod=0):
    return (torch.fmod(a, b) if fmod else torch.remainder(a, b)).to(a.dtype)


def host_pow(x, y):
    if x.is_floating_point():
        return torch.pow(x, y).to(x.dtype)
    return torch.pow(x.double(), y.double()).to(x.dtype)  # integers as onnxruntime: pow in double, cast back


def host_bit_shift(x, y, *, direction):
    return (x << y) if direction == "LEFT" else (x >> y)


def host_bitwise(a, b=None, *, kind):
    if kind == "not":
        return torch.bitwise_not(a)
    return {"and": torch.bitwise_and, "or": torch.bitwise_or, "xor": torch.bitwise_xor}[kind](a, b)


def host_logical_xor(a, b):
    return torch.logical_xor(a, b)


def host_is_inf(x, *, detect_negative=1, detect_positive=1):
    hit = torch.zeros_like(x, dtype=torch.bool)
    if detect_positive:
        hit |= x == float("inf")
    if detect_negative:
        hit |= x == -float("inf")
    return hit


def host_round(x):
    return torch.round(x)  # halves to even, as ONNX wants


def host_det(x):
    return torch.linalg.det(x.to(torch.float64)).to(x.dtype)


def host_einsum(*operands, equation):
    return torch.einsum(equation.replace(" ", ""), *operands).to(operands[0].dtype)


def host_round_to_bfloat16(x):
    return x.to(torch.bfloat16)  # (round to nearest even; NaN stays NaN)


def host_cast_like(x, like):
    return x.to(like.dtype)


def host_reduce(x, axes=None, *, kind, keepdims=1, noop_with_empty_axes=0, axes_attr=None):
    if axes_attr is not None:
        dims = [int(a) for a in axes_attr]
    else:
        dims = [int(a) for a in axes.reshape(-1).tolist()] if axes is not None else []
    if not dims:
        if noop_with_empty_axes:
            return x
        dims = list(range(x.dim()))
    keep = bool(keepdims)
    if kind == "l1":
        out = x.abs().sum(dim=dims, keepdim=keep)
    elif kind == "l2":
        out = (x * x).sum(dim=dims, keepdim=keep).sqrt()
    elif kind == "log_sum":
        out = x.sum(dim=dims, keepdim=keep).log()
    elif kind == "log_sum_exp":
        out = torch.logsumexp(x.to(torch.float64), dim=dims, keepdim=keep)
    elif kind == "sum_square":
        out = (x * x).sum(dim=dims, keepdim=keep)
    elif kind == "prod":
        out = x
        for d in sorted((d % max(x.dim(), 1) for d in dims), reverse=True):
            out = out.prod(dim=d, keepdim=keep)
    else:
        out = {"sum": x.sum, "mean": x.mean, "max": x.amax, "min": x.amin}[kind](dim=dims, keepdim=keep)
    return out.to(x.dtype)
