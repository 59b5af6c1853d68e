"""weights: large external-data tensors stay in their file until a pass reads them; small ones are loaded."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import onnx.numpy_helper
import onnx_graphsurgeon as gs
import pytest
from onnx_graphsurgeon.ir.tensor import LazyValues

from onnx2ttnn.frontend.importer import import_model
from onnx2ttnn.frontend.weights import FileValues, SharedReads

TEXT = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 64] x) => (float[64, 2] y) {
    h = MatMul(x, w)
    y = Reshape(h, shape)
}
"""
WEIGHT = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)


def _external_model(tmp_path) -> str:
    model = onnx.parser.parse_model(TEXT)
    model.graph.initializer.extend([onnx.numpy_helper.from_array(WEIGHT, "w"),
                                    onnx.numpy_helper.from_array(np.array([64, 2], np.int64), "shape")])
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path), save_as_external_data=True, location="m.onnx.data", size_threshold=0)
    return str(path)


def _constants(module) -> dict[str, gs.Constant]:
    return {t.name: t for t in module.graph.tensors().values() if isinstance(t, gs.Constant)}


def test_the_large_weight_is_read_from_its_file_on_first_use(tmp_path):
    consts = _constants(import_model(_external_model(tmp_path), {}))
    assert isinstance(consts["w"]._values, FileValues)
    assert list(consts["w"].shape) == [64, 64] and consts["w"].data_location == onnx.TensorProto.DEFAULT
    np.testing.assert_array_equal(consts["w"].values, WEIGHT)


def test_a_small_external_tensor_is_loaded_for_shape_inference(tmp_path):
    module = import_model(_external_model(tmp_path), {})
    consts = _constants(module)
    assert not isinstance(consts["shape"]._values, FileValues)
    assert list(module.graph.outputs[0].shape) == [64, 2]
    h = module.graph.tensors()["h"]
    assert list(h.shape) == [2, 64]


def test_an_exported_graph_holds_the_weights_data(tmp_path):
    # graphsurgeon's exporter (constant folding through onnxruntime, --emit-ir) reads the file for them
    module = import_model(_external_model(tmp_path), {})
    exported = gs.export_onnx(module.graph)
    weights = {t.name: t for t in exported.graph.initializer}
    assert not onnx.external_data_helper.uses_external_data(weights["w"])
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(weights["w"]), WEIGHT)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_, ml_dtypes.bfloat16])
def test_values_read_from_the_file_equal_graphsurgeons_reading(tmp_path, dtype):
    values = np.arange(-600, 600).reshape(30, 40) % 7
    tensor = onnx.numpy_helper.from_array(values.astype(dtype), "t")
    onnx.external_data_helper.set_external_data(tensor, "t.data")
    (tmp_path / "t.data").write_bytes(tensor.raw_data)
    tensor.ClearField("raw_data")
    tensor.data_location = onnx.TensorProto.EXTERNAL
    file_values = FileValues(LazyValues(tensor), str(tmp_path))
    ours, theirs = file_values.load(), LazyValues(file_values.tensor).load()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape and ours.flags.writeable
    np.testing.assert_array_equal(ours, theirs)


def test_shared_reads_hand_each_import_its_own_array():
    shared, calls = SharedReads(), []

    def read():
        calls.append(1)
        return np.arange(4.0)
    first = shared.values("w", read)
    second = shared.values("w", read)
    assert len(calls) == 1 and first is not second and (first == second).all()
    first[0] = 9.0
    assert second[0] == 0.0
    shared.values("v", read)  # read by the first import only: its copy waits for the second
    shared.last()
    shared.values("u", read)  # read by the last import only: no copy kept
    assert len(calls) == 3 and list(shared._kept) == ["v"]
    shared.clear()
    assert shared._kept == {} and shared.values("v", read) is not None and len(calls) == 4
