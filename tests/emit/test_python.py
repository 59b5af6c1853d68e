"""The Python emitter (onnx2ttnn/emit/python.py): uploads, downloads and output dtypes of generated programs,
run on the simulator with a leak check."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from tests.program_run import one_node, run


def test_rank0_inputs_are_uploaded_as_their_device_shape_and_freed():
    m = one_node("Clip", {"x": (TensorProto.FLOAT, [3, 4]), "lo": (TensorProto.FLOAT, []),
                          "hi": (TensorProto.FLOAT, [])}, {"y": (TensorProto.FLOAT, [3, 4])})
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    feeds = {"x": x, "lo": np.array(-0.5, np.float32), "hi": np.array(1.0, np.float32)}
    outputs, leaks, source = run(m, feeds)
    assert leaks == []
    assert "ttnn.from_torch(lo.reshape((1,))" in source
    np.testing.assert_array_equal(outputs["y"].numpy(), np.clip(x, -0.5, 1.0))


def test_unsigned_outputs_keep_their_onnx_dtype():
    m = one_node("Add", {"a": (TensorProto.UINT32, [4]), "b": (TensorProto.UINT32, [4])},
                 {"y": (TensorProto.UINT32, [4])})
    a, b = np.array([1, 2, 3, 4], np.uint32), np.array([10, 20, 30, 40], np.uint32)
    outputs, leaks, _ = run(m, {"a": a, "b": b})
    assert leaks == [] and str(outputs["y"].dtype) == "torch.uint32"
    np.testing.assert_array_equal(outputs["y"].numpy(), a + b)


def test_a_host_fallback_output_is_returned_in_its_onnx_dtype():
    m = one_node("CumSum", {"x": (TensorProto.UINT32, [5]), "axis": (TensorProto.INT64, [])},
                 {"y": (TensorProto.UINT32, [5])})
    x = np.array([1, 2, 3, 4, 4000000000], np.uint32)
    outputs, leaks, source = run(m, {"x": x, "axis": np.array(0, np.int64)})
    assert leaks == [] and str(outputs["y"].dtype) == "torch.uint32"
    assert "ttnn.to_torch(" not in source  # computed on the host, returned as it is
    np.testing.assert_array_equal(outputs["y"].numpy(), np.cumsum(x, dtype=np.uint32))
