"""ir/placements.py: the height-shard layouts the auto planner emits (probed on real ttnn: probe_moves.py)."""
from __future__ import annotations

from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.ir.placements import height_shard_layout, shard_count


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
