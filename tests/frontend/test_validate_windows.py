"""validate_windows: Conv and ConvTranspose weights, biases and windows, and pool windows that do not fit their
input (or that onnx and onnxruntime size differently) are refused before lowering, naming the node; valid
neighbours of each still convert."""
from __future__ import annotations

import numpy as np
import pytest

from onnx2ttnn.frontend.importer import import_model
from tests.frontend._validate_models import parsed, rejected


CONV = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 2, 8, 8] x) => (float y) {
    y = Conv<ATTRS>(x, w)
}
"""


def test_a_conv_whose_kernel_shape_contradicts_its_weight_is_refused():
    model = parsed(CONV.replace("ATTRS", "kernel_shape = [5, 5]"), w=np.ones((4, 2, 3, 3), np.float32))
    assert rejected(model) == ("invalid model: node 'Conv_0' (Conv): kernel_shape [5, 5] contradicts the weight's "
                               "spatial dims [3, 3] (W shape [4, 2, 3, 3])")


def test_a_conv_whose_input_channels_or_bias_contradict_its_weight_is_refused():
    model = parsed(CONV.replace("<ATTRS>", ""), w=np.ones((4, 3, 3, 3), np.float32))
    assert "the input has 2 channels but the weight (shape [4, 3, 3, 3], group 1) takes 3" in rejected(model)
    biased = parsed(CONV.replace("<ATTRS>", "").replace("(x, w)", "(x, w, b)"), w=np.ones((4, 2, 3, 3), np.float32),
                    b=np.ones(5, np.float32))
    assert "the bias has 5 values but the convolution has 4 output channels" in rejected(biased)


def test_a_grouped_conv_that_agrees_with_its_weight_is_valid():
    import_model(parsed(CONV.replace("ATTRS", "group = 2, kernel_shape = [3, 3]"),
                        w=np.ones((4, 1, 3, 3), np.float32)), {})


# --- windows: found by the fuzzer (tests/fuzz, seed 0); before, each converted, and onnxruntime refuses each --------
def _conv(attrs: str, x: str = "float[1, 2, 5, 5]", **initializers):
    return parsed(f"""
    <ir_version: 8, opset_import: ["" : 18]>
    g ({x} x) => (float y) {{
        y = Conv{attrs}(x, w)
    }}
    """, **initializers)


W = np.ones((3, 2, 3, 3), np.float32)


def test_a_conv_weight_of_another_rank_than_the_input_is_refused():
    # onnxruntime: "X num_dims does not match W num_dims. X: {1,2,5,5} W: {16}"
    # (without kernel_shape strict inference refuses it; with it, inference takes the kernel from the attribute)
    assert rejected(_conv("<kernel_shape = [3, 3]>", w=np.ones(16, np.float32))) == (
        "invalid model: node 'Conv_0' (Conv): the weight has rank 1 (shape [16]) but the input has rank 4")


def test_a_conv_kernel_larger_than_its_padded_input_is_refused():
    # onnxruntime: "Invalid input shape: {2}"; inference gives an output dim of 0 (or a negative one)
    message = rejected(_conv("", x="float[2, 1, 2]", w=np.ones((2, 1, 3), np.float32)))
    assert message.endswith("(Conv): the output would have shape [2, 2, 0]: the window does not fit the input "
                            "(shape [2, 1, 2])"), message
    message = rejected(_conv("<strides = [2]>", x="float[2, 1, 2]", w=np.ones((2, 1, 7), np.float32)))
    assert message.endswith("(Conv): the window (7 elements in spatial dim 0, kernel [7], dilations [1]) is larger "
                            "than the padded input (2 + pads 0 and 0; input shape [2, 1, 2])"), message


def test_same_padding_with_dilation_is_refused_and_without_it_converts():
    message = rejected(_conv('<auto_pad = "SAME_UPPER", dilations = [2, 2]>', w=W))
    assert message.endswith("(Conv): auto_pad SAME_UPPER with dilations [2, 2] (onnxruntime supports SAME padding "
                            "only without dilation)")
    import_model(_conv('<auto_pad = "SAME_UPPER", dilations = [1, 1]>', w=W), {})


def test_an_unknown_auto_pad_is_refused():
    assert rejected(_conv('<auto_pad = "SAME">', w=W)).endswith(
        "(Conv): auto_pad 'SAME' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID")


def test_a_global_pool_over_a_rank_2_input_is_refused():
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[4, 3] x) => (float y) {
        y = GlobalAveragePool(x)
    }
    """
    assert rejected(parsed(text)).endswith("(GlobalAveragePool): the input has rank 2; it needs a batch, a channel "
                                           "and at least one spatial dim")


