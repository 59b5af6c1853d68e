"""load: models with external data (.onnx + .onnx.data, as the dynamo exporter writes them) convert."""
from __future__ import annotations

import os

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

import onnx2ttnn
from onnx2ttnn.errors import ConversionError


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


def test_a_model_the_checker_rejects_is_named_with_the_checkers_words(tmp_path):
    # The checker reads the file itself (no serialization of the loaded weights): a node reading a tensor
    # no node produces is still caught, in a model whose weights live in external data.
    weight = onnx.numpy_helper.from_array(np.ones((64, 64), np.float32), "w")
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("MatMul", ["x", "w"], ["y"]), onnx.helper.make_node("Relu", ["nowhere"], ["z"])],
        "g", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 64])],
        [onnx.helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [1, 64])], [weight])
    path = tmp_path / "bad.onnx"
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)]), str(path),
              save_as_external_data=True, location="bad.onnx.data", size_threshold=0)
    assert (tmp_path / "bad.onnx.data").is_file()
    with pytest.raises(ConversionError, match=r"bad\.onnx fails the ONNX checker: .*nowhere"):
        onnx2ttnn.convert(str(path))


def test_a_model_importing_only_ai_onnx_ml_gets_the_newest_ai_onnx_opset():
    """A scikit-learn export imports ai.onnx.ml alone; the importer gives it an ai.onnx opset (import_default_opset)
    rather than refusing it, and leaves a model that imports one as it is."""
    from onnx2ttnn.frontend.load import import_default_opset, opset_of
    from onnx2ttnn.limits import KNOWN_OPSETS

    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Normalizer", ["x"], ["y"], domain="ai.onnx.ml", norm="L2")], "g",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("ai.onnx.ml", 1)])
    with pytest.raises(ConversionError, match="imports no default-domain"):
        opset_of(model)
    import_default_opset(model)
    assert opset_of(model) == KNOWN_OPSETS[""]
    model.opset_import[-1].version = 13
    import_default_opset(model)
    assert [(e.domain, e.version) for e in model.opset_import] == [("ai.onnx.ml", 1), ("", 13)]
