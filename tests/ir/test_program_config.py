"""ir/program_config.choose: the program config of a matmul / linear from its shapes and input_tensor_a's
placement (the kinds and fields real ttnn accepted: tools/ttnn_mock/probes/results/program_configs.txt)."""
from __future__ import annotations

import pytest

from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.ir.placements import height_shard_layout, width_shard_layout
from onnx2ttnn.memory.budget import OP_SCRATCH_RESERVE as RESERVE
from onnx2ttnn.ir.program_config import (DEST_TILES, DEST_TILES_FP32, MCAST_1D, REUSE, ProgramConfig, choose,
                                         circular_buffer_bytes, subblock)


def _height(shape, max_cores=None):
    return height_shard_layout(shape, TTNNLayout(), 8, 8, max_cores=max_cores)


def test_a_height_sharded_activation_against_a_weight_takes_the_1d_config_multicasting_the_weight():
    config = choose((1, 1, 2048, 64), _height((1, 1, 2048, 64)), (64, 96), fp32_dest=True, l1_limit=RESERVE)
    assert config == ProgramConfig(MCAST_1D, (8, 8), in0_block_w=2, out_subblock_h=1, out_subblock_w=3,
                                   per_core_M=1, per_core_N=3, mcast_in0=False, fuse_batch=True)
    wider = choose((1, 1, 512, 64), _height((1, 1, 512, 64)), (64, 256), fp32_dest=False, l1_limit=RESERVE)
    assert (wider.out_subblock_h, wider.out_subblock_w) == (1, 8)  # a Float16_b dest holds 8 tiles


def test_in0_block_w_is_the_widest_whose_circular_buffers_fit_the_reserve():
    layout = _height((1, 128, 768))
    config = choose((1, 128, 768), layout, (768, 768), fp32_dest=True, l1_limit=RESERVE)
    assert config.per_core_N == 24 and 24 % config.in0_block_w == 0
    assert circular_buffer_bytes(1, 24, config.in0_block_w, 24, 2048) <= RESERVE
    wider = next(w for w in range(config.in0_block_w + 1, 25) if 24 % w == 0)
    assert circular_buffer_bytes(1, 24, wider, 24, 2048) > RESERVE
    assert choose((1, 128, 768), layout, (768, 768), True, l1_limit=10 ** 7).in0_block_w == 24
    # BERT-base's FFN up-projection: real ttnn asked 5.4 MB at the full K; even in0_block_w=1 is over the reserve
    declined = choose((1, 128, 768), layout, (768, 3072), fp32_dest=True, l1_limit=RESERVE)
    assert isinstance(declined, str) and "exceed the L1 kept free" in declined


def test_uneven_height_shards_keep_the_shard_height_as_per_core_m():
    layout = _height((1, 1, 3136, 64))  # 98 tile rows: 2 per core on 8x7, the last core 1 row short... or none
    config = choose((1, 1, 3136, 64), layout, (64, 256), fp32_dest=False, l1_limit=RESERVE)
    assert config.grid == layout.grid and config.per_core_M == layout.shard[0] // 32 == 2
    assert (config.per_core_N, config.in0_block_w) == (8, 2)


def test_attention_with_one_batch_per_shard_takes_the_reuse_config():
    config = choose((1, 4, 17, 16), _height((1, 4, 17, 16)), (1, 4, 16, 17), fp32_dest=True, l1_limit=RESERVE)
    assert config == ProgramConfig(REUSE, (4, 1), 1, 1, 1, 1, 1)
    eight = choose((1, 8, 128, 64), _height((1, 8, 128, 64), max_cores=8), (1, 8, 64, 128), fp32_dest=True,
                   l1_limit=RESERVE)
    assert (eight.kind, eight.grid, eight.per_core_M, eight.per_core_N, eight.in0_block_w) == (REUSE, (8, 1), 4, 4, 2)
    assert eight.out_subblock_h * eight.out_subblock_w == 4


def test_a_width_sharded_activation_multicasts_itself_and_splits_n_over_its_grid():
    shape = (1, 64, 256)
    config = choose(shape, width_shard_layout(shape, TTNNLayout(), 8, 8), (256, 512), fp32_dest=False, l1_limit=RESERVE)
    assert config == ProgramConfig(MCAST_1D, (8, 1), in0_block_w=1, out_subblock_h=2, out_subblock_w=2,
                                   per_core_M=2, per_core_N=2, mcast_in0=True, fuse_batch=True)


@pytest.mark.parametrize("a_shape, layout, b_shape, reason", [
    ((1, 128, 768), TTNNLayout(buffer="l1"), (768, 768), "not height- or width-sharded"),
    ((1, 8, 64, 32), None, (1, 8, 32, 64), "not height- or width-sharded"),
    ((1, 8, 64, 32), "height", (1, 8, 32, 64), "exactly one batch"),  # 16 rows on 16 cores: 1 row each
    ((1, 64, 256), "width", (256, 320), "does not split evenly"),  # 10 tile columns over 8 cores
    ((2, 64, 256), "width", (2, 256, 512), "batched"),
])
def test_calls_without_a_config_say_why(a_shape, layout, b_shape, reason):
    if layout == "height":
        layout = _height(a_shape)
    elif layout == "width":
        layout = width_shard_layout(a_shape, TTNNLayout(), 8, 8)
    got = choose(a_shape, layout, b_shape, fp32_dest=True, l1_limit=RESERVE)
    assert isinstance(got, str) and reason in got


@pytest.mark.parametrize("m, n", [(1, 1), (1, 3), (2, 8), (4, 96), (7, 5), (6, 6), (12, 24), (3, 1)])
@pytest.mark.parametrize("dest", [DEST_TILES, DEST_TILES_FP32])
def test_the_subblock_is_the_largest_that_divides_the_block_and_fits_the_register(m, n, dest):
    h, w = subblock(m, n, dest)
    assert m % h == 0 and n % w == 0 and h * w <= dest
    best = max(a * b for a in range(1, m + 1) for b in range(1, n + 1) if m % a == 0 and n % b == 0 and a * b <= dest)
    assert h * w == best


def test_the_program_writes_the_constructor_it_was_probed_with():
    config = ProgramConfig(MCAST_1D, (8, 2), 2, 1, 3, 1, 3, mcast_in0=False, fuse_batch=True)
    assert repr(config) == ("ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(compute_with_storage_grid_size="
                            "ttnn.CoreCoord(8, 2), in0_block_w=2, out_subblock_h=1, out_subblock_w=3, per_core_M=1, "
                            "per_core_N=3, fuse_batch=True, mcast_in0=False)")
    with pytest.raises(ValueError, match="belong to"):
        ProgramConfig(REUSE, (4, 1), 1, 1, 1, 1, 1, mcast_in0=True, fuse_batch=True)
