"""Op table entries: data movement (reshape, permute, concat, slice, split, expand, repeat, pad) and embedding.

Ops that only move data keep an integer input's dtype (Dtype.FOLLOWS_INTEGER_INPUT) where the compiler relies
on it.  Sharding (probe_sharding.py, results/sharding.txt): a reshape to the same padded 2-D shape is a view
that keeps its input's shard spec (copies are not sharded); permute reads a height-sharded input into an
interleaved output.  reshape, permute, concat, slice, expand and repeat move int32 tensors in TILE and
ROW_MAJOR and return int32 (probe_integers.py, results/integers.txt); embedding takes uint32 indices only
("Input must be UINT32 or BFLOAT16") and a BFLOAT16 table only ("Weights tensor must have BFLOAT16 dtype").
"""
from __future__ import annotations

from onnx2ttnn.ir.ttnn_ops.facts import Dtype, InDtype, Page, ShardFacts, declare

_MOVES = dict(input_layouts=(Page.ANY,), output_page=Page.SAME)
_INT = dict(integer_inputs=(0,))  # moves int32 values unchanged (probe_integers.py)

declare("reshape", **_MOVES, **_INT, view=True, output_dtype=Dtype.FOLLOWS_INTEGER_INPUT,
        height=ShardFacts((0,), False, "reshape_view"))
declare("permute", **_MOVES, **_INT, output_dtype=Dtype.FOLLOWS_INTEGER_INPUT,
        height=ShardFacts((0,), False, "permute", same_shape_inputs=False))
declare("concat", ("tensors",), variadic_input=True, **_INT, input_layouts=(Page.SAME,), output_page=Page.SAME,
        output_dtype=Dtype.FOLLOWS_INTEGER_INPUT)
declare("slice", **_MOVES, **_INT, positional_attrs=("slice_start", "slice_end", "slice_step"),
        output_dtype=Dtype.FOLLOWS_INTEGER_INPUT)
declare("split", **_MOVES)
declare("expand", **_MOVES, **_INT, output_dtype=Dtype.FOLLOWS_INTEGER_INPUT)
declare("repeat", **_MOVES, **_INT, output_dtype=Dtype.FOLLOWS_INTEGER_INPUT)
# a rule may pin ROW_MAJOR for its input (node `_input_layouts`): padding the front of a TILE tensor on the
# device is not supported (lowering/pad.py).  ROW_MAJOR, its circular buffers take about 19 output rows at the
# bottom of L1 (docs/ttnn-facts.md §49: 165,392 B per bank for a 4,350-element bf16 row, 632,659 B for 16,638;
# basic-pitch's 44,098-element float32 row needed 1,058,915 B, and real ttnn refused its launch beside an L1 tensor)
declare("pad", **_MOVES, row_buffer_rows=19)
# indices are uint32 ROW_MAJOR; a float table gives TILE rows, an integer one ROW_MAJOR rows; a TILE table (a
# bfloat8_b one) is copied whole into a temporary of its bf16 size in its own memory at every call (ttnn-facts §32)
# l1_reserve: its circular buffers end 204,256 B into L1 (the mock n300, BERT-base tensor parallel with its
# L1-resident weights: "Statically allocated dataflow buffers ... clash with L1 buffers ... static dataflow buffer
# region ends at 204256", tensors planned to 963,840 B per bank reached down to 150,272, and to 912,640 B down to
# 201,472: tensors may fill 909,856 B per bank there, 70,545 B less than the planner's budget); 80 KiB covers it
# (docs/ttnn-facts.md §27)
declare("embedding", ("input_tensor", "weight"), input_layouts=(Page.ROW_MAJOR, Page.ROW_MAJOR),
        input_dtypes=(InDtype.INDICES,), integer_inputs=(0,), output_page=Page.TILE, integer_page=Page.ROW_MAJOR,
        layout_arguments=("layout",), copied_tile_inputs=(1,), l1_reserve=80 * 1024)
