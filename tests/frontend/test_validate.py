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


# --- windows: found by the fuzzer (tests/fuzz, seed 0); before, each converted, and onnxruntime refuses each --------
def _conv(attrs: str, x: str = "float[1, 2, 5, 5]", **initializers):
    return _model(f"""
    <ir_version: 8, opset_import: ["" : 18]>
    g ({x} x) => (float y) {{
        y = Conv{attrs}(x, w)
    }}
    """, **initializers)


W = np.ones((3, 2, 3, 3), np.float32)


def test_a_conv_weight_of_another_rank_than_the_input_is_refused():
    # onnxruntime: "X num_dims does not match W num_dims. X: {1,2,5,5} W: {16}"
    # (without kernel_shape strict inference refuses it; with it, inference takes the kernel from the attribute)
    assert _refused(_conv("<kernel_shape = [3, 3]>", w=np.ones(16, np.float32))) == (
        "invalid model: node 'Conv_0' (Conv): the weight has rank 1 (shape [16]) but the input has rank 4")


def test_a_conv_kernel_larger_than_its_padded_input_is_refused():
    # onnxruntime: "Invalid input shape: {2}"; inference gives an output dim of 0 (or a negative one)
    message = _refused(_conv("", x="float[2, 1, 2]", w=np.ones((2, 1, 3), np.float32)))
    assert message.endswith("(Conv): the output would have shape [2, 2, 0]: the window does not fit the input "
                            "(shape [2, 1, 2])"), message
    message = _refused(_conv("<strides = [2]>", x="float[2, 1, 2]", w=np.ones((2, 1, 7), np.float32)))
    assert message.endswith("(Conv): the window (7 elements in spatial dim 0, kernel [7], dilations [1]) is larger "
                            "than the padded input (2 + pads 0 and 0; input shape [2, 1, 2])"), message


def test_same_padding_with_dilation_is_refused_and_without_it_converts():
    message = _refused(_conv('<auto_pad = "SAME_UPPER", dilations = [2, 2]>', w=W))
    assert message.endswith("(Conv): auto_pad SAME_UPPER with dilations [2, 2] (onnxruntime supports SAME padding "
                            "only without dilation)")
    import_model(_conv('<auto_pad = "SAME_UPPER", dilations = [1, 1]>', w=W), {})


def test_an_unknown_auto_pad_is_refused():
    assert _refused(_conv('<auto_pad = "SAME">', w=W)).endswith(
        "(Conv): auto_pad 'SAME' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID")


