"""shapes: ONNX shape inference on a light copy of the model gives what inference on the whole model gives;
inference is strict: a model whose shapes or types are inconsistent is refused with every failing node named."""
from __future__ import annotations

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.shapes import light_copy, infer_shapes

TEXT = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 64] x) => (float[32, 1] y) {
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
    whole = onnx.shape_inference.infer_shapes(_model(as_inputs), check_type=True, strict_mode=True, data_prop=True)
    ours = infer_shapes(_model(as_inputs))
    assert ours.SerializeToString(deterministic=True) == whole.SerializeToString(deterministic=True)
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim] for vi in ours.graph.value_info}
    assert shapes["h"] == [1, 32]  # from the demoted weight's type
    assert shapes["t"] == [2]
    assert [t.name for t in ours.graph.initializer] == ["w", "one", "minus"]  # the weights stay in the model


def test_the_light_copy_holds_no_large_weight_but_its_type():
    light = light_copy(_model())
    assert sorted(t.name for t in light.graph.initializer) == ["minus", "one"]
    demoted = next(i for i in light.graph.input if i.name == "w")
    assert [d.dim_value for d in demoted.type.tensor_type.shape.dim] == [64, 32]
    assert demoted.type.tensor_type.elem_type == onnx.TensorProto.FLOAT


def _parsed(text: str, **initializers) -> onnx.ModelProto:
    model = onnx.parser.parse_model(f'<ir_version: 8, opset_import: ["" : 18]>\n{text}')
    model.graph.initializer.extend(onnx.numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items())
    return model


# The six minimised repros of checker-valid graphs that were internal errors (or converted) with
# strict_mode=False, and a float MatMul with an int64 weight (converted; onnxruntime refuses its types).
INCONSISTENT = {
    "broadcast": ("g (float[2, 3] x, float[4] z) => (float[2, 3] y) { y = Add(x, z) }", {},
                  "node 'add' (Add): Incompatible dimensions"),
    "negative-pads": ("g (float[1, 1, 8, 8] x) => (float[1, 2, 8, 8] y) { y = Conv<pads = [-1, -1, -1, -1]>(x, w) }",
                      {"w": np.ones((2, 1, 3, 3), np.float32)},
                      "node 'add' (Conv): Attribute pads must not contain negative values"),
    "negative-strides": ("g (float[1, 1, 8, 8] x) => (float[1, 2, 6, 6] y) { y = Conv<strides = [-1, 1]>(x, w) }",
                         {"w": np.ones((2, 1, 3, 3), np.float32)},
                         "node 'add' (Conv): Attribute strides must only contain positive values"),
    "batchnorm-lengths": ("g (float[1, 2, 4, 4] x) => (float[1, 2, 4, 4] y) "
                          "{ y = BatchNormalization(x, s, b, m, v) }",
                          {"s": np.ones(3, np.float32), "b": np.ones(2, np.float32), "m": np.ones(2, np.float32),
                           "v": np.ones(2, np.float32)},
                          "node 'add' (BatchNormalization): Dimension mismatch in unification between 3 and 2"),
    "gemm-dims": ("g (float[2, 3] x) => (float[2, 4] y) { y = Gemm(x, w) }", {"w": np.ones((5, 4), np.float32)},
                  "node 'add' (Gemm): Dimension mismatch in unification between 5 and 3"),
    "reshape-two-minus-ones": ("g (float[3, 4] x) => (float[2, 6] y) { y = Reshape(x, s) }",
                               {"s": np.array([-1, -1], np.int64)},
                               "node 'add' (Reshape): Target shape may not have multiple -1 dimensions."),
    "matmul-int64-weight": ("g (float[2, 3] x) => (float[2, 4] y) { y = MatMul(x, w) }",
                            {"w": np.ones((3, 4), np.int64)},
                            "node 'add' (MatMul): B has inconsistent type tensor(int64)"),
}


@pytest.mark.parametrize("case", list(INCONSISTENT))
def test_a_model_with_inconsistent_shapes_or_types_is_refused_naming_the_node(case):
    text, initializers, why = INCONSISTENT[case]
    model = _parsed(text, **initializers)
    model.graph.node[0].name = "add"
    with pytest.raises(ConversionError) as info:
        infer_shapes(model)
    assert str(info.value) == f"invalid model (ONNX shape and type inference): {why}"


def test_a_declared_output_shape_that_contradicts_the_graph_is_refused():
    model = _parsed("g (float[2, 3] x) => (float[4, 5] y) { y = Relu(x) }")
    with pytest.raises(ConversionError, match=r"^invalid model \(ONNX shape and type inference\): a Relu node "
                                              r"\(unnamed\): Inferred shape and existing shape differ in dimension "
                                              r"0: \(2\) vs \(4\)$"):
        infer_shapes(model)


def test_every_failing_node_is_named_on_its_own_line():
    model = _parsed("g (float[2, 3] x) => (float[2, 3] y) { t = Relu(x) y = Relu(t) }")
    model.graph.value_info.append(onnx.helper.make_tensor_value_info("t", onnx.TensorProto.FLOAT, [7]))
    model.graph.node[0].name, model.graph.node[1].name = "first", "second"
    with pytest.raises(ConversionError) as info:
        infer_shapes(model)
    assert str(info.value).splitlines() == [
        "invalid model (ONNX shape and type inference):",
        "  node 'first' (Relu): Inferred shape and existing shape differ in rank: (2) vs (1)",
        "  node 'second' (Relu): Inferred shape and existing shape differ in rank: (1) vs (2)"]


def test_a_function_op_whose_body_onnx_cannot_infer_is_not_refused():
    # strict inference fails inside onnx's own expansion of MeanVarianceNormalization (a Constant of its body);
    # onnxruntime runs the model, so the lenient inference is used and the output shape is still found
    model = _parsed("g (float[1, 2, 3, 3] x) => (float[1, 2, 3, 3] y) { y = MeanVarianceNormalization(x) }")
    with pytest.raises(onnx.shape_inference.InferenceError, match="Inference error"):
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    inferred = infer_shapes(model)
    assert [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim] == [1, 2, 3, 3]
