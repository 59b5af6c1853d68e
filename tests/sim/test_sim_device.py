"""The device model (onnx2ttnn/sim/_device.py, _placement.py, runtime.py): banks, pages, OOM, leaks."""
from __future__ import annotations

import sys
import warnings

import pytest
import torch

from onnx2ttnn.sim import runtime


def dev_tensor(ttnn, device, shape, mc, dtype=None, layout=None):
    return ttnn.from_torch(torch.zeros(shape), dtype=dtype or ttnn.bfloat16, layout=layout or ttnn.TILE_LAYOUT,
                           device=device, memory_config=mc)


def test_n150_banks(ttnn, device):
    stats = runtime.memory_stats(device)
    assert (stats["L1"].num_banks, stats["L1"].bank_size) == (64, 1_376_928)
    assert (stats["DRAM"].num_banks, stats["DRAM"].bank_size) == (12, 1_072_693_184)
    view = ttnn.get_memory_view(device, ttnn.BufferType.L1)
    assert view.total_bytes_allocated_per_bank == 0 and view.total_bytes_per_bank == 1_376_928


def test_tile_pages_round_robin_in_l1(ttnn, device):
    t = dev_tensor(ttnn, device, (1, 1, 64, 128), ttnn.L1_MEMORY_CONFIG)  # 2 x 4 = 8 tiles of 2048 B
    stats = runtime.memory_stats(device)["L1"]
    assert stats.current_per_bank == 2048  # ceil(8 / 64) tiles reserved in every bank
    assert stats.data_per_bank[:8] == (2048,) * 8 and set(stats.data_per_bank[8:]) == {0}
    assert runtime.memory_stats(device)["DRAM"].current_per_bank == 0
    ttnn.deallocate(t)
    assert runtime.memory_stats(device)["L1"].current_per_bank == 0
    assert runtime.memory_stats(device)["L1"].peak_per_bank == 2048


def test_non_tile_multiple_shapes_are_padded_arithmetically(ttnn, device):
    t = dev_tensor(ttnn, device, (3, 50, 70), ttnn.DRAM_MEMORY_CONFIG)  # padded (3, 64, 96): 3*2*3 = 18 tiles
    assert tuple(t.padded_shape) == (3, 64, 96) and tuple(t.shape) == (3, 50, 70)
    assert tuple(ttnn.to_torch(t).shape) == (3, 50, 70)
    assert runtime.memory_stats(device)["DRAM"].current_per_bank == 2 * 2048  # ceil(18 / 12) = 2 tiles


def test_row_major_pages_are_rows_aligned_per_buffer_type(ttnn, device):
    rm = ttnn.ROW_MAJOR_LAYOUT
    dev_tensor(ttnn, device, (3, 4), ttnn.L1_MEMORY_CONFIG, layout=rm)  # 8 B rows -> 16 B in L1
    dev_tensor(ttnn, device, (3, 4), ttnn.DRAM_MEMORY_CONFIG, layout=rm)  # -> 32 B in DRAM
    stats = runtime.memory_stats(device)
    assert stats["L1"].data_per_bank[:4] == (16, 16, 16, 0)
    assert stats["DRAM"].data_per_bank[:4] == (32, 32, 32, 0)
    assert stats["L1"].current_per_bank == 32  # the allocator's granularity is the DRAM alignment


def test_bfloat8_b_tiles_are_1088_bytes(ttnn, device):
    dev_tensor(ttnn, device, (64, 64), ttnn.DRAM_MEMORY_CONFIG, dtype=ttnn.bfloat8_b)
    assert runtime.memory_stats(device)["DRAM"].data_per_bank[:5] == (1088,) * 4 + (0,)


def test_l1_out_of_memory_message_like_real_ttnn(ttnn, device):
    kept = []
    with pytest.raises(RuntimeError) as err:
        for _ in range(43):  # 2 MiB tensors: 32768 B per bank, 42 fit in 1376928 B
            kept.append(dev_tensor(ttnn, device, (1, 1, 1024, 1024), ttnn.L1_MEMORY_CONFIG))
    assert len(kept) == 42
    assert ("Out of Memory: Not enough space to allocate 2097152 B L1 buffer across 64 banks, where each bank "
            "needs to store 32768 B, but bank size is 1376928 B (allocated: 1376256 B, free: 672 B, "
            "largest free block: 672 B)") in str(err.value)
    ttnn.deallocate(kept.pop())
    kept.append(dev_tensor(ttnn, device, (1, 1, 1024, 1024), ttnn.L1_MEMORY_CONFIG))  # freed space is reused


def test_dram_allocation_is_bottom_up_first_fit_and_l1_top_down(ttnn, device):
    dram = ttnn.DRAM_MEMORY_CONFIG
    a = dev_tensor(ttnn, device, (32, 32 * 12), dram)  # 12 tiles: one per bank
    b = dev_tensor(ttnn, device, (32, 32 * 12), dram)
    c = dev_tensor(ttnn, device, (32, 32 * 12), dram)
    assert b.buffer_address() == a.buffer_address() + 2048 and c.buffer_address() == b.buffer_address() + 2048
    ttnn.deallocate(b)
    d = dev_tensor(ttnn, device, (32, 32 * 24), dram)  # 4096 B per bank: does not fit b's hole
    e = dev_tensor(ttnn, device, (32, 32 * 12), dram)  # fits the hole exactly
    assert d.buffer_address() == c.buffer_address() + 2048 and e.buffer_address() == b_address(a)
    l1a = dev_tensor(ttnn, device, (32, 32), ttnn.L1_MEMORY_CONFIG)
    l1b = dev_tensor(ttnn, device, (32, 32), ttnn.L1_MEMORY_CONFIG)
    assert l1b.buffer_address() == l1a.buffer_address() - 2048


