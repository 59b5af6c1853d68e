"""The simulator's scaled_dot_product_attention with a program config and a compute kernel config: the configs
ir/sdpa_config.choose makes are accepted and change no value, chunk sizes real ttnn refused are refused
(tools/ttnn_mock/probes/results/sdpa_config.txt), and the kernel config acts on the two matmuls as on matmul's
(HiFi4 with a float32 destination leaves bfloat16 operands whole; LoFi truncates them)."""
from __future__ import annotations

import os

import pytest
import torch

from onnx2ttnn.ir.sdpa_config import choose

RESULTS = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "ttnn_mock", "probes", "results",
                       "sdpa_config.txt")
SHAPE = (1, 2, 64, 32)


def _qkv(ttnn, device, shape=SHAPE):
    torch.manual_seed(0)
    return [ttnn.from_torch(torch.randn(shape), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
            for _ in range(3)]


def _kernel(ttnn, fidelity, fp32):
    return ttnn.WormholeComputeKernelConfig(math_fidelity=getattr(ttnn.MathFidelity, fidelity),
                                            math_approx_mode=False, fp32_dest_acc_en=fp32, packer_l1_acc=not fp32)


def _sdpa(ttnn, q, k, v, **extra):
    return ttnn.to_torch(ttnn.transformer.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.25, **extra))


def test_the_chosen_config_is_accepted_and_changes_no_value(ttnn, device):
    q, k, v = _qkv(ttnn, device)
    config = eval(repr(choose(SHAPE, SHAPE, "bf16", (8, 8), True, 320 * 1024)), {"ttnn": ttnn})  # noqa: S307
    hifi4 = _kernel(ttnn, "HiFi4", True)
    plain = _sdpa(ttnn, q, k, v)
    assert torch.equal(_sdpa(ttnn, q, k, v, program_config=config, compute_kernel_config=hifi4), plain)


@pytest.mark.parametrize("q_chunk, k_chunk", [(16, 32), (32, 48), (0, 32)])
def test_chunks_that_are_not_whole_tiles_are_refused(ttnn, device, q_chunk, k_chunk):
    q, k, v = _qkv(ttnn, device)
    config = ttnn.SDPAProgramConfig(compute_with_storage_grid_size=ttnn.CoreCoord(8, 8), q_chunk_size=q_chunk,
                                    k_chunk_size=k_chunk)
    with pytest.raises(RuntimeError, match="must be a positive multiple of TILE_SIZE"):
        _sdpa(ttnn, q, k, v, program_config=config)


def test_a_grid_beyond_the_device_and_a_config_of_another_kind_are_refused(ttnn, device):
    q, k, v = _qkv(ttnn, device)
    wide = ttnn.SDPAProgramConfig(compute_with_storage_grid_size=ttnn.CoreCoord(9, 8), q_chunk_size=32, k_chunk_size=32)
    with pytest.raises(RuntimeError, match="exceeds the device"):
        _sdpa(ttnn, q, k, v, program_config=wide)
    with pytest.raises(TypeError, match="SDPAProgramConfig"):
        _sdpa(ttnn, q, k, v, program_config=_kernel(ttnn, "HiFi4", True))


def test_low_fidelity_truncates_the_operands_of_both_matmuls(ttnn, device):
    q, k, v = _qkv(ttnn, device)
    exact = _sdpa(ttnn, q, k, v)
    lofi = _sdpa(ttnn, q, k, v, compute_kernel_config=_kernel(ttnn, "LoFi", False))
    hifi2 = _sdpa(ttnn, q, k, v, compute_kernel_config=_kernel(ttnn, "HiFi2", False))
    err_lofi, err_hifi2 = (float((x - exact).abs().max()) for x in (lofi, hifi2))
    assert 0 < err_hifi2 < err_lofi < 0.5


def test_the_chosen_configs_of_the_zoo_shapes_validated_on_the_mock():
    """ir/sdpa_config.choose still makes the configs the probe saw real ttnn accept within their bound."""
    with open(RESULTS) as handle:
        lines = [line for line in handle if " chosen " in line]
    for name, shape in (("bert-base masked", (1, 12, 128, 64)), ("gpt-2 causal", (1, 12, 128, 64)),
                        ("vit-b/16 197 tokens", (1, 12, 197, 64))):
        for kernel, fp32 in (("HiFi4 fp32_dest", True), ("HiFi2 packer_l1_acc", False)):
            text = repr(choose(shape, shape, "bf16", (8, 8), fp32, 320 * 1024)).replace("ttnn.", "")
            assert any(line.startswith(f"OK  {name} {kernel} chosen {text} |") and ": covered" in line
                       for line in lines), (name, kernel, text)