def _pool(opset: int, attrs: str):
    return parsed(f"""
    <ir_version: 8, opset_import: ["" : {opset}]>
    g (float[1, 5, 4, 4] x) => (float y) {{
        y = MaxPool{attrs}(x)
    }}
    """)


def test_a_ceil_mode_window_starting_past_the_input_is_refused_before_opset_22():
    """onnx infers [1, 5, 3, 2] before opset 22, onnxruntime computes [1, 5, 2, 2]: the program had the
    inferred shape (the outputs' shapes disagreed)."""
    attrs = "<ceil_mode = 1, kernel_shape = [1, 2], strides = [2, 2]>"
    message = rejected(_pool(17, attrs))
    assert message.endswith("(MaxPool): with ceil_mode, the last window of spatial dim 0 starts past the input (size "
                            "4, begin pad 0, stride 2): onnx's shape inference before opset 22 counts it (output "
                            "[1, 5, 3, 2]), onnxruntime does not; export with opset 22 or without ceil_mode")
    module = import_model(_pool(22, attrs), {})  # opset 22's inference agrees with onnxruntime
    assert [tuple(t.shape) for t in module.graph.outputs] == [(1, 5, 2, 2)]
    import_model(_pool(17, "<ceil_mode = 1, kernel_shape = [2, 2], strides = [2, 2]>"), {})  # no window past it


def test_a_pool_window_that_does_not_fit_is_refused():
    message = rejected(_pool(18, "<kernel_shape = [5, 1]>"))
    assert "(MaxPool): " in message, message


def test_a_window_larger_than_the_padded_input_is_refused():
    """onnx infers one output element (its quotient rounds toward zero), onnxruntime says "Invalid input shape";
    converted, the IR verifier failed after lower-to-ttnn (an internal error)."""
    message = rejected(_conv("<kernel_shape = [2], strides = [2]>", x="float[4, 2, 1]",
                             w=np.ones((12, 2, 2), np.float32)))
    assert message.endswith("(Conv): the window (2 elements in spatial dim 0, kernel [2], dilations [1]) is larger "
                            "than the padded input (1 + pads 0 and 0; input shape [4, 2, 1])"), message
    message = rejected(_conv("<dilations = [2, 2]>", x="float[1, 2, 5, 2]", w=W))
    assert "(Conv): the window (5 elements in spatial dim 1, kernel [3, 3], dilations [2, 2])" in message, message
    import_model(_conv("<dilations = [2, 2], pads = [0, 2, 0, 1]>", x="float[1, 2, 5, 2]", w=W), {})
    # onnxruntime's pools, like onnx's inference, truncate the quotient: a 3-wide window over 2 with stride 2 has
    # one output element, and onnxruntime computes it (the lowering pads the input for it)
    import_model(parsed("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[1, 1, 2, 2] x) => (float y) {
        y = AveragePool<kernel_shape = [3, 3], strides = [2, 2]>(x)
    }
    """), {})
    pool = parsed("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[5, 2, 3, 1] x) => (float y) {
        y = MaxPool<ceil_mode = 1, kernel_shape = [3, 3], pads = [1, 0, 1, 0], strides = [1, 2]>(x)
    }
    """)
    assert rejected(pool).endswith("(MaxPool): the output would have shape [5, 2, 3, 0]: the window does not fit the "
                                   "input (shape [5, 2, 3, 1])")


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
    message = rejected(parsed(text, w=w, b=np.ones((1, 3), np.float32)))
    assert message.endswith("(ConvTranspose): the bias has shape [1, 3]; it must be 1-D, one value per output channel")
    import_model(parsed(text.replace("kernel_shape = [2]", 'auto_pad = "SAME_UPPER", dilations = [2]'), w=w,
                        b=np.ones(1, np.float32)), {})


def test_auto_pad_together_with_pads_is_refused():
    """Found by the fuzzer (seed 7 case 340): onnxruntime refuses a Conv with auto_pad VALID and pads [1, 1, 1, 1]."""
    assert rejected(_conv('<auto_pad = "VALID", pads = [1, 1, 1, 1]>', w=W)).endswith(
        "(Conv): auto_pad VALID and pads [1, 1, 1, 1] are both set (the spec allows one or the other)")
    import_model(_conv('<auto_pad = "VALID", pads = [0, 0, 0, 0]>', w=W), {})


