"""Fused epilogues in the simulator (docs/ttnn-facts.md §22): a plain linear's `activation=` computes exactly the
standalone op on the rounded result; add's `activations=[RELU]` is relu of the sum; the norms' residual input is
added before normalising; gelu kernels the simulator does not model are refused."""
from __future__ import annotations

import pytest
import torch


def dev(ttnn, device, data):
    return ttnn.from_torch(data, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)


@pytest.mark.parametrize("name, standalone", [("relu", "relu"), ("gelu", "gelu"), ("silu", "silu"),
                                              ("sigmoid", "sigmoid"), ("gelu_tanh", "gelu_tanh")])
def test_a_linear_activation_is_the_standalone_op_on_the_rounded_result(ttnn, device, name, standalone):
    torch.manual_seed(1)
    x, w, b = dev(ttnn, device, torch.randn(1, 1, 64, 96)), dev(ttnn, device, torch.randn(96, 64) * 0.1), \
        dev(ttnn, device, torch.randn(1, 64))
    fused = ttnn.to_torch(ttnn.linear(x, w, bias=b, activation=name))
    plain = ttnn.linear(x, w, bias=b)
    if standalone == "gelu_tanh":
        unfused = ttnn.to_torch(ttnn.gelu(plain, variant=ttnn.GeluVariant.Tanh))
    else:
        unfused = ttnn.to_torch(getattr(ttnn, standalone)(plain))
    assert torch.equal(fused, unfused)


def test_a_linear_activation_frees_its_intermediate(ttnn, device):
    x, w = dev(ttnn, device, torch.randn(1, 1, 64, 64)), dev(ttnn, device, torch.randn(64, 64))
    used = ttnn.get_memory_view(device, ttnn.BufferType.DRAM).total_bytes_allocated_per_bank
    y = ttnn.linear(x, w, activation="gelu")
    after = ttnn.get_memory_view(device, ttnn.BufferType.DRAM).total_bytes_allocated_per_bank
    ttnn.deallocate(y)
    plain = ttnn.linear(x, w)
    assert after - used == ttnn.get_memory_view(device, ttnn.BufferType.DRAM).total_bytes_allocated_per_bank - used
    ttnn.deallocate(plain)


def test_the_fast_gelu_kernels_are_refused_not_mismodelled(ttnn, device):
    x, w = dev(ttnn, device, torch.randn(1, 1, 32, 64)), dev(ttnn, device, torch.randn(64, 64))
    for act in (ttnn.UnaryWithParam(ttnn.UnaryOpType.GELU), ttnn.UnaryWithParam(ttnn.UnaryOpType.GELU, 1.0)):
        with pytest.raises(RuntimeError, match="does not model"):
            ttnn.linear(x, w, activation=act)
    exact = ttnn.linear(x, w, activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.GELU, 0.0))
    assert torch.equal(ttnn.to_torch(exact), ttnn.to_torch(ttnn.linear(x, w, activation="gelu")))


@pytest.mark.parametrize("op", ["add", "subtract", "multiply"])
def test_a_binary_relu_is_relu_of_the_result(ttnn, device, op):
    torch.manual_seed(2)
    a, b = dev(ttnn, device, torch.randn(1, 1, 32, 64)), dev(ttnn, device, torch.randn(1, 1, 32, 64))
    fused = ttnn.to_torch(getattr(ttnn, op)(a, b, activations=[ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU)]))
    assert torch.equal(fused, ttnn.to_torch(ttnn.relu(getattr(ttnn, op)(a, b))))
    assert (fused == 0).any() and (fused > 0).any()
    with pytest.raises(TypeError):
        ttnn.add(a, b, activations=["relu"])


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_a_norm_residual_normalises_the_sum(ttnn, device, norm):
    torch.manual_seed(3)
    x, r = dev(ttnn, device, torch.randn(1, 1, 32, 64)), dev(ttnn, device, torch.randn(1, 1, 32, 64))
    fused = ttnn.to_torch(getattr(ttnn, norm)(x, residual_input_tensor=r, epsilon=1e-5))
    summed = ttnn.to_torch(getattr(ttnn, norm)(ttnn.add(x, r), epsilon=1e-5))
    assert torch.allclose(fused, summed, atol=0.05)


def test_a_sharded_input_with_an_activation_is_refused_like_real_ttnn(ttnn, device):
    mc = ttnn.create_sharded_memory_config((1, 1, 256, 64), ttnn.CoreGrid(y=1, x=8), ttnn.ShardStrategy.HEIGHT)
    x = ttnn.to_memory_config(dev(ttnn, device, torch.randn(1, 1, 256, 64)), mc)
    w = dev(ttnn, device, torch.randn(64, 64))
    with pytest.raises(RuntimeError, match="program config's fused_activation"):
        ttnn.linear(x, w, activation="gelu")
    ttnn.deallocate(ttnn.linear(x, w))


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_lhs_round_and_hardtanh_equal_the_standalone_calls_before_the_multiply(ttnn, device, dtype):
    """multiply(a, s, input_tensor_a_activations=[ROUND, HARDTANH]) is round, clip and multiply one after the
    other (probe_qdq_pair.py: round_tile and hardtanh_tile in the multiply's kernel, on integers its dest holds)."""
    torch.manual_seed(2)
    data = torch.cat([torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5, 300.0, -300.0, 3.4]), torch.randn(56) * 100])
    a = ttnn.from_torch(data.reshape(1, 1, 1, 64).repeat(1, 1, 32, 1), dtype=getattr(ttnn, dtype),
                        layout=ttnn.TILE_LAYOUT, device=device)
    U, T = ttnn.UnaryWithParam, ttnn.UnaryOpType
    fused = ttnn.to_torch(ttnn.multiply(a, 0.05, input_tensor_a_activations=[U(T.ROUND, 0.0),
                                                                             U(T.HARDTANH, -128.0, 127.0)]))
    unfused = ttnn.to_torch(ttnn.multiply(ttnn.clip(ttnn.round(a), min=-128.0, max=127.0), 0.05))
    assert torch.equal(fused, unfused)
    codes = torch.round(fused[0, 0, 0, :8].float() / 0.05)
    assert codes.tolist() == [0.0, 2.0, 2.0, 0.0, -2.0, 127.0, -128.0, 3.0]  # halves to even, saturated


def test_lhs_activations_are_refused_where_not_modelled(ttnn, device):
    a = dev(ttnn, device, torch.randn(1, 1, 32, 32))
    with pytest.raises(TypeError, match="input_tensor_a_activations"):
        ttnn.maximum(a, a, input_tensor_a_activations=[ttnn.UnaryWithParam(ttnn.UnaryOpType.ROUND, 0.0)])
