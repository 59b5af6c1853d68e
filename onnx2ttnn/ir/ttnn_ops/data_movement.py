"""Op table entries: data movement (reshape, permute, concat, slice, split, expand, repeat, pad) and embedding.

Ops that only move data keep an integer input's dtype (Dtype.FOLLOWS_INTEGER_INPUT) where the compiler relies
on it.  Sharding (probe_sharding.py, results/sharding.txt): a reshape to the same padded 2-D shape is a view
that keeps its input's shard spec (copies are not sharded); permute reads a height-sharded input into an
interleaved output.
"""
from __future__ import annotations

from onnx2ttnn.ir.ttnn_ops.facts import Dtype, InDtype, Page, ShardFacts, declare

_MOVES = dict(input_layouts=(Page.ANY,), output_page=Page.SAME)

declare("reshape", **_MOVES, view=True, output_dtype=Dtype.FOLLOWS_INTEGER_INPUT,
        height=ShardFacts((0,), False, "reshape_view"))
declare("permute", **_MOVES, output_dtype=Dtype.FOLLOWS_INTEGER_INPUT,
        height=ShardFacts((0,), False, "permute", same_shape_inputs=False))
declare("concat", ("tensors",), variadic_input=True, input_layouts=(Page.SAME,), output_page=Page.SAME,
        output_dtype=Dtype.FOLLOWS_INTEGER_INPUT)
declare("slice", **_MOVES, positional_attrs=("slice_start", "slice_end", "slice_step"),
        output_dtype=Dtype.FOLLOWS_INTEGER_INPUT)
declare("split", **_MOVES)
declare("expand", **_MOVES)
declare("repeat", **_MOVES)
# a rule may pin ROW_MAJOR for its input (node `_input_layouts`): padding the front of a TILE tensor on the
# device is not supported (lowering/pad.py)
declare("pad", **_MOVES)
# indices are uint32 ROW_MAJOR; a float table gives TILE rows, an integer one ROW_MAJOR rows
declare("embedding", ("input_tensor", "weight"), input_layouts=(Page.ROW_MAJOR, Page.ROW_MAJOR),
        input_dtypes=(InDtype.INDICES,), output_page=Page.TILE, integer_page=Page.ROW_MAJOR,
        layout_arguments=("layout",))
