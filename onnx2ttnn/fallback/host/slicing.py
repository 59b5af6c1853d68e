"""Slice on the host, ONNX semantics (clamped starts/ends, negative axes and steps, empty results)."""
import torch


def host_slice(data, starts, ends, axes=None, steps=None):
    starts = [int(v) for v in starts.reshape(-1).tolist()]
    ends = [int(v) for v in ends.reshape(-1).tolist()]
    axes = list(range(len(starts))) if axes is None else [int(v) for v in axes.reshape(-1).tolist()]
    steps = [1] * len(starts) if steps is None else [int(v) for v in steps.reshape(-1).tolist()]
    out = data
    for axis, start, end, step in zip(axes, starts, ends, steps):
        axis %= data.dim()
        picked = list(range(*slice(start, end, step).indices(data.shape[axis])))
        out = torch.index_select(out, axis, torch.tensor(picked, dtype=torch.int64))
    return out
