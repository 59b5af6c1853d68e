"""Ordering and scanning ops: TopK, ArgMax/ArgMin, CumSum/CumProd, Trilu, ReverseSequence."""
import torch


def host_topk(x, k, *, axis=-1, largest=1, sorted=1):
    # a stable sort keeps equal values in index order: ONNX wants the lower index first among ties
    values, indices = torch.sort(x, dim=axis, descending=bool(largest), stable=True)
    count = int(k.reshape(-1)[0])
    return values.narrow(axis, 0, count), indices.narrow(axis, 0, count).to(torch.int64)


def host_topk_k(x, *, k, axis=-1):
    return host_topk(x, torch.tensor([k]), axis=axis)


def host_arg_reduce(x, *, kind, axis=0, keepdims=1, select_last_index=0):
    pick = torch.argmax if kind == "max" else torch.argmin
    if select_last_index:
        size = x.shape[axis]
        index = size - 1 - pick(torch.flip(x, dims=[axis]), dim=axis, keepdim=bool(keepdims))
    else:
        index = pick(x, dim=axis, keepdim=bool(keepdims))
    return index.to(torch.int64)


def host_cumulative(x, axis, *, kind, exclusive=0, reverse=0):
    dim = int(axis.reshape(-1)[0])
    data = torch.flip(x, dims=[dim]) if reverse else x
    if exclusive:
        identity = torch.zeros_like if kind == "sum" else torch.ones_like
        first = identity(data.narrow(dim, 0, 1))
        data = torch.cat([first, data.narrow(dim, 0, data.shape[dim] - 1)], dim=dim)
    out = torch.cumsum(data, dim=dim) if kind == "sum" else torch.cumprod(data, dim=dim)
    out = torch.flip(out, dims=[dim]) if reverse else out
    return out.to(x.dtype)


def host_trilu(x, k=None, *, upper=1):
    diagonal = int(k.reshape(-1)[0]) if k is not None else 0
    return torch.triu(x, diagonal) if upper else torch.tril(x, diagonal)


def host_reverse_sequence(x, sequence_lens, *, batch_axis=1, time_axis=0):
    out = x.clone()
    for b, length in enumerate(sequence_lens.reshape(-1).tolist()):
        row = x.select(batch_axis, b)
        t = time_axis if time_axis < batch_axis else time_axis - 1
        head = torch.flip(row.narrow(t, 0, int(length)), dims=[t])
        out.select(batch_axis, b).narrow(t, 0, int(length)).copy_(head)
    return out
