"""ONNX -> ttnn lowering rules, one module per op family, registered through this explicit import list."""
from onnx2ttnn.lowering import conv, eltwise, matmul, misc, norm, pool, reduce, shape_ops, tensor_ops  # noqa: F401
from onnx2ttnn.lowering import activations  # noqa: F401  (parametrised activations, after eltwise)
from onnx2ttnn.lowering import select  # noqa: F401  (TopK, CumSum)
from onnx2ttnn.lowering import dropout, resize  # noqa: F401  (Dropout, Resize/Upsample)
from onnx2ttnn.lowering import pad  # noqa: F401  (Pad)
from onnx2ttnn.lowering import attention  # noqa: F401  (the fused Attention)
from onnx2ttnn.lowering import control_flow  # noqa: F401  (If, Loop, Scan: declined when not rewritten)
from onnx2ttnn.lowering import recurrent  # noqa: F401  (LSTM, GRU, RNN)
from onnx2ttnn.lowering.registry import all_rules, lookup, lowering_versions, register  # noqa: F401
from onnx2ttnn.lowering import quantize, quantize_operators  # noqa: F401  (QDQ, operator format: after matmul/conv)
from onnx2ttnn.lowering import coded_matmul  # noqa: F401  (the fused CodedMatMul: after quantize_operators)
from onnx2ttnn.lowering import quantize_contrib  # noqa: F401  (com.microsoft QLinearAdd, QLinearMul, MatMulNBits)
