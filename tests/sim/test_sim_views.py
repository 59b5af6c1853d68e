"""Views share buffers; deallocation through any alias; use-after-free errors (ops_data_movement, ops_host)."""
from __future__ import annotations

import pytest
import torch

from onnx2ttnn.sim import runtime


@pytest.fixture
def x(ttnn, device):
    return ttnn.from_torch(torch.randn(1, 128, 768), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)


def dram_now(device):
    return runtime.memory_stats(device)["DRAM"].current_per_bank


def test_reshape_views_follow_the_view_rule(ttnn, device, x):
    before = dram_now(device)
    for shape in [(1, 1, 128, 768), (128, 768)]:
        v = ttnn.reshape(x, shape)
        assert v.buffer_address() == x.buffer_address()
        assert torch.equal(ttnn.to_torch(v), ttnn.to_torch(x).reshape(shape))
    assert ttnn.unsqueeze(x, 0).buffer_address() == x.buffer_address()
    assert ttnn.squeeze(ttnn.unsqueeze(x, 0), 0).buffer_address() == x.buffer_address()
    assert ttnn.view(x, (1, 1, 128, 768)).buffer_address() == x.buffer_address()
    assert dram_now(device) == before  # views allocate nothing
    assert ttnn.reshape(x, (1, 128, 768)) is x
    copy = ttnn.reshape(x, (1, 128, 12, 64))  # second-last dim changes and is padded: a copy
    assert copy.buffer_address() != x.buffer_address()
    assert tuple(copy.padded_shape) == (1, 128, 32, 64)
    assert dram_now(device) > before


def test_view_refuses_a_copying_shape(ttnn, x):
    with pytest.raises(RuntimeError, match="not a zero-cost view"):
        ttnn.view(x, (1, 128, 12, 64))


def test_row_major_reshape_is_a_view_when_the_last_dim_stays(ttnn, device):
    t = ttnn.from_torch(torch.randn(4, 6, 8), dtype=ttnn.bfloat16, device=device)
    assert ttnn.reshape(t, (24, 8)).buffer_address() == t.buffer_address()
    assert ttnn.reshape(t, (4, 48)).buffer_address() != t.buffer_address()


def test_deallocating_a_view_frees_the_shared_buffer(ttnn, device, x):
    v = ttnn.reshape(x, (1, 1, 128, 768))
    ttnn.deallocate(v)  # force=True by default
    assert not x.is_allocated() and not v.is_allocated()
    assert dram_now(device) == 0
    with pytest.raises(RuntimeError) as err:
        ttnn.add(x, 1.0)
    msg = str(err.value)
    assert f"tensor #{x._id} [1, 128, 768] bf16 TILE" in msg and "is not allocated" in msg
    assert "freed by ttnn.deallocate" in msg and "ttnn.add" in msg


def test_deallocate_view_without_force_keeps_the_buffer(ttnn, device, x):
    v = ttnn.reshape(x, (1, 1, 128, 768))
    ttnn.deallocate(v, False)
    assert x.is_allocated() and not v.is_allocated()
    assert ttnn.to_torch(ttnn.relu(x)).shape == (1, 128, 768)
    with pytest.raises(RuntimeError, match="released by ttnn.deallocate"):
        ttnn.relu(v)
    used = dram_now(device)
    ttnn.deallocate(x, False)  # last user: freed
    assert not x.is_allocated() and dram_now(device) < used


def test_use_after_deallocate_names_the_tensor_and_op(ttnn, x):
    y = ttnn.relu(x)
    ttnn.deallocate(y)
    ttnn.deallocate(y)  # a second deallocate is harmless
    with pytest.raises(RuntimeError, match=r"ttnn.matmul: input_tensor_b \(tensor #\d+ \[1, 128, 768\] bf16 TILE "
                                           r"DRAM interleaved, from ttnn.relu\) is not allocated"):
        ttnn.matmul(x, y)
    with pytest.raises(RuntimeError, match="is not allocated"):
        ttnn.to_torch(y)
