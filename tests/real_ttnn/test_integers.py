"""Integer programs on the real ttnn 0.81.1 (mock n150): the int32 calls the compiler emits for integer
inputs, constants and ops (add, subtract, multiply, clamp, pow, divide with rounding_mode, comparisons, where
with int32 values, typecasts, the int32 window MaxPool) are accepted by real ttnn, not only by the simulator.
Values read back on the mock are zeros: the numbers are checked on the simulator (tests/test_verify_compare.py)."""
from __future__ import annotations

import pytest

import onnx2ttnn
from tests import integer_models as im


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
@pytest.mark.parametrize("case", ["add_one", "mixed", "max_pool_uint8"])
def test_integer_program_runs_on_real_ttnn(ttnn_mock, case, dtype, tmp_path):
    program = str(tmp_path / "model_ttnn.py")
    # fp32: without the Gather of a float table, whose float32 ttnn.embedding table real ttnn refuses ("Weights
    # tensor must have BFLOAT16 dtype"), a float defect the simulator does not model (not an integer one)
    model = im.mixed(gather=False) if (case, dtype) == ("mixed", "fp32") else getattr(im, case)()
    conversion = onnx2ttnn.convert(model, program, dtype=dtype, device="n150")
    conversion.write(program)
    assert "dtype=ttnn.int32" in conversion.source
    report = ttnn_mock.run_program(program, device="n150")
    assert report["ok"], f"real ttnn refused the program: {report['error']}\nat {report.get('error_location')}"
    assert report["ttnn_calls_in_forward"] > 0
    leaked = [b for b in report["buffers"] if b["kind"] == "allocated_in_forward"]
    assert leaked == []


def test_negative_gather_indices_run_on_real_ttnn(ttnn_mock, tmp_path):
    """Gather indices given as an int64 input, negative ones among them: the program wraps them on the host
    (index_input) before the uint32 upload, and real ttnn takes the upload and the embedding."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    table = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "table")
    model = im._model([helper.make_node("Gather", ["table", "idx"], ["y"], axis=0)], [("idx", im.I64, [2, 3])],
                      [("y", TensorProto.FLOAT, [2, 3, 8])], [table])
    program = str(tmp_path / "model_ttnn.py")
    conversion = onnx2ttnn.convert(model, program, device="n150")
    conversion.write(program)
    assert "index_input(idx, 'idx', 8)" in conversion.source
    np.savez(tmp_path / "in.npz", idx=np.array([[-1, 0, -8], [7, -3, 2]], np.int64))
    report = ttnn_mock.run_program(program, device="n150", inputs=str(tmp_path / "in.npz"))
    assert report["ok"], f"real ttnn refused the program: {report['error']}\nat {report.get('error_location')}"
    assert report["ttnn_calls_in_forward"] > 0
