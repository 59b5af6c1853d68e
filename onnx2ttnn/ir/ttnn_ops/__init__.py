"""The ttnn op table: one entry (OpInfo) per ttnn operation the compiler emits, holding every fact the passes,
the memory planner, the cost model and the emitter use about it: the arguments it takes, the page layouts and
dtypes it accepts per input, what it writes (page, dtype, buffer), which shardings it accepts and how (with
the probe that proved it), whether its output may be a view of its input, its cost class and vector FLOPs, and
its own L1 needs where measured, and the keyword taking its compute kernel config.

Adding a ttnn op is one `declare(...)` in the family module it belongs to plus the lowering rule that emits it.
Modules that keep lists of op names (ir/placements.py HEIGHT_SHARDING, ir/cost.py CONV_OPS, ...) hold derived
views of this table (OpNames, OpFacts), never facts of their own.  Every name and parameter here is checked
against the real ttnn 0.81.1 API manifest (tests/ir/test_ttnn_ops.py), so this table is the one place where
ttnn signatures enter the compiler.
"""
from onnx2ttnn.ir.ttnn_ops.facts import (HEIGHT_PROBE, HOST_OPS, INTEGER_PROBE, KERNEL_CONFIG_KEYWORDS,
                                         KERNEL_CONFIG_PROBE, OPS, WIDTH_PROBE, Cost, Dtype, Float32Result, InDtype,
                                         OpFacts, OpInfo, OpNames, Page, ShardFacts, Writes, declare,
                                         node_input_layout, op_info)
# the entries, by family (each module declares its ops when imported)
from onnx2ttnn.ir.ttnn_ops.conversions import HOST_COMPUTE, HOST_OUTPUT, HOST_REGION
from onnx2ttnn.ir.ttnn_ops import ccl, data_movement, eltwise, nn, transformer  # noqa: F401,E402
from onnx2ttnn.ir.ttnn_ops.conv_pool import CONV_SCRATCH_EXTRA

__all__ = ["CONV_SCRATCH_EXTRA", "HEIGHT_PROBE", "HOST_COMPUTE", "HOST_OPS", "HOST_OUTPUT", "HOST_REGION",
           "INTEGER_PROBE", "KERNEL_CONFIG_KEYWORDS", "KERNEL_CONFIG_PROBE", "OPS", "WIDTH_PROBE", "Cost", "Dtype",
           "Float32Result", "InDtype", "OpFacts", "OpInfo", "OpNames", "Page", "ShardFacts", "Writes", "declare",
           "node_input_layout", "op_info"]
