"""verify on a model whose inputs and outputs are bfloat16: numpy has no bfloat16 and onnxruntime's Python API
takes no ml_dtypes array, so verify hands onnxruntime OrtValues of the bits and reads bfloat16 outputs through an
exact Cast; where onnxruntime's CPU provider has no bfloat16 kernel, one `error:` line, exit 2 (it crashed with a
TypeError traceback: "Got unsupported ScalarType BFloat16")."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnx2ttnn import ort
from onnx2ttnn.verify import verify
from tests.test_cli import assert_clean_failure, run_inprocess, run_subprocess

BF16 = TensorProto.BFLOAT16


def _save(path, nodes, out_type=BF16):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", BF16, [2, 32])],
                              [helper.make_tensor_value_info("y", out_type, [2, 32])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.save(model, str(path))
    return path


def test_onnxruntime_takes_a_bfloat16_feed_bit_for_bit():
    graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)], "g",
                              [helper.make_tensor_value_info("x", BF16, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.array([1.0078125, -3.5, 1e-20], dtype=ml_dtypes.bfloat16)
    (y,) = ort.run(ort.session(model.SerializeToString()), ["y"], {"x": x})
    assert y.dtype == np.float32 and y.tolist() == x.astype(np.float32).tolist()


@pytest.mark.parametrize("out_type", [BF16, TensorProto.FLOAT], ids=["bf16-out", "f32-out"])
def test_verify_runs_a_bfloat16_model_onnxruntime_can_run(tmp_path, out_type):
    node = (helper.make_node("Identity", ["x"], ["y"]) if out_type == BF16
            else helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT))
    model = _save(tmp_path / "m.onnx", [node], out_type)
    run = run_inprocess(["verify", str(model)], tmp_path)
    assert run.code == 0, run.stderr
    assert "PASS" in run.stdout
    report = verify(str(model), inputs={"x": np.linspace(-2, 2, 64, dtype=np.float32).reshape(2, 32)})
    assert report.passed and report.outputs[0].max_abs == 0


def test_verify_of_a_bfloat16_model_onnxruntime_cannot_compute_is_one_error_line(tmp_path):
    model = _save(tmp_path / "m.onnx", [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])])
    for run in (run_inprocess(["verify", str(model)], tmp_path), run_subprocess(["verify", str(model)], tmp_path)):
        msg = assert_clean_failure(run)
        assert msg.startswith("error: onnxruntime refuses the model: Could not find an implementation for")
