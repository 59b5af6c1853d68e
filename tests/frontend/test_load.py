"""load: models with external data (.onnx + .onnx.data, as the dynamo exporter writes them) convert."""
from __future__ import annotations

import os

import onnx

import onnx2ttnn


def test_external_data_is_read_next_to_the_model(mlp_path, tmp_path):
    model = onnx.load(mlp_path)
    path = tmp_path / "mlp_ext.onnx"
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
              location="mlp_ext.onnx.data", size_threshold=0)
    assert os.path.getsize(tmp_path / "mlp_ext.onnx.data") > 100_000
    inline = onnx2ttnn.convert(mlp_path, "m_ttnn.py")
    external = onnx2ttnn.convert(str(path), "m_ttnn.py")
    assert inline.program.weights.keys() == external.program.weights.keys()
    for key, value in inline.program.weights.items():
        assert (external.program.weights[key] == value).all()
    report = onnx2ttnn.verify(str(path))
    assert report.passed, report.text()
