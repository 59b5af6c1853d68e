"""validate_quantize: a zero point of another shape than its scale, and a QLinearConv weight scale that is neither
per tensor nor per output channel, are refused before lowering, naming the node (onnxruntime refuses both when
it runs the node); valid neighbours still convert.  (The axis, scale and precision checks moved here from
validate_operands keep their tests in tests/frontend/test_validate_operands.py and tests/lowering/test_quantize.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from onnx2ttnn.frontend.importer import import_model
from tests.frontend._validate_models import parsed, rejected

QUANTIZE = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[5, 2, 5] x) => (uint8 y) {
    y = QuantizeLinear<axis = 0>(x, s, z)
}
"""


@pytest.mark.parametrize("scale, zero, reason", [
    (np.float32(0.05), np.zeros(2, np.uint8), "the zero point has shape [2] but the scale []"),  # seed 53 case 114
    (np.full(5, 0.1, np.float32), np.uint8(0), "the zero point has shape [] but the scale [5]"),  # seed 53 case 986
])
def test_a_zero_point_of_another_shape_than_its_scale_is_refused(scale, zero, reason):
    """onnxruntime: "zero_point_ptr == nullptr || zero_point_ptr->Shape() == scale.Shape()" at run time."""
    assert rejected(parsed(QUANTIZE, s=scale, z=zero)).endswith(f"(QuantizeLinear): {reason}; they must have one shape")
    import_model(parsed(QUANTIZE, s=scale, z=np.zeros(np.shape(scale), np.uint8)), {})


QLINEAR_CONV = """
<ir_version: 8, opset_import: ["" : 13]>
g (uint8[1, 1, 4, 4] x) => (uint8 y) {
    y = QLinearConv<kernel_shape = [3, 3]>(x, xs, xz, w, ws, wz, ys, yz)
}
"""


def test_a_qlinear_conv_weight_scale_neither_per_tensor_nor_per_channel_is_refused():
    """Found by the fuzzer (seed 53 case 1040): a [4, 1] weight scale for one output channel; onnxruntime "filter
    scale shape invalid"."""
    consts = dict(xs=np.float32(0.03125), xz=np.uint8(0), w=np.ones((2, 1, 3, 3), np.int8), wz=np.int8(0),
                  ys=np.float32(1), yz=np.uint8(128))
    assert rejected(parsed(QLINEAR_CONV, ws=np.full((4, 1), 0.0078125, np.float32), **consts)).endswith(
        "(QLinearConv): the weight scale has shape [4, 1]; it must be a scalar or hold one value per output "
        "channel (2)")
    import_model(parsed(QLINEAR_CONV, ws=np.full(2, 0.0078125, np.float32), **consts), {})
    import_model(parsed(QLINEAR_CONV, ws=np.float32(0.0078125), **consts), {})


@pytest.mark.parametrize("scale_shape, zero_shape", [((), (1,)), ((1,), ())])
def test_a_per_tensor_scale_and_zero_point_may_be_written_as_scalar_and_one_element(scale_shape, zero_shape):
    """[] and [1] both hold one value per tensor: onnxruntime runs the pair (a review found it refused)."""
    import_model(parsed(QUANTIZE, s=np.full(scale_shape, 0.05, np.float32), z=np.zeros(zero_shape, np.uint8)), {})


# ---- fuzz seed 61 ------------------------------------------------------------------------------------------

QLINEAR_MATMUL = """
<ir_version: 8, opset_import: ["" : 17]>
g (uint8[2, 4] a) => (uint8 y) {
    y = QLinearMatMul(a, as, az, b, bs, bz, ys, yz)
}
"""
_QLMM = {"as": np.float32(0.5), "az": np.uint8(0), "b": np.ones((4, 3), np.uint8), "bs": np.float32(0.5),
         "bz": np.uint8(0), "ys": np.float32(0.5), "yz": np.uint8(0)}


@pytest.mark.parametrize("changes, reason", [
    ({"as": np.full((2, 4), 0.5, np.float32)}, "a_scale has shape [2, 4]; it must be a scalar"),  # case 382
    ({"yz": np.zeros(3, np.uint8), "ys": np.full(3, 0.5, np.float32)}, "y_scale has shape [3]; it must be a scalar"),
    ({"bs": np.full((4, 3), 0.5, np.float32), "bz": np.zeros((4, 3), np.uint8)},
     "b_scale has shape [4, 3]; for b of shape [4, 3] it must be a scalar, one value per column"),
    ({"bs": np.full(2, 0.5, np.float32), "bz": np.zeros(2, np.uint8)}, "b_scale has shape [2]; for b of shape [4, 3]"),
    ({"bs": np.full(3, 0.5, np.float32)}, None),
    ({"bs": np.full(3, 0.5, np.float32), "bz": np.zeros(3, np.uint8)}, None),
    ({"as": np.full(1, 0.5, np.float32), "az": np.zeros(1, np.uint8)}, None),
])
def test_qlinear_matmul_scales_onnxruntime_refuses_are_refused(changes, reason):
    """Found by the fuzzer (seed 61 case 382: a QLinearMatMul whose a_scale was a [2, 4] graph input, its result
    unused, converted); onnxruntime: "IsScalarOr1ElementVector(a_scale) was false" (a and y: one element, 0-D or
    1-D), and for b "weight zero point must be a scalar, 1D tensor of size 1, or last to second dimension is 1"
    (probed: [3] and [1, 3] run for a [4, 3] b, [2], [3, 1] and [4, 3] are refused)."""
    model = parsed(QLINEAR_MATMUL, **{**_QLMM, **changes})
    if reason is None:
        import_model(model, {})
    else:
        assert f"(QLinearMatMul): {reason}" in rejected(model)