def test_a_global_pool_over_a_rank_2_input_is_refused():
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[4, 3] x) => (float y) {
        y = GlobalAveragePool(x)
    }
    """
    assert _refused(_model(text)).endswith("(GlobalAveragePool): the input has rank 2; it needs a batch, a channel "
                                           "and at least one spatial dim")


def _pool(opset: int, attrs: str):
    return _model(f"""
    <ir_version: 8, opset_import: ["" : {opset}]>
    g (float[1, 5, 4, 4] x) => (float y) {{
        y = MaxPool{attrs}(x)
    }}
    """)


def test_a_ceil_mode_window_starting_past_the_input_is_refused_before_opset_22():
    """onnx infers [1, 5, 3, 2] before opset 22, onnxruntime computes [1, 5, 2, 2]: the program had the
    inferred shape (the outputs' shapes disagreed)."""
    attrs = "<ceil_mode = 1, kernel_shape = [1, 2], strides = [2, 2]>"
    message = _refused(_pool(17, attrs))
    assert message.endswith("(MaxPool): with ceil_mode, the last window of spatial dim 0 starts past the input (size "
                            "4, begin pad 0, stride 2): onnx's shape inference before opset 22 counts it (output "
                            "[1, 5, 3, 2]), onnxruntime does not; export with opset 22 or without ceil_mode")
    module = import_model(_pool(22, attrs), {})  # opset 22's inference agrees with onnxruntime
    assert [tuple(t.shape) for t in module.graph.outputs] == [(1, 5, 2, 2)]
    import_model(_pool(17, "<ceil_mode = 1, kernel_shape = [2, 2], strides = [2, 2]>"), {})  # no window past it


def test_a_pool_window_that_does_not_fit_is_refused():
    message = _refused(_pool(18, "<kernel_shape = [5, 1]>"))
    assert "(MaxPool): " in message, message


def test_a_gemm_bias_that_does_not_broadcast_to_the_product_is_refused():
    """Found by the fuzzer: onnxruntime "Gemm: Invalid bias shape for broadcast"; convert accepted it, or failed the
    IR verifier after lower-to-ttnn (an internal error)."""
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[4, 8] x) => (float y) {
        y = Gemm<transB = 1>(x, w, c)
    }
    """
    w = np.ones((3, 8), np.float32)
    for bad in ((4,), (3, 4), (2, 3), (1, 1, 3)):
        message = _refused(_model(text, w=w, c=np.ones(bad, np.float32)))
        assert message.endswith(f"(Gemm): C of shape {list(bad)} does not broadcast to the product's shape [4, 3]")
    for good in ((3,), (1, 3), (4, 1), (4, 3), (1,), ()):
        import_model(_model(text, w=w, c=np.ones(good, np.float32)), {})


# --- operands and attributes onnxruntime checks when it runs the node (found by the fuzzer, seed 0) ------------------
def _one(op: str, attrs: str = "", inputs: str = "x", x: str = "float[2, 3]", opset: int = 18, **initializers):
    return _model(f"""
    <ir_version: 8, opset_import: ["" : {opset}]>
    g ({x} x) => (float y) {{
        y = {op}{attrs}({inputs})
    }}
    """, **initializers)


@pytest.mark.parametrize("op, inputs, bad, good, reason", [
    ("CumSum", "x, a", {"a": np.array([1, 0], np.int64)}, {"a": np.array(1, np.int64)},
     "input 1 has shape [2]; it must be a scalar (0-D or one element)"),
    ("Trilu", "x, k", {"k": np.array([[1]], np.int64)}, {"k": np.array([1], np.int64)},
     "input 1 has shape [1, 1]; it must be a scalar (0-D or one element)"),
    ("Clip", "x, lo", {"lo": np.zeros((2, 3), np.float32)}, {"lo": np.float32(0)},
     "input 1 has shape [2, 3]; it must be a scalar (0-D or one element)"),
    ("ReduceMax", "x, axes", {"axes": np.array(1, np.int64)}, {"axes": np.array([1], np.int64)},
     "input 1 has shape []; it must be 1-D"),
    ("Reshape", "x, s", {"s": np.array([[3, 2]], np.int64)}, {"s": np.array([3, 2], np.int64)},
     "input 1 has shape [1, 2]; it must be 1-D"),
])
def test_operands_of_the_wrong_rank_are_refused(op, inputs, bad, good, reason):
    assert _refused(_one(op, inputs=inputs, **bad)).endswith(f"({op}): {reason}")
    import_model(_one(op, inputs=inputs, **good), {})


@pytest.mark.parametrize("op, attrs, x, reason", [
    ("DepthToSpace", '<blocksize = 1, mode = "garbage">', "float[1, 4, 2, 2]", "mode 'garbage' is not one of DCR, CRD"),
    ("DepthToSpace", "<blocksize = 2>", "float[1, 6, 2, 2]", "the input's 6 channels are not a multiple of "
                                                            "blocksize^2 = 4"),
    ("MeanVarianceNormalization", "<axes: ints = []>", "float[2, 3]", "axes is empty; it must name at least one axis"),
    ("GatherElements", "<axis = 4>", "float[3]", "axis 4 is out of range for an input of rank 1"),
])
def test_attributes_onnxruntime_refuses_are_refused(op, attrs, x, reason):
    inputs = {"GatherElements": "x, i"}.get(op, "x")
    model = _one(op, attrs, inputs, x, i=np.array([0], np.int64))
    if "i" not in inputs.split(", "):
        del model.graph.initializer[:]
    assert _refused(model).endswith(f"({op}): {reason}")


def test_a_cumsum_flag_other_than_0_or_1_is_refused():
    model = _one("CumSum", "<reverse = 2>", "x, a", a=np.array(0, np.int64))
    assert _refused(model).endswith("(CumSum): reverse is 2; it must be 0 or 1")


def test_scatter_elements_indices_and_updates_of_different_shapes_are_refused():
    model = _one("ScatterElements", "<axis = 1>", "x, i, u", i=np.zeros((2, 1), np.int64),
                 u=np.ones((2, 3), np.float32))
    assert _refused(model).endswith("(ScatterElements): the indices (shape [2, 1]) and the updates (shape [2, 3]) "
                                    "differ in shape")


def test_a_window_larger_than_the_padded_input_is_refused():
    """onnx infers one output element (its quotient rounds toward zero), onnxruntime says "Invalid input shape";
    converted, the IR verifier failed after lower-to-ttnn (an internal error)."""
    message = _refused(_conv("<kernel_shape = [2], strides = [2]>", x="float[4, 2, 1]",
                             w=np.ones((12, 2, 2), np.float32)))
    assert message.endswith("(Conv): the window (2 elements in spatial dim 0, kernel [2], dilations [1]) is larger "
                            "than the padded input (1 + pads 0 and 0; input shape [4, 2, 1])"), message
    message = _refused(_conv("<dilations = [2, 2]>", x="float[1, 2, 5, 2]", w=W))
    assert "(Conv): the window (5 elements in spatial dim 1, kernel [3, 3], dilations [2, 2])" in message, message
    import_model(_conv("<dilations = [2, 2], pads = [0, 2, 0, 1]>", x="float[1, 2, 5, 2]", w=W), {})
    # onnxruntime's pools, like onnx's inference, truncate the quotient: a 3-wide window over 2 with stride 2 has
    # one output element, and onnxruntime computes it (the lowering pads the input for it)
    import_model(_model("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[1, 1, 2, 2] x) => (float y) {
        y = AveragePool<kernel_shape = [3, 3], strides = [2, 2]>(x)
    }
    """), {})
    pool = _model("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[5, 2, 3, 1] x) => (float y) {
        y = MaxPool<ceil_mode = 1, kernel_shape = [3, 3], pads = [1, 0, 1, 0], strides = [1, 2]>(x)
    }
    """)
    assert _refused(pool).endswith("(MaxPool): the output would have shape [5, 2, 3, 0]: the window does not fit the "
                                   "input (shape [5, 2, 3, 1])")


def test_topk_flags_other_than_0_or_1_are_refused():
    """Found by the fuzzer (seed 16 case 116): onnxruntime reads largest=2 as false (smallest), the lowering as
    true: a silently different program."""
    model = _model("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2, 3] x) => (float v, int64 i) {
        v, i = TopK<largest = 2>(x, k)
    }
    """, k=np.array([1], np.int64))
    assert _refused(model).endswith("(TopK): largest is 2; it must be 0 or 1")


