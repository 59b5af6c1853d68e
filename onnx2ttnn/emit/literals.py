"""Python source text for the values a generated program's calls take: argument literals (numbers, strings,
sequences, ttnn references), memory configs (docs/design.md §4.3) and torch dtypes.  ONNX names reach the program
only through `ascii()` string literals."""
from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import VerificationError
from onnx2ttnn.ir.dtypes import TORCH_DTYPES
from onnx2ttnn.ir.layout import MemoryConfig


def literal(value) -> str:
    """Python source for an argument value (numbers, strings, sequences, ttnn refs, memory configs)."""
    if isinstance(value, MemoryConfig):
        return memory_config_source(value)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else '-float("inf")'
        return repr(value)
    if isinstance(value, (int, np.integer)):
        return repr(int(value))
    if isinstance(value, np.floating):
        return literal(float(value))
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if type(value) is str:
        return ascii(value)
    return repr(value)  # TTNNRef, TTNNCall, DeviceArg render themselves


def memory_config_source(mc: MemoryConfig) -> str:
    if mc.memory_layout == "interleaved":
        return "ttnn.DRAM_MEMORY_CONFIG" if mc.buffer == "dram" else "ttnn.L1_MEMORY_CONFIG"
    gx, gy = mc.grid
    grid = f"ttnn.CoreRangeSet({{ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord({gx - 1}, {gy - 1}))}})"
    spec = f"ttnn.ShardSpec({grid}, [{mc.shard[0]}, {mc.shard[1]}], ttnn.ShardOrientation.ROW_MAJOR)"
    return (f"ttnn.MemoryConfig(ttnn.TensorMemoryLayout.{mc.memory_layout.upper()}, "
            f"ttnn.BufferType.{mc.buffer.upper()}, {spec})")


def torch_dtype(node: gs.Node, dtype) -> str:
    """`torch.<dtype>` for a torch dtype name lowering chose (ir/dtypes.py); any other value is a compiler bug."""
    if dtype not in TORCH_DTYPES:
        raise VerificationError(f"internal error: ttnn.{node.op} (from {node.attrs.get('_source', '')!r}) names "
                                f"host dtype {dtype!r}, which is not a torch dtype (ir/dtypes.TORCH_DTYPES)")
    return f"torch.{dtype}"
