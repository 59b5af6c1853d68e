"""shapes: ONNX shape inference on a light copy of the model gives what inference on the whole model gives."""
from __future__ import annotations

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

from onnx2ttnn.frontend.shapes import _light_copy, infer_shapes

TEXT = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 64] x) => (float y) {
    h = MatMul(x, w)
    s = Shape(h)
    n = Gather(s, one)
    t = Concat<axis = 0>(n, minus)
    y = Reshape(h, t)
}
"""


def _model(initializers_as_inputs: bool = False) -> onnx.ModelProto:
    model = onnx.parser.parse_model(TEXT)
    tensors = [onnx.numpy_helper.from_array(np.ones((64, 32), np.float32), "w"),  # 2048 elements: demoted
               onnx.numpy_helper.from_array(np.array([1], np.int64), "one"),
               onnx.numpy_helper.from_array(np.array([-1], np.int64), "minus")]
    model.graph.initializer.extend(tensors)
    if initializers_as_inputs:  # how models before IR 4 declare their weights
        model.ir_version = 3
        model.graph.input.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, t.dims) for t in tensors)
    return model


@pytest.mark.parametrize("as_inputs", [False, True], ids=["ir8", "initializers-as-inputs"])
def test_inference_on_the_light_copy_equals_inference_on_the_model(as_inputs):
    whole = onnx.shape_inference.infer_shapes(_model(as_inputs), strict_mode=False, data_prop=True)
    ours = infer_shapes(_model(as_inputs))
    assert ours.SerializeToString(deterministic=True) == whole.SerializeToString(deterministic=True)
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim] for vi in ours.graph.value_info}
    assert shapes["h"] == [1, 32]  # from the demoted weight's type
    assert shapes["t"] == [2]
    assert [t.name for t in ours.graph.initializer] == ["w", "one", "minus"]  # the weights stay in the model


def test_the_light_copy_holds_no_large_weight_but_its_type():
    light = _light_copy(_model())
    assert sorted(t.name for t in light.graph.initializer) == ["minus", "one"]
    demoted = next(i for i in light.graph.input if i.name == "w")
    assert [d.dim_value for d in demoted.type.tensor_type.shape.dim] == [64, 32]
    assert demoted.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
