"""ONNX -> ttnn lowering rules, one module per op family, registered through this explicit import list."""
from onnx2ttnn.lowering import conv, eltwise, matmul, misc, norm, pool, reduce, shape_ops, tensor_ops  # noqa: F401
# NN op families block
from onnx2ttnn.lowering import select  # noqa: F401
# resize / LRN block
from onnx2ttnn.lowering import dropout, resize  # noqa: F401
from onnx2ttnn.lowering.registry import all_rules, lookup, register  # noqa: F401
