"""Host fallbacks: ONNX ops with no ttnn lowering, computed with torch on the host by the generated program.

One module of rules per op family (no torch here), registered through this explicit import list; the
torch helpers they name live in host/<family>.py and are copied into programs that use them.
"""
from onnx2ttnn.fallback import arith, indexing, losses, nn, sorting, spatial  # noqa: F401
from onnx2ttnn.fallback import slicing  # noqa: F401
from onnx2ttnn.fallback import conv  # noqa: F401  (3-D Conv, ConvTranspose)
from onnx2ttnn.fallback import recurrent  # noqa: F401  (LSTM, GRU, RNN variants the device rule declines)
from onnx2ttnn.fallback.lower import lower_with_fallback  # noqa: F401
from onnx2ttnn.fallback.registry import (all_fallbacks, fallback, fallback_op_types, fallback_versions,  # noqa: F401
                                         lookup_fallback)
