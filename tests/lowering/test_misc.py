"""Cast (onnx2ttnn/lowering/misc.py)."""
from __future__ import annotations

import numpy as np
import torch
from onnx import TensorProto

from tests.program_run import one_node, run


def test_cast_float_to_bfloat16_keeps_the_values_and_returns_bfloat16():
    m = one_node("Cast", {"x": (TensorProto.FLOAT, [2, 3])}, {"y": (TensorProto.BFLOAT16, [2, 3])},
                 attrs={"to": TensorProto.BFLOAT16}, opset=21)
    x = np.array([[0.4785, 1.0, -2.5], [3.14159, np.inf, -np.inf]], np.float32)
    outputs, leaks, source = run(m, {"x": x})
    assert leaks == [] and "ttnn.typecast(" not in source
    assert outputs["y"].dtype == torch.bfloat16
    assert torch.equal(outputs["y"], torch.from_numpy(x).to(torch.bfloat16))
