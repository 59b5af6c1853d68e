"""onnx2ttnn: convert ONNX models into standalone Python programs that run on Tenstorrent devices via ttnn.

    from onnx2ttnn import convert
    result = convert("model.onnx", memory="l1")
    result.write("model_ttnn.py")          # also writes model_ttnn.npz
"""
from __future__ import annotations

__version__ = "0.1.0"

from onnx2ttnn.convert import Conversion, convert  # noqa: E402,F401

from onnx2ttnn.verify import VerifyReport, verify  # noqa: E402,F401  (binds the function over the module)