def b_address(a):
    return a.buffer_address() + 2048


def test_leaks_are_recorded_at_close(ttnn):
    runtime.configure("n150")
    device = ttnn.open_device(device_id=0)
    kept = ttnn.from_torch(torch.ones(2, 40), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    freed = ttnn.from_torch(torch.ones(2, 40), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.deallocate(freed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ttnn.close_device(device)
    assert any(issubclass(w.category, ResourceWarning) for w in caught)
    found = runtime.leaks(device)
    assert len(found) == 1 and found[0].description == "[2, 40] bf16 TILE DRAM interleaved"
    assert found[0].created_by == "ttnn.from_torch"
    assert "leaked DRAM buffer" in runtime.leak_report(device)
    assert runtime.last_closed_device() is device
    with pytest.raises(RuntimeError, match="closed device|freed by ttnn.close_device"):
        ttnn.relu(kept)


def test_live_buffers_and_reset_peaks(ttnn, device):
    a = dev_tensor(ttnn, device, (64, 64), ttnn.L1_MEMORY_CONFIG)
    b = dev_tensor(ttnn, device, (64, 64), ttnn.L1_MEMORY_CONFIG)
    assert [info.description for info in runtime.live_buffers(device)] == ["[64, 64] bf16 TILE L1 interleaved"] * 2
    ttnn.deallocate(b)
    assert runtime.memory_stats(device)["L1"].peak_per_bank == 2 * 2048
    runtime.reset_peaks(device)
    assert runtime.memory_stats(device)["L1"].peak_per_bank == 2048
    ttnn.deallocate(a)


def test_configure_and_environment_pick_the_device(ttnn, monkeypatch):
    runtime.configure(None)
    monkeypatch.setenv(runtime.ENV_DEVICE, "p150")
    d = ttnn.open_device(device_id=0)
    assert (d.l1.num_banks, d.dram.num_banks) == (110, 8)
    assert d.compute_with_storage_grid_size().x == 11
    ttnn.close_device(d)
    runtime.configure("n300")
    d = ttnn.open_device(device_id=0)
    assert d.spec.name == "n300"
    ttnn.close_device(d)
    runtime.configure(None)
    with pytest.raises(KeyError, match="unknown device"):
        runtime.configure("gpu")


def test_install_binds_and_restores_ttnn_module(ttnn):
    before = sys.modules.get("ttnn")
    sentinel = object()
    sys.modules["ttnn"] = sentinel
    try:
        with runtime.install() as sim:
            import ttnn as bound
            assert bound is sim is ttnn
        assert sys.modules["ttnn"] is sentinel
    finally:
        if before is None:
            sys.modules.pop("ttnn", None)
        else:
            sys.modules["ttnn"] = before
    with runtime.install():
        pass
    assert sys.modules.get("ttnn") is before


def test_l1_small_size_shrinks_the_l1_banks(ttnn):
    runtime.configure("n150")
    d = ttnn.open_device(device_id=0, l1_small_size=16384 + 4096)
    assert d.l1.bank_size == 1_376_928 - 4096
    ttnn.close_device(d)


@pytest.mark.parametrize("name,region,bank", [
    ("n150", 0, 1_072_693_184), ("n150", 1 << 20, 1_072_603_072), ("n150", 16 << 20, 1_071_292_352),
    ("p150", 1 << 20, 4_277_010_304), ("p150", 16 << 20, 4_275_044_224)])
def test_the_trace_region_comes_off_every_dram_bank_as_on_the_mock(name, region, bank):
    # docs/ttnn-facts.md §32 (probe_cqs.py): the region over the banks, rounded up to 4 KiB
    runtime.configure(name)
    try:
        with runtime.install() as ttnn:
            for device in (ttnn.open_device(device_id=0, l1_small_size=16384, trace_region_size=region),
                           ttnn.CreateDevice(0, 1, 16384, region)):
                assert ttnn.get_memory_view(device, ttnn.BufferType.DRAM).total_bytes_per_bank == bank
                ttnn.close_device(device)
    finally:
        runtime.configure(None)


def test_create_device_opens_the_command_queues_it_is_asked_for():
    runtime.configure("n150")
    try:
        with runtime.install() as ttnn:
            two = ttnn.CreateDevice(device_id=0, num_command_queues=2, l1_small_size=16384, trace_region_size=1 << 20)
            assert ttnn.record_event(two, 1) is not None
            ttnn.close_device(two)
            one = ttnn.CreateDevice(device_id=0, l1_small_size=16384)
            with pytest.raises(Exception, match="command queue 1: the device was opened with 1"):
                ttnn.record_event(one, 1)
            ttnn.close_device(one)
    finally:
        runtime.configure(None)
