"""Ops that index with tensors: GatherElements, Gather, GatherND, ScatterElements/Scatter, ScatterND, OneHot,
EyeLike."""
import torch


def _index_wrap(indices, size):
    """ONNX indices may count from the end."""
    indices = indices.to(torch.int64)
    return torch.where(indices < 0, indices + size, indices)


def host_gather_elements(data, indices, *, axis=0):
    return torch.gather(data, axis, _index_wrap(indices, data.shape[axis]))


def host_gather(data, indices, *, axis=0):
    axis = axis % data.dim()
    flat = _index_wrap(indices, data.shape[axis]).reshape(-1)
    picked = torch.index_select(data, axis, flat)
    return picked.reshape(data.shape[:axis] + indices.shape + data.shape[axis + 1:])


def host_gather_nd(data, indices, *, batch_dims=0):
    indices = indices.to(torch.int64)
    batch = data.shape[:batch_dims]
    depth = indices.shape[-1]
    flat_data = data.reshape((-1,) + data.shape[batch_dims:])
    flat_idx = indices.reshape((flat_data.shape[0], -1, depth))
    rows = []
    for b in range(flat_data.shape[0]):
        idx = _index_wrap(flat_idx[b], torch.tensor(flat_data.shape[1:1 + depth]))
        rows.append(flat_data[b][tuple(idx.t())])
    out = torch.stack(rows) if rows else flat_data[:0]
    return out.reshape(batch + indices.shape[batch_dims:-1] + data.shape[batch_dims + depth:])


def host_scatter_elements(data, indices, updates, *, axis=0, reduction="none"):
    index = _index_wrap(indices, data.shape[axis])
    if reduction == "none":
        return torch.scatter(data, axis, index, updates)
    mode = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}[reduction]
    return torch.scatter_reduce(data, axis, index, updates, reduce=mode, include_self=True)


def host_scatter_nd(data, indices, updates, *, reduction="none"):
    out = data.clone()
    indices = indices.to(torch.int64)
    depth = indices.shape[-1]
    idx = indices.reshape(-1, depth)
    upd = updates.reshape((idx.shape[0],) + data.shape[depth:])
    for i in range(idx.shape[0]):
        where = tuple(int(v) % data.shape[d] for d, v in enumerate(idx[i].tolist()))
        if reduction == "add":
            out[where] = out[where] + upd[i]
        elif reduction == "mul":
            out[where] = out[where] * upd[i]
        elif reduction == "max":
            out[where] = torch.maximum(out[where], upd[i])
        elif reduction == "min":
            out[where] = torch.minimum(out[where], upd[i])
        else:
            out[where] = upd[i]
    return out


def host_one_hot(indices, depth, values, *, axis=-1):
    size = int(depth.reshape(-1)[0].item())
    index = indices.to(torch.int64) if not indices.is_floating_point() else indices.to(torch.float64).floor().to(torch.int64)
    index = torch.where(index < 0, index + size, index)
    valid = (index >= 0) & (index < size)
    hot = torch.nn.functional.one_hot(torch.where(valid, index, 0), size) * valid.unsqueeze(-1)
    rank = indices.dim() + 1
    hot = torch.movedim(hot, -1, axis % rank)
    off, on = values.reshape(-1)[0], values.reshape(-1)[1]
    return torch.where(hot.bool(), on, off).to(values.dtype)


def host_eye_like(x, *, k=0, dtype=None):
    rows, cols = x.shape
    out = torch.zeros(rows, cols, dtype=x.dtype if dtype is None else getattr(torch, dtype))
    for i in range(rows):
        if 0 <= i + k < cols:
            out[i, i + k] = 1
    return out
