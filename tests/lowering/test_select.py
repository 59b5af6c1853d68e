"""TopK and CumSum (lowering/select.py) against onnxruntime on the simulator (fp32)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from onnx2ttnn.verify import verify
from tests.lowering._nodes import model

TOPK_OUT = dict(outputs=("v", "i"), out_types=[TensorProto.FLOAT, TensorProto.INT64])
CASES = {
    "topk-largest-axis1": model("TopK", {"x": [3, 6]}, [np.array([2])], {"axis": 1}, opset=11, **TOPK_OUT),
    "topk-smallest-axis0": model("TopK", {"x": [5, 4]}, [np.array([3])], {"axis": 0, "largest": 0}, opset=11,
                                 **TOPK_OUT),
    "cumsum-axis1": model("CumSum", {"x": [3, 5]}, [np.array(1)], opset=14),
    "cumsum-exclusive": model("CumSum", {"x": [3, 5]}, [np.array(1)], {"exclusive": 1}, opset=14),
    "cumsum-reverse-exclusive": model("CumSum", {"x": [4, 3]}, [np.array(0)], {"exclusive": 1, "reverse": 1},
                                      opset=14),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_select_matches_onnxruntime(name):
    report = verify(CASES[name], dtype="fp32")
    assert report.passed, report.text()


def test_topk_ties_come_lowest_index_first():
    x = np.array([[2.0, 1.0, 2.0, 2.0]], np.float32)
    m = model("TopK", {"x": [1, 4]}, [np.array([2])], {"axis": 1}, opset=11, **TOPK_OUT)
    report = verify(m, inputs={"x": x}, dtype="fp32")
    assert report.passed, report.text()
