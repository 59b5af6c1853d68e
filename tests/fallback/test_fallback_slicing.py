"""The Slice host fallback (onnx2ttnn/fallback/slicing.py, host/slicing.py) against numpy slicing."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from onnx2ttnn.fallback.host.slicing import host_slice


def _t(values):
    return torch.tensor(values, dtype=torch.int64)


@pytest.mark.parametrize("starts,ends,axes,steps,index", [
    ([1000], [1000], [1], [1], np.s_[:, 1000:1000]),  # starts past the end: empty
    ([-1, 0], [-1000, 3], [0, -1], [-2, 1], np.s_[::-2, :, :3]),  # negative axis and step, clamped end
    ([2], [2], None, None, np.s_[2:2]),  # starts == ends: empty on axis 0
    ([1, 4], [3, 1], [1, 2], [1, -1], np.s_[:, 1:3, 4:1:-1]),
])
def test_host_slice_follows_onnx_semantics(starts, ends, axes, steps, index):
    x = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    got = host_slice(torch.from_numpy(x), _t(starts), _t(ends), None if axes is None else _t(axes),
                     None if steps is None else _t(steps))
    np.testing.assert_array_equal(got.numpy(), x[index])