@pytest.mark.parametrize("op", ["QuantizeLinear", "DequantizeLinear"])
def test_a_negative_block_size_is_refused(op):
    """Found by the fuzzer (seed 61 case 1680: a DequantizeLinear with block_size -1 after a QuantizeLinear, the
    pair fused before the lowering's own check); onnxruntime refuses both ops' sessions ("'block_size' must be
    non-negative.")."""
    x = "float[4] x" if op == "QuantizeLinear" else "uint8[4] x"
    text = f"""
    <ir_version: 9, opset_import: ["" : 21]>
    g ({x}) => (y) {{
        y = {op}<block_size = -1>(x, s, z)
    }}
    """
    assert rejected(parsed(text, s=np.float32(0.1), z=np.uint8(1))).endswith(
        f"({op}): block_size -1 must not be negative")


def test_a_blocked_dequantize_with_a_scale_of_another_rank_is_refused():
    """Fuzz seed 71 cases 228 and 1026: DequantizeLinear block_size 3 with a scalar scale (an unused node, which
    the converter removed and converted the rest; onnxruntime fails in PrepareForQDQ's quant_block_size check)."""
    model = parsed("""
    <ir_version: 9, opset_import: ["" : 21]>
    g (uint8[4] x) => (float[4] y) {
        y = DequantizeLinear<block_size = 3>(x, s)
    }
    """, s=np.float32(0.5))
    assert rejected(model).endswith("(DequantizeLinear): block_size 3 needs a scale of the input's rank 1, not []")


CONV_INTEGER = """
    <ir_version: 8, opset_import: ["" : 13]>
    g (uint8[1, 2, 4, 4] x) => (float[1, 2, 4, 4] y) {
        unused = ConvInteger(x, w, %s)
        y = Cast<to = 1>(x)
    }
"""


@pytest.mark.parametrize("zeros,reason", [
    ("xz", "x_zero_point has shape [3, 2, 3, 3]; it must be a scalar (0-D or one element)"),
    ("one2d, wz", "x_zero_point has shape [1, 1]; it must be a scalar (0-D or one element)"),
    (", one2d", "w_zero_point has shape [1, 1]; it must be a scalar or hold one value per output channel (3)")])
def test_a_conv_integer_zero_point_of_the_wrong_shape_is_refused_even_unused(zeros, reason):
    """Fuzz seed 127 case 762: an unused ConvInteger with a [4, 2, 3, 3] x_zero_point converted (its node removed
    before the lowering's check; onnxruntime: "IsScalarOr1ElementVector(X_Zero_Point) was false"); one value per
    output channel is the spec's per-channel w_zero_point."""
    inits = dict(w=np.ones((3, 2, 3, 3), np.uint8), xz=np.ones((3, 2, 3, 3), np.uint8),
                 one2d=np.ones((1, 1), np.uint8), wz=np.arange(3, dtype=np.uint8))
    assert rejected(parsed(CONV_INTEGER % zeros, **inits)).endswith(f"(ConvInteger): {reason}")
    import_model(parsed(CONV_INTEGER % "one, wz", w=inits["w"], one=np.ones(1, np.uint8), wz=inits["wz"]), {})


def test_a_matmul_integer_a_zero_point_per_row_is_refused():
    """The spec's per-row a_zero_point: onnxruntime refuses it ("input1 zero point must be a scalar or 1D tensor
    of size 1"), and the lowering takes a per-tensor one only; per column b_zero_point converts."""
    text = """
    <ir_version: 8, opset_import: ["" : 13]>
    g (uint8[3, 4] a) => (int32[3, 2] y) {
        y = MatMulInteger(a, b, %s)
    }
    """
    b = np.arange(8, dtype=np.uint8).reshape(4, 2)
    model = parsed(text % "az", b=b, az=np.arange(3, dtype=np.uint8))
    assert rejected(model).endswith("(MatMulInteger): a_zero_point has shape [3]; it must be a scalar (0-D or one "
                                    "element)")
    import_model(parsed(text % "az, bz", b=b, az=np.uint8(1), bz=np.arange(2, dtype=np.uint8)), {})


def test_a_qlinear_conv_bias_not_one_value_per_output_channel_is_refused():
    """Fuzz seed 163 case 1696: a QLinearConv with 2 output channels and an 8-value bias was an internal error
    (lowering's reshape of the bias); onnxruntime: "bias shape invalid. bias must be a 1D tensor of size
    output_channels (2)"."""
    text = QLINEAR_CONV.replace("ys, yz)", "ys, yz, b)")
    consts = dict(xs=np.float32(0.03125), xz=np.uint8(0), w=np.ones((2, 1, 3, 3), np.int8), ws=np.float32(0.01),
                  wz=np.int8(0), ys=np.float32(1), yz=np.uint8(128))
    assert rejected(parsed(text, b=np.zeros(8, np.int32), **consts)).endswith(
        "(QLinearConv): the bias has shape [8]; it must be 1-D, one value per output channel (2)")
    assert rejected(parsed(text, b=np.zeros((1, 2), np.int32), **consts)).endswith(
        "(QLinearConv): the bias has shape [1, 2]; it must be 1-D, one value per output channel (2)")
    import_model(parsed(text, b=np.zeros(2, np.int32), **consts), {})
