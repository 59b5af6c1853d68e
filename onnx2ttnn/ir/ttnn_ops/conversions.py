"""Op table entries: host <-> device transfers, page-layout / dtype / placement conversions, deallocation, and
the host-side steps of host fallbacks (HOST_OPS: torch code in the generated program, not ttnn calls).

Sharding facts (probe_sharding.py, results/sharding.txt; probe_width.py, results/width.txt): to_memory_config
converts interleaved <-> height- or width-sharded both ways; to_torch and deallocate take sharded tensors;
from_torch can upload straight into a sharded layout (the planner does not shard uploads).  typecast converts a
height-sharded input only into a height-sharded output and an interleaved one only into an interleaved one
("Typecast operation requires Input and Output memory layout to match", zoo RoBERTa on the mock), a coupling
ShardFacts cannot state: it is kept interleaved (inputs=(), output=False; the probe checks both refusals).
Every conversion takes int32 tensors (probe_integers.py, results/integers.txt: from_torch of int64/int32 into
int32 TILE or ROW_MAJOR, to_torch gives torch.int32, typecast int32 <-> bfloat16/float32/uint32, to_layout).
"""
from __future__ import annotations

from onnx2ttnn.ir.ttnn_ops.facts import Cost, Page, ShardFacts, declare

# sharded on either side: converts, reads or frees a sharded tensor whatever its shape
_PASSES_SHARDS = dict(same_shape_inputs=False)
_INTEGERS = dict(integer_inputs=(0,))  # any dtype passes through a conversion

declare("from_torch", ("tensor",), **_INTEGERS, input_layouts=(Page.HOST,), output_page=Page.CHOSEN,
        layout_arguments=("dtype", "layout", "device"),
        height=ShardFacts((), True, "from_torch"), width=ShardFacts((), True, "from_torch"))
declare("to_torch", ("tensor",), **_INTEGERS, input_layouts=(Page.ANY,), output_page=Page.HOST, memory_config=False,
        height=ShardFacts((0,), False, "to_torch", **_PASSES_SHARDS),
        width=ShardFacts((0,), False, "to_torch", **_PASSES_SHARDS))
declare("to_layout", ("tensor",), **_INTEGERS, input_layouts=(Page.ANY,), output_page=Page.CHOSEN, layout_arguments=("layout",),
        cost=Cost.CONVERSION)
declare("typecast", ("input_tensor",), **_INTEGERS, input_layouts=(Page.ANY,), output_page=Page.SAME, layout_arguments=("dtype",),
        cost=Cost.CONVERSION, height=ShardFacts((), False, "typecast"))
declare("to_memory_config", ("tensor",), **_INTEGERS, input_layouts=(Page.ANY,), output_page=Page.SAME, cost=Cost.CONVERSION,
        height=ShardFacts((0,), True, "to_memory_config", **_PASSES_SHARDS),
        width=ShardFacts((0,), True, "to_memory_config", **_PASSES_SHARDS))
declare("deallocate", ("tensor",), **_INTEGERS, input_layouts=(Page.ANY,), output_page=Page.NONE, memory_config=False,
        cost=Cost.FREE, height=ShardFacts((0,), False, "deallocate", **_PASSES_SHARDS),
        width=ShardFacts((0,), False, "deallocate", **_PASSES_SHARDS))

# --- host fallback (onnx2ttnn/fallback) ----------------------------------------------------------------------
# Not ttnn calls: a torch helper of the generated program, reading and writing host torch tensors (its inputs
# come from to_torch or the program's arguments; from_torch uploads what ttnn ops read).
HOST_COMPUTE = "host_compute"
HOST_OUTPUT = "host_output"  # a graph output a host fallback computed: returned as is, in its ONNX dtype
declare(HOST_COMPUTE, ("tensors",), **_INTEGERS, host=True, variadic_input=True, input_layouts=(Page.HOST,),
        output_page=Page.HOST, memory_config=False, cost=Cost.FREE)
# a host region (fallback/regions.py): ONNX nodes onnxruntime runs, its session opened by load_parameters
HOST_REGION = "host_region"
declare(HOST_REGION, ("tensors",), host=True, variadic_input=True, input_layouts=(Page.HOST,),
        output_page=Page.HOST, memory_config=False, cost=Cost.FREE)
# the cost model counts host_output's host input as a DRAM read, as it always has (only the report's totals
# see it: no device buffer is involved)
declare(HOST_OUTPUT, ("tensor",), **_INTEGERS, host=True, input_layouts=(Page.HOST,), output_page=Page.HOST, memory_config=False)
