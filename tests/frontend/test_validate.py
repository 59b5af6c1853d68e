"""validate: models strict inference lets pass but onnxruntime refuses (or that would convert into a wrong
program) are refused before lowering, naming the node; valid neighbours of each still convert."""
from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import pytest
from onnx import numpy_helper

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.importer import import_model


def _model(text: str, **initializers) -> onnx.ModelProto:
    """The model in ONNX text with `initializers`; its outputs' shapes are left to inference."""
    model = onnx.parser.parse_model(text)
    for output in model.graph.output:
        output.type.tensor_type.ClearField("shape")
    model.graph.initializer.extend(numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items())
    return model


def _refused(model: onnx.ModelProto) -> str:
    with pytest.raises(ConversionError) as info:
        import_model(model, {})
    return str(info.value)


GATHER = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[4, 3] x) => (float y) {
    y = Gather<axis = 0>(x, i)
}
"""


def test_a_constant_gather_index_past_the_axis_is_refused():
    # converted, it was a slice of row 50 % 4 = 2
    message = _refused(_model(GATHER, i=np.array([1, 50], np.int64)))
    assert message == ("invalid model: node 'Gather_0' (Gather): index 50 is out of range for axis 0 of size 4 "
                       "(valid: -4 to 3)")


def test_a_constant_gather_index_from_a_constant_node_is_checked_too():
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[4, 3] x) => (float y) {
        i = Constant<value = int64 {-5}>()
        y = Gather<axis = 0>(x, i)
    }
    """
    assert "index -5 is out of range for axis 0 of size 4" in _refused(_model(text))


def test_negative_gather_indices_within_the_axis_are_valid():
    import_model(_model(GATHER, i=np.array([-4, 3], np.int64)), {})


def test_gather_elements_and_gather_nd_indices_are_checked():
    elements = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2, 3] x) => (float y) {
        y = GatherElements<axis = 1>(x, i)
    }
    """
    assert "index 3 is out of range for axis 1 of size 3" in _refused(_model(elements, i=np.array([[0, 1], [2, 3]])))
    nd = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2, 3] x) => (float y) {
        y = GatherND(x, i)
    }
    """
    assert "index 7 is out of range for dim 1 of size 3" in _refused(_model(nd, i=np.array([[1, 7]], np.int64)))
    import_model(_model(nd, i=np.array([[1, -3]], np.int64)), {})


RESHAPE = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[3, 4] x) => (float y) {
    y = Reshape(x, s)
}
"""


@pytest.mark.parametrize("target, why", [
    ([5, 5], "cannot reshape 12 elements (shape [3, 4]) to [5, 5] (25 elements)"),
    ([0, 0, 2], "cannot reshape 12 elements (shape [3, 4]) to [0, 0, 2] (24 elements)"),
], ids=["25-elements", "zeros-copy-dims"])
def test_a_reshape_that_changes_the_element_count_is_refused(target, why):
    # strict inference accepts these; onnxruntime fails when it runs them
    message = _refused(_model(RESHAPE, s=np.array(target, np.int64)))
    assert message == f"invalid model: node 'Reshape_0' (Reshape): {why}"


@pytest.mark.parametrize("target", [[0, -1], [2, 6], [-1], [1, 12, 1]])
def test_reshapes_that_keep_the_element_count_are_valid(target):
    import_model(_model(RESHAPE, s=np.array(target, np.int64)), {})


def test_a_reshape_whose_target_is_known_only_through_data_propagation_is_checked():
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[3, 4] x, float[5, 5] z) => (float y) {
        s = Shape(z)
        y = Reshape(x, s)
    }
    """
    assert "cannot reshape 12 elements (shape [3, 4]) to [5, 5] (25 elements)" in _refused(_model(text))


CONV = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 2, 8, 8] x) => (float y) {
    y = Conv<ATTRS>(x, w)
}
"""


def test_a_conv_whose_kernel_shape_contradicts_its_weight_is_refused():
    model = _model(CONV.replace("ATTRS", "kernel_shape = [5, 5]"), w=np.ones((4, 2, 3, 3), np.float32))
    assert _refused(model) == ("invalid model: node 'Conv_0' (Conv): kernel_shape [5, 5] contradicts the weight's "
                               "spatial dims [3, 3] (W shape [4, 2, 3, 3])")


def test_a_conv_whose_input_channels_or_bias_contradict_its_weight_is_refused():
    model = _model(CONV.replace("<ATTRS>", ""), w=np.ones((4, 3, 3, 3), np.float32))
    assert "the input has 2 channels but the weight (shape [4, 3, 3, 3], group 1) takes 3" in _refused(model)
    biased = _model(CONV.replace("<ATTRS>", "").replace("(x, w)", "(x, w, b)"), w=np.ones((4, 2, 3, 3), np.float32),
                    b=np.ones(5, np.float32))
    assert "the bias has 5 values but the convolution has 4 output channels" in _refused(biased)


def test_a_grouped_conv_that_agrees_with_its_weight_is_valid():
    import_model(_model(CONV.replace("ATTRS", "group = 2, kernel_shape = [3, 3]"),
                        w=np.ones((4, 1, 3, 3), np.float32)), {})
