"""A generated-program-like run on the simulator: `import ttnn`, explicit memory configs, deallocations,
no leaks, and per-bank peaks equal to a hand computation."""
from __future__ import annotations

import torch

from onnx2ttnn.sim import runtime


def generated_program(x, w, b):
    """Shaped like onnx2ttnn's emitted code: linear -> relu -> reshape -> softmax."""
    import ttnn

    device = ttnn.open_device(device_id=0, l1_small_size=16384)
    t_x = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                          memory_config=ttnn.DRAM_MEMORY_CONFIG)
    t_w = ttnn.from_torch(w, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                          memory_config=ttnn.DRAM_MEMORY_CONFIG)
    t_b = ttnn.from_torch(b, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                          memory_config=ttnn.DRAM_MEMORY_CONFIG)
    # node Gemm_0
    t_y = ttnn.linear(t_x, t_w, bias=t_b, memory_config=ttnn.L1_MEMORY_CONFIG)
    # node Relu_1
    t_z = ttnn.relu(t_y, memory_config=ttnn.L1_MEMORY_CONFIG)
    ttnn.deallocate(t_y)
    # node Reshape_2 (a view of t_z)
    t_r = ttnn.reshape(t_z, (64, 256))
    # node Softmax_3
    t_s = ttnn.softmax(t_r, -1, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    ttnn.deallocate(t_r)  # frees t_z's buffer too
    z_freed = not t_z.is_allocated()
    stats = runtime.memory_stats(device)
    result = ttnn.to_torch(t_s)
    for t in (t_s, t_x, t_w, t_b):
        ttnn.deallocate(t)
    after = runtime.memory_stats(device)
    ttnn.close_device(device)
    return result, device, stats, after, z_freed


def test_generated_program_runs_without_leaks_and_with_expected_peaks():
    torch.manual_seed(8)
    x, w, b = torch.randn(1, 1, 64, 128), torch.randn(128, 256) * 0.1, torch.randn(256)
    runtime.configure("n150")
    with runtime.install():
        result, device, stats, after, z_freed = generated_program(x, w, b)
    runtime.configure(None)

    r = lambda t: t.to(torch.bfloat16).float()  # noqa: E731
    y = r(torch.relu(r(r(x) @ r(w) + r(b))))
    ref = torch.softmax(y.reshape(64, 256), dim=-1)
    assert result.dtype is torch.bfloat16 and tuple(result.shape) == (64, 256)
    pcc = torch.corrcoef(torch.stack([result.float().flatten(), ref.flatten()]))[0, 1]
    assert pcc > 0.999
    assert z_freed
    assert runtime.leaks(device) == []

    # Hand computation, bytes reserved in each bank (2048 B bf16 tiles):
    #   DRAM, 12 banks: x [64,128] 8 tiles -> 1 tile; w [128,256] 32 tiles -> 3; b [256] 8 tiles -> 1;
    #                   softmax out [64,256] 16 tiles -> 2.                          peak = 7 tiles = 14336 B
    #   L1, 64 banks:   linear out [1,1,64,256] 16 tiles -> 1 tile; relu out -> 1.   peak = 2 tiles = 4096 B
    assert stats["DRAM"].peak_per_bank == 7 * 2048
    assert stats["L1"].peak_per_bank == 2 * 2048
    assert stats["L1"].data_peak_per_bank[:16] == (4096,) * 16 and set(stats["L1"].data_peak_per_bank[16:]) == {0}
    assert stats["L1"].current_per_bank == 0  # y deallocated, z freed through its view
    assert after["DRAM"].current_per_bank == 0 and after["L1"].current_per_bank == 0


def test_a_program_that_forgets_deallocation_leaks():
    runtime.configure("n150")
    with runtime.install():
        import ttnn

        device = ttnn.open_device(device_id=0)
        t = ttnn.from_torch(torch.ones(1, 32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        ttnn.exp(t, memory_config=ttnn.L1_MEMORY_CONFIG)
        ttnn.deallocate(t)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            ttnn.close_device(device)
    runtime.configure(None)
    assert [(b.buffer_type, b.created_by) for b in runtime.leaks(device)] == [("L1", "ttnn.exp")]