def test_a_ceil_mode_pool_window_larger_than_its_padded_input_is_refused():
    """Found by the fuzzer (seed 0 case 889): onnxruntime's ceil_mode MaxPool gave an empty output, which the
    GlobalMaxPool after it refused; onnx infers one element."""
    pool = parsed("""
    <ir_version: 8, opset_import: ["" : 23]>
    g (float[5, 2, 3, 1] x) => (float y) {
        y = MaxPool<ceil_mode = 1, kernel_shape = [3, 3], pads = [1, 0, 1, 0], strides = [1, 2]>(x)
    }
    """)
    assert rejected(pool).endswith("(MaxPool): with ceil_mode, onnxruntime computes an empty output: the window (3 "
                                   "elements in spatial dim 1, stride 2) overhangs the padded input (1 + pads 0 and "
                                   "0; input shape [5, 2, 3, 1]) by a whole stride"), rejected(pool)
    # tests/test_limits.py verifies the window larger than its input that onnxruntime does run


def test_a_quantized_conv_kernel_larger_than_its_padded_input_is_refused():
    """Found by the fuzzer's quantize recipes: a ConvInteger kernel of width 2 over an input of width 1 was an
    internal error (the IR verifier after lower-to-ttnn); onnxruntime "Invalid input shape: {3,1}"."""
    text = """
    <ir_version: 8, opset_import: ["" : 13]>
    g (uint8[1, 2, 3, {width}] x) => (int32 y) {{
        y = ConvInteger<kernel_shape = [1, 2], strides = [2, 2]>(x, w)
    }}
    """
    w = np.ones((4, 2, 1, 2), np.uint8)
    assert rejected(parsed(text.format(width=1), w=w)).endswith(
        "(ConvInteger): the window (2 elements in spatial dim 1, kernel [1, 2], dilations [1, 1]) is larger than the "
        "padded input (1 + pads 0 and 0; input shape [1, 2, 3, 1])")
    import_model(parsed(text.format(width=2), w=w), {})
    qlinear = """
    <ir_version: 8, opset_import: ["" : 13]>
    g (uint8[1, 2, 3, 1] x) => (uint8 y) {
        y = QLinearConv<strides = [2, 2]>(x, s, z, w, s, z, s, z)
    }
    """
    assert "(QLinearConv): the window (2 elements in spatial dim 1, kernel [1, 2]" in rejected(
        parsed(qlinear, w=w, s=np.float32(0.1), z=np.uint8(0)))


def test_a_conv_transpose_with_same_padding_and_output_padding_is_refused():
    """Found by the fuzzer (seed 53 cases 1 and 673): onnx's shape inference adds output_padding to input x stride
    (11 for 5 x 2 + 1), onnxruntime does not (10, its values shifted): a wrong shape or values."""
    text = """
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 1, 5] x) => (float y) {
        y = ConvTranspose<auto_pad = "SAME_UPPER", kernel_shape = [3], strides = [2]PADDING>(x, w)
    }
    """
    w = np.ones((1, 1, 3), np.float32)
    assert rejected(parsed(text.replace("PADDING", ", output_padding = [1]"), w=w)).endswith(
        "(ConvTranspose): auto_pad SAME_UPPER with output_padding [1]: onnx's shape inference and onnxruntime "
        "disagree on the output size")
    import_model(parsed(text.replace("PADDING", ", output_padding = [0]"), w=w), {})
    import_model(parsed(text.replace("PADDING", ""), w=w), {})


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool"])
@pytest.mark.parametrize("kernel, pads", [([1], [0, 7]), ([2], [2, 0])])
def test_a_pool_pad_not_smaller_than_its_kernel_is_refused(op, kernel, pads):
    """Fuzz seed 173 case 112: a MaxPool with kernel [1] and pads [0, 7] converted (its windows past the input
    hold padding only; the AveragePool lowering divided by a count of 0); onnxruntime "Pad should be smaller than
    kernel".  Pads one less than the kernel convert."""
    text = """
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 2, 4] x) => (float y) {
        y = %s<kernel_shape = %s, pads = %s, strides = [2]>(x)
    }
    """
    assert rejected(parsed(text % (op, kernel, pads))).endswith(
        f"({op}): pads {pads} are not smaller than kernel_shape {kernel} in spatial dim 0 (a window could hold "
        "padding only)")
    import_model(parsed(text % (op, [3], [2, 2])), {})