def test_a_conv_transpose_bias_that_is_not_1d_is_refused_and_same_padding_with_dilation_converts():
    """Found by the fuzzer (seed 16 case 64): a [1, 3] bias was an internal error (a reshape of 3 values into
    [1, 1, 1, 1]); onnxruntime refuses it.  SAME padding with dilation is refused for Conv only: onnxruntime runs
    a ConvTranspose with it."""
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[4, 1, 2] x) => (float y) {
        y = ConvTranspose<kernel_shape = [2]>(x, w, b)
    }
    """
    w = np.ones((1, 1, 2), np.float32)
    message = _refused(_model(text, w=w, b=np.ones((1, 3), np.float32)))
    assert message.endswith("(ConvTranspose): the bias has shape [1, 3]; it must be 1-D, one value per output channel")
    import_model(_model(text.replace("kernel_shape = [2]", 'auto_pad = "SAME_UPPER", dilations = [2]'), w=w,
                        b=np.ones(1, np.float32)), {})


def test_auto_pad_together_with_pads_is_refused():
    """Found by the fuzzer (seed 7 case 340): onnxruntime refuses a Conv with auto_pad VALID and pads [1, 1, 1, 1]."""
    assert _refused(_conv('<auto_pad = "VALID", pads = [1, 1, 1, 1]>', w=W)).endswith(
        "(Conv): auto_pad VALID and pads [1, 1, 1, 1] are both set (the spec allows one or the other)")
    import_model(_conv('<auto_pad = "VALID", pads = [0, 0, 0, 0]>', w=W), {})


def test_a_ceil_mode_pool_window_larger_than_its_padded_input_is_refused():
    """Found by the fuzzer (seed 0 case 889): onnxruntime's ceil_mode MaxPool gave an empty output, which the
    GlobalMaxPool after it refused; onnx infers one element."""
    pool = _model("""
    <ir_version: 8, opset_import: ["" : 23]>
    g (float[5, 2, 3, 1] x) => (float y) {
        y = MaxPool<ceil_mode = 1, kernel_shape = [3, 3], pads = [1, 0, 1, 0], strides = [1, 2]>(x)
    }
    """)
    assert _refused(pool).endswith("(MaxPool): with ceil_mode, onnxruntime computes an empty output: the window (3 "
                                   "elements in spatial dim 1, stride 2) overhangs the padded input (1 + pads 0 and "
                                   "0; input shape [5, 2, 3, 1]) by a whole stride"), _refused(pool)
    # tests/test_limits.py verifies the window larger than its input that onnxruntime does run


def test_an_einsum_term_with_the_wrong_number_of_labels_is_refused():
    """Found by the fuzzer (seed 7 case 598): onnxruntime "Einsum subscripts does not contain enough subscript
    labels and there is no ellipsis for input 0"."""
    # (strict inference refuses a wrong number of labels; it lets an empty equation pass)
    assert _refused(_one("Einsum", '<equation = "">')).endswith(
        "(Einsum): equation '': operand 0 has 0 labels but its input has rank 2")
    import_model(_one("Einsum", '<equation = "ab->ba">'), {})
    import_model(_one("Einsum", '<equation = "...->...">'), {})
