"""ir/placements.py: the height-shard layouts the auto planner emits (probed on real ttnn: probe_moves.py) and the
op facts it obeys (probe_sharding.py, probe_width.py, probe_matmul_sharded.py, probe_conv_l1_out.py)."""
from __future__ import annotations

from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.ir.placements import (HEIGHT_SHARDING, WIDTH_SHARDING, conv_all_in_l1, conv_reads_height_sharded,
                                     height_shard_layout, matmul_reads_height_sharded, shard_count,
                                     width_shard_layout)


def test_even_split_uses_every_core():
    layout = height_shard_layout((1, 1, 2048, 64), TTNNLayout(), 8, 8)
    assert (layout.grid, layout.shard) == ((8, 8), (32, 64))
    assert shard_count((1, 1, 2048, 64), layout) == 64


def test_uneven_split_leaves_the_last_grid_cores_empty():
    # ResNet-50 56x56x256: 98 tile rows -> 49 shards of 2 rows on the smallest whole-row grid (8x7)
    layout = height_shard_layout((1, 1, 3136, 256), TTNNLayout(), 8, 8)
    assert (layout.grid, layout.shard) == ((8, 7), (64, 256))
    assert shard_count((1, 1, 3136, 256), layout) == 49


def test_padded_rows_count_and_small_tensors_take_one_row_of_cores():
    # 784 rows pad to 800 = 25 tile rows -> 25 shards of one row on 8x4; 49 rows pad to 64 -> 2 cores
    assert height_shard_layout((1, 1, 784, 32), TTNNLayout(), 8, 8).grid == (8, 4)
    small = height_shard_layout((1, 1, 49, 2048), TTNNLayout(), 8, 8)
    assert (small.grid, small.shard) == ((2, 1), (32, 2048))


def test_max_cores_bounds_the_grid_and_row_major_is_never_sharded():
    assert height_shard_layout((1, 1, 256, 64), TTNNLayout(), 8, 8, max_cores=4).shard == (64, 64)
    assert height_shard_layout((1, 1, 256, 64), TTNNLayout(page="row_major"), 8, 8) is None


def test_matmul_takes_any_shard_grid_against_a_weight_and_whole_batches_against_activations():
    # tools/ttnn_mock/probes/results/matmul_sharded.txt
    shape = (1, 4, 79, 16)  # 4 batches of 3 tile rows
    base = TTNNLayout()
    on16 = height_shard_layout(shape, base, 8, 8)  # 12 shards of one row on an 8x2 grid
    assert on16.grid == (8, 2) and on16.shard == (32, 32)
    assert matmul_reads_height_sharded(shape, on16, b_batched=False)
    assert not matmul_reads_height_sharded(shape, on16, b_batched=True)
    per_batch = base.with_(buffer="l1", memory_layout="height_sharded", grid=(4, 1), shard=(96, 32))
    assert matmul_reads_height_sharded(shape, per_batch, b_batched=True)
    two_batches = base.with_(buffer="l1", memory_layout="height_sharded", grid=(2, 1), shard=(192, 32))
    assert not matmul_reads_height_sharded(shape, two_batches, b_batched=True)


def test_convs_take_the_all_in_l1_path_up_to_7x7_and_a_measured_input_window():
    # tools/ttnn_mock/probes/results/conv_cb.txt
    assert conv_all_in_l1({"kernel_size": (7, 7)}, 12544)  # ResNet-50's stem (RM input, 12544 B/bank)
    assert not conv_all_in_l1({"kernel_size": (16, 16)}, 1024)  # ViT-B/16's patch conv
    assert conv_all_in_l1({"kernel_size": (3, 3)}, 45056)  # 3x3 over 64 channels at 150x150: needs 458 KiB
    assert not conv_all_in_l1({"kernel_size": (3, 3)}, 180224)  # EfficientNet's dw 3x3 at 300x300: never fits
    assert conv_reads_height_sharded({"kernel_size": (3, 3), "groups": 96, "in_channels": 96, "out_channels": 96})
    assert not conv_reads_height_sharded({"kernel_size": (7, 7), "groups": 96, "in_channels": 96,
                                          "out_channels": 96})  # ConvNeXt's depthwise 7x7
    assert HEIGHT_SHARDING["typecast"].inputs == () and not HEIGHT_SHARDING["typecast"].output


def test_width_shards_take_whole_tile_columns_on_grids_with_no_idle_core():
    # tools/ttnn_mock/probes/results/width.txt: every eltwise op takes these layouts
    base = TTNNLayout()
    wide = width_shard_layout((1, 1, 64, 2048), base, 8, 8)  # 64 tile columns: one per core
    assert (wide.memory_layout, wide.grid, wide.shard) == ("width_sharded", (8, 8), (64, 32))
    odd = width_shard_layout((1, 1, 32, 320), base, 8, 8)  # 10 columns: 5 cores of 2, not 8 + 2
    assert (odd.grid, odd.shard) == ((5, 1), (32, 64))
    assert width_shard_layout((1, 1, 32, 320), base.with_(page="row_major"), 8, 8) is None
    assert set(WIDTH_SHARDING) >= {"relu", "add", "to_memory_config", "to_torch", "deallocate"}
    assert "matmul" not in WIDTH_SHARDING and "conv2d" not in WIDTH_SHARDING
