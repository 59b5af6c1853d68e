"""Compute kernel configs on the simulator (onnx2ttnn/sim/_fidelity.py): validated, and their math fidelity and
destination accumulation change a matmul's numbers as the model says (LoFi error > HiFi2 > HiFi4 = exact)."""
from __future__ import annotations

import pytest
import torch

from onnx2ttnn.sim._fidelity import truncate_mantissa


def _config(ttnn, fidelity, fp32_acc=True):
    return ttnn.WormholeComputeKernelConfig(math_fidelity=getattr(ttnn.MathFidelity, fidelity),
                                            math_approx_mode=False, fp32_dest_acc_en=fp32_acc, packer_l1_acc=False)


def _matmul_error(ttnn, device, config, k=256, dtype=None):
    torch.manual_seed(0)
    a, b = torch.randn(64, k), torch.randn(k, 96)
    ta = ttnn.from_torch(a, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    tb = ttnn.from_torch(b, dtype=dtype or ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    exact = ttnn.to_torch(ta).float() @ ttnn.to_torch(tb).float()
    got = ttnn.to_torch(ttnn.matmul(ta, tb, compute_kernel_config=config)).float()
    return float((got - exact).abs().mean() / exact.abs().mean()), got, exact


def test_truncation_keeps_the_top_mantissa_bits():
    x = torch.tensor([1.0 + 2 ** -1 + 2 ** -5 + 2 ** -7, -3.75, float("inf"), 0.0])
    assert truncate_mantissa(x, 4).tolist() == [1.5, -3.75, float("inf"), 0.0]
    assert truncate_mantissa(x, 6)[0].item() == 1.0 + 2 ** -1 + 2 ** -5
    assert torch.isnan(truncate_mantissa(torch.tensor([float("nan")]), 4)).all()


def test_lofi_error_exceeds_hifi2_exceeds_hifi4_on_a_matmul(ttnn, device):
    errors = {f: _matmul_error(ttnn, device, _config(ttnn, f))[0] for f in ("LoFi", "HiFi2", "HiFi3", "HiFi4")}
    assert errors["LoFi"] > errors["HiFi2"] > errors["HiFi4"]
    assert errors["LoFi"] > errors["HiFi3"] > errors["HiFi4"]
    assert errors["LoFi"] > 0.01  # weights at 4 mantissa bits: ~1/32 relative per product
    # HiFi4 with fp32 accumulation: only the output rounding to bfloat16 remains
    _, got, exact = _matmul_error(ttnn, device, _config(ttnn, "HiFi4"))
    _, plain, _ = _matmul_error(ttnn, device, None)
    assert torch.equal(got, plain) and errors["HiFi4"] < 2 ** -8


def test_hifi2_reads_every_bit_of_bfloat8_b_weights(ttnn, device):
    """SrcA (the weights) gets 8 mantissa bits over HiFi2's two passes: a bfloat8_b weight (7) loses none, so
    HiFi2 and HiFi3 differ only in the activation's bits."""
    torch.manual_seed(2)
    a, b = torch.randn(64, 128), torch.randn(128, 64)
    ta = ttnn.from_torch(a, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    tb = ttnn.from_torch(b, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=device)
    hifi2 = ttnn.to_torch(ttnn.matmul(ta, tb, compute_kernel_config=_config(ttnn, "HiFi2")))
    a6 = truncate_mantissa(ttnn.to_torch(ta).float(), 6)  # the activation in SrcB: 6 of its 7 bits
    t6 = ttnn.from_torch(a6, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    assert torch.equal(hifi2, ttnn.to_torch(ttnn.matmul(t6, tb, compute_kernel_config=_config(ttnn, "HiFi4"))))
    assert not torch.equal(hifi2, ttnn.to_torch(ttnn.matmul(ta, tb, compute_kernel_config=_config(ttnn, "HiFi4"))))


def test_a_bfloat16_destination_adds_error_over_long_sums(ttnn, device):
    fp32, _, _ = _matmul_error(ttnn, device, _config(ttnn, "HiFi4", fp32_acc=True), k=2048)
    bf16, _, _ = _matmul_error(ttnn, device, _config(ttnn, "HiFi4", fp32_acc=False), k=2048)
    assert bf16 > 2 * fp32


@pytest.mark.parametrize("weights", ["bfloat16", "bfloat8_b", "float32"])
def test_conv2d_operands_are_cut_to_the_bits_lofi_reads(ttnn, device, weights):
    torch.manual_seed(1)
    x = ttnn.from_torch(torch.randn(1, 1, 64, 16), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = torch.randn(8, 16, 3, 3)
    wdtype = getattr(ttnn, weights)

    def run(config):
        out = ttnn.conv2d(input_tensor=x, weight_tensor=ttnn.from_torch(w, dtype=ttnn.float32), device=device,
                          in_channels=16, out_channels=8, batch_size=1, input_height=8, input_width=8,
                          kernel_size=(3, 3), padding=(1, 1), compute_config=config,
                          conv_config=ttnn.Conv2dConfig(weights_dtype=wdtype))
        return ttnn.to_torch(out).float()

    exact = run(None)
    assert torch.equal(run(_config(ttnn, "HiFi4")), exact)  # every bit of a bf16 input read; float32 whole
    lofi, hifi2 = ((run(_config(ttnn, f)) - exact).abs().mean() for f in ("LoFi", "HiFi2"))
    assert hifi2 > 0  # the activation (SrcB) loses its 7th bit at both
    if weights == "float32":
        assert lofi == hifi2  # float32 weights are not modelled: only the activation's bits count
    else:
        assert lofi > hifi2  # the weights (SrcA) lose 3 more bits at LoFi


def test_float32_operands_are_left_whole(ttnn, device):
    """Not modelled (sim/_fidelity.py): a float32 matmul at HiFi4 is exact, as before configs."""
    torch.manual_seed(3)
    a = ttnn.from_torch(torch.randn(32, 64), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    b = ttnn.from_torch(torch.randn(64, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    plain = ttnn.to_torch(ttnn.matmul(a, b))
    assert torch.equal(ttnn.to_torch(ttnn.matmul(a, b, compute_kernel_config=_config(ttnn, "HiFi4"))), plain)


@pytest.mark.parametrize("call", ["matmul", "softmax", "layer_norm"])
def test_a_config_of_the_wrong_type_is_refused(ttnn, device, call):
    t = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    args = {"matmul": (t, t), "softmax": (t,), "layer_norm": (t,)}[call]
    with pytest.raises(TypeError, match="compute_kernel_config must be a ttnn.WormholeComputeKernelConfig"):
        getattr(ttnn, call)(*args, compute_kernel_config=ttnn.MathFidelity.LoFi)
    with pytest.raises(TypeError, match="math_fidelity must be MathFidelity"):
        ttnn.WormholeComputeKernelConfig(math_fidelity="LoFi")
