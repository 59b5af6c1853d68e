"""matmul / linear (onnx2ttnn/sim/ops_matmul.py): fp32 math from rounded operands, one rounding."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from onnx2ttnn.sim import ops_matmul


def dev(ttnn, device, data, dtype=None, layout=None):
    return ttnn.from_torch(data, dtype=dtype or ttnn.bfloat16, layout=layout or ttnn.TILE_LAYOUT, device=device)


def within_one_bf16_ulp(got: torch.Tensor, ref: torch.Tensor) -> bool:
    """got is bf16-representable and within one bf16 ulp of the fp32 reference."""
    ulp = torch.exp2(torch.floor(torch.log2(ref.abs().clamp(min=1e-30))) - 7)
    return bool(torch.equal(got.to(torch.bfloat16).float(), got)) and bool(torch.all((got - ref).abs() <= ulp))


@pytest.fixture(params=[True, False], ids=["native-bf16-gemm", "fp32-gemm"])
def gemm_path(request, monkeypatch):
    if not request.param:
        monkeypatch.setattr(ops_matmul, "native_bf16_gemm", lambda: False)
    return request.param


@pytest.mark.parametrize("shape_a,shape_b", [((45, 70), (70, 33)), ((1, 12, 40, 64), (1, 12, 64, 40)),
                                             ((2, 3, 40, 64), (64, 50)), ((2, 3, 40, 64), (1, 1, 64, 8))])
def test_matmul_batched_broadcast(ttnn, device, gemm_path, shape_a, shape_b):
    torch.manual_seed(4)
    a, b = torch.randn(shape_a), torch.randn(shape_b)
    out = ttnn.matmul(dev(ttnn, device, a), dev(ttnn, device, b))
    ref = a.to(torch.bfloat16).float() @ b.to(torch.bfloat16).float()
    got = ttnn.to_torch(out).float()
    assert tuple(out.shape) == tuple(ref.shape) and out.layout is ttnn.TILE_LAYOUT
    assert within_one_bf16_ulp(got, ref)
    assert (got != ref).any()  # the result really is rounded to bf16
    assert out.memory_config() == ttnn.DRAM_MEMORY_CONFIG


@pytest.mark.parametrize("shape_a,shape_b", [((2, 3, 7, 48), (1, 3, 48, 10)), ((1, 3, 40, 64), (2, 1, 64, 8)),
                                             ((1, 7, 48), (2, 48, 10))])
def test_matmul_refuses_batch_broadcast(ttnn, device, shape_a, shape_b):
    """Real ttnn: 'bmm (non-bcast matmul) expects ... batch dimension 0 mismatch: a=2 vs b=1'."""
    a, b = dev(ttnn, device, torch.randn(shape_a)), dev(ttnn, device, torch.randn(shape_b))
    with pytest.raises(RuntimeError, match="non-bcast matmul.*batch dimension 0 mismatch"):
        ttnn.matmul(a, b)


def test_matmul_fp32_is_exact_fp32(ttnn, device):
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    got = ttnn.to_torch(ttnn.matmul(dev(ttnn, device, a, ttnn.float32), dev(ttnn, device, b, ttnn.float32)))
    assert got.dtype is torch.float32 and torch.allclose(got, a @ b, atol=1e-5)


def test_matmul_transposes_and_output_dtype(ttnn, device):
    a, b = torch.randn(64, 40), torch.randn(50, 64)
    out = ttnn.matmul(dev(ttnn, device, a), dev(ttnn, device, b), transpose_a=True, transpose_b=True,
                      dtype=ttnn.float32, memory_config=ttnn.L1_MEMORY_CONFIG)
    ref = a.to(torch.bfloat16).float().T @ b.to(torch.bfloat16).float().T
    assert out.dtype is ttnn.float32 and out.memory_config() == ttnn.L1_MEMORY_CONFIG
    assert torch.allclose(ttnn.to_torch(out), ref, atol=1e-4)


@pytest.mark.parametrize("bias_shape", [(96,), (1, 96)])
@pytest.mark.parametrize("activation,fn", [(None, lambda x: x), ("relu", torch.relu), ("gelu", F.gelu),
                                           ("silu", F.silu), ("sigmoid", torch.sigmoid)])
def test_linear_bias_and_activation(ttnn, device, gemm_path, bias_shape, activation, fn):
    torch.manual_seed(5)
    x, w, b = torch.randn(1, 50, 64), torch.randn(64, 96), torch.randn(bias_shape)
    out = ttnn.linear(dev(ttnn, device, x), dev(ttnn, device, w), bias=dev(ttnn, device, b), activation=activation)
    r = lambda t: t.to(torch.bfloat16).float()  # noqa: E731
    ref = fn(r(x) @ r(w) + r(b).reshape(96))
    got = ttnn.to_torch(out).float()
    assert tuple(got.shape) == (1, 50, 96)
    assert torch.allclose(got, ref, rtol=2 ** -7, atol=2 ** -7)  # bf16 result of the fp32 computation
    assert torch.equal(got.to(torch.bfloat16).float(), got)


def test_linear_with_bfloat8_b_weights(ttnn, device):
    x, w = torch.randn(1, 64, 128), torch.randn(128, 64)
    w8 = dev(ttnn, device, w, ttnn.bfloat8_b)
    out = ttnn.to_torch(ttnn.linear(dev(ttnn, device, x), w8)).float()
    ref = x.to(torch.bfloat16).float() @ ttnn.to_torch(w8)
    assert within_one_bf16_ulp(out, ref)
    plain = x.to(torch.bfloat16).float() @ w.to(torch.bfloat16).float()
    assert (out - plain).abs().max() > (out - ref).abs().max()  # the bfp8 weight rounding is visible


def test_matmul_validation(ttnn, device):
    a = dev(ttnn, device, torch.randn(64, 128))
    with pytest.raises(RuntimeError, match="The width of the first tensor must be equal to the height of the "
                                           "second tensor. Mismatch: width=128 height=64"):
        ttnn.matmul(a, a)
    rm = dev(ttnn, device, torch.randn(128, 64), layout=ttnn.ROW_MAJOR_LAYOUT)
    with pytest.raises(RuntimeError, match="TILE layout"):
        ttnn.matmul(a, rm)
    with pytest.raises(RuntimeError, match="must be on device"):
        ttnn.matmul(a, ttnn.from_torch(torch.randn(128, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT))
    with pytest.raises(RuntimeError, match="bias of shape"):
        ttnn.linear(a, dev(ttnn, device, torch.randn(128, 64)), bias=dev(ttnn, device, torch.randn(32)))
    with pytest.raises(RuntimeError, match="unknown activation"):
        ttnn.linear(a, dev(ttnn, device, torch.randn(128, 64)), activation="swish9")


def _height_sharded(ttnn, rows: int, grid_x: int, grid_y: int, width: int = 32):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid_x - 1, grid_y - 1))})
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
                             ttnn.ShardSpec(grid, [rows * 32, width], ttnn.ShardOrientation.ROW_MAJOR))


@pytest.mark.parametrize("rows, grid, accepted", [
    (3, (4, 1), True),  # one batch (3 tile rows) per shard, no idle core
    (1, (8, 2), False),  # 12 shards on 16 cores: "num_output_blocks (12) must be evenly divisible ... (16)"
    (2, (6, 1), False),  # shards cut batches: "per_core_M, 2, must divide M, 3"
    (6, (2, 1), False),  # two batches per shard
])
def test_height_sharded_a_against_a_batched_b_takes_whole_batches(ttnn, device, rows, grid, accepted):
    # tools/ttnn_mock/probes/results/matmul_sharded.txt: wav2vec2's attention scores on the real library
    a = ttnn.from_torch(torch.randn(1, 4, 79, 16), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                        memory_config=_height_sharded(ttnn, rows, *grid))
    b = ttnn.from_torch(torch.randn(1, 4, 16, 96), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                        memory_config=ttnn.L1_MEMORY_CONFIG)
    weight = ttnn.from_torch(torch.randn(16, 96), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    assert ttnn.matmul(a, weight).shape == (1, 4, 79, 96)  # an unbatched b takes any grid
    if accepted:
        assert ttnn.matmul(a, b, memory_config=ttnn.L1_MEMORY_CONFIG).shape == (1, 4, 79, 96)
    else:
        with pytest.raises(RuntimeError, match="MatmulMultiCoreReuseProgramConfig"):
            ttnn.matmul(a, b, memory_config=ttnn.L1_MEMORY_CONFIG)
