"""The simulator's traces (sim/ops_trace.py): a replay recomputes the captured ops on the inputs copied in since,
at the captured addresses; every planted violation of a trace rule is caught with a message naming it."""
from __future__ import annotations

import pytest
import torch

from onnx2ttnn.sim import runtime
from onnx2ttnn.sim.ops_trace import TraceError


@pytest.fixture()
def ttnn():
    runtime.configure("n150")
    with runtime.install() as sim:
        yield sim
    runtime.configure(None)


def _setup(ttnn, cqs=1):
    """A device, a persistent input buffer and a weight; forward(x) = relu(x @ w) in L1, its intermediate freed."""
    device = ttnn.open_device(device_id=0, l1_small_size=16384, trace_region_size=1 << 20, num_command_queues=cqs)
    x = ttnn.from_torch(torch.zeros(1, 1, 32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                        memory_config=ttnn.L1_MEMORY_CONFIG)
    w = ttnn.from_torch(torch.eye(64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    def forward():
        h = ttnn.matmul(x, w, memory_config=ttnn.L1_MEMORY_CONFIG)
        y = ttnn.relu(h, memory_config=ttnn.L1_MEMORY_CONFIG)
        ttnn.deallocate(h)
        return y
    return device, x, w, forward


def _host(ttnn, values):
    return ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def test_replay_recomputes_on_the_copied_inputs_at_the_captured_addresses(ttnn):
    device, x, w, forward = _setup(ttnn)
    ttnn.deallocate(forward())  # warm-up
    trace = ttnn.begin_trace_capture(device, cq_id=0)
    y = forward()
    ttnn.end_trace_capture(device, trace, cq_id=0)
    address, live = y.buffer_address(), len(runtime.live_buffers(device))
    assert torch.isnan(ttnn.to_torch(y).float()).all()  # undefined until replayed
    for k in range(3):
        values = torch.randn(1, 1, 32, 64) + k
        ttnn.copy_host_to_device_tensor(_host(ttnn, values), x, cq_id=0)
        ttnn.execute_trace(device, trace, cq_id=0, blocking=False)
        expected = torch.relu(values.to(torch.bfloat16).float())
        assert torch.allclose(ttnn.to_torch(y).float(), expected, atol=0.02)
        assert y.buffer_address() == address and len(runtime.live_buffers(device)) == live
    ttnn.release_trace(device, trace)
    for t in (y, x, w):
        ttnn.deallocate(t)
    ttnn.close_device(device)
    assert runtime.leaks(device) == []


@pytest.mark.parametrize("call", ["to_torch", "from_torch"])
def test_a_host_step_inside_a_capture_is_refused(ttnn, call):
    device, x, w, forward = _setup(ttnn)
    ttnn.begin_trace_capture(device, cq_id=0)
    y = forward()
    with pytest.raises(TraceError, match=f"ttnn.{call} inside a trace capture"):
        if call == "to_torch":
            ttnn.to_torch(y)  # a host fallback's read
        else:
            ttnn.from_torch(torch.ones(1, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)


def test_an_allocation_the_capture_leaks_is_caught_at_its_end(ttnn):
    device, x, w, forward = _setup(ttnn)
    trace = ttnn.begin_trace_capture(device, cq_id=0)
    y = forward()
    ttnn.exp(y, memory_config=ttnn.L1_MEMORY_CONFIG)  # result dropped, never deallocated
    with pytest.raises(TraceError, match=r"allocated inside the trace capture by ttnn.exp .* leaks"):
        ttnn.end_trace_capture(device, trace, cq_id=0)


def test_freeing_a_persistent_input_inside_the_capture_is_refused(ttnn):
    device, x, w, forward = _setup(ttnn)
    ttnn.begin_trace_capture(device, cq_id=0)
    forward()
    with pytest.raises(TraceError, match="did not allocate: a persistent input"):
        ttnn.deallocate(x)


def test_a_trace_input_freed_after_the_capture_is_caught_at_the_replay(ttnn):
    device, x, w, forward = _setup(ttnn)
    trace = ttnn.begin_trace_capture(device, cq_id=0)
    y = forward()
    ttnn.end_trace_capture(device, trace, cq_id=0)
    ttnn.deallocate(w)
    with pytest.raises(TraceError, match="whose buffer was freed .* must stay allocated"):
        ttnn.execute_trace(device, trace, cq_id=0)
    assert y.is_allocated()


def test_a_buffer_allocated_where_the_trace_writes_is_caught_at_the_replay(ttnn):
    device, x, w, forward = _setup(ttnn)
    trace = ttnn.begin_trace_capture(device, cq_id=0)
    y = forward()
    ttnn.end_trace_capture(device, trace, cq_id=0)
    # the capture's intermediate h was freed: this lands at its address, which every replay rewrites
    other = ttnn.from_torch(torch.ones(1, 1, 32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                            memory_config=ttnn.L1_MEMORY_CONFIG)
    with pytest.raises(TraceError, match="the replay would overwrite it"):
        ttnn.execute_trace(device, trace, cq_id=0)
    assert other.is_allocated() and y.is_allocated()


def test_two_queues_need_events_both_ways(ttnn):
    device, x, w, forward = _setup(ttnn, cqs=2)
    trace = ttnn.begin_trace_capture(device, cq_id=0)
    y = forward()
    ttnn.end_trace_capture(device, trace, cq_id=0)
    host = _host(ttnn, torch.randn(1, 1, 32, 64))
    ttnn.copy_host_to_device_tensor(host, x, cq_id=1)
    with pytest.raises(TraceError, match="copied on queue 1: wait_for_event"):
        ttnn.execute_trace(device, trace, cq_id=0)  # no wait for the copy
    ttnn.wait_for_event(0, ttnn.record_event(device, 1))
    ttnn.execute_trace(device, trace, cq_id=0, blocking=False)
    with pytest.raises(TraceError, match="may still read it"):
        ttnn.copy_host_to_device_tensor(host, x, cq_id=1)  # no wait for the replay
    ttnn.wait_for_event(1, ttnn.record_event(device, 0))
    ttnn.copy_host_to_device_tensor(host, x, cq_id=1)
    assert y.is_allocated()


def test_a_second_queue_needs_a_device_opened_with_two(ttnn):
    device, x, w, forward = _setup(ttnn, cqs=1)
    with pytest.raises(TraceError, match="opened with 1 command queue"):
        ttnn.copy_host_to_device_tensor(_host(ttnn, torch.zeros(1, 1, 32, 64)), x, cq_id=1)


def test_copy_host_to_device_tensor_refuses_another_dtype_or_layout(ttnn):
    device, x, w, forward = _setup(ttnn)
    with pytest.raises(RuntimeError, match="different dtype"):
        ttnn.copy_host_to_device_tensor(ttnn.from_torch(torch.zeros(1, 1, 32, 64), dtype=ttnn.float32,
                                                        layout=ttnn.TILE_LAYOUT), x)
    with pytest.raises(RuntimeError, match="different page config"):
        ttnn.copy_host_to_device_tensor(ttnn.from_torch(torch.zeros(1, 1, 32, 64), dtype=ttnn.bfloat16,
                                                        layout=ttnn.ROW_MAJOR_LAYOUT), x)
