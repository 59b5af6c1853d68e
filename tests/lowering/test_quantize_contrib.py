"""com.microsoft's QLinearAdd, QLinearMul and MatMulNBits on the device, checked against onnxruntime running
models onnxruntime's own quantization tools wrote (quantize_static in the QOperator format, MatMulNBitsQuantizer)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.quantize_contrib import unpack_codes
from onnx2ttnn.verify import verify

F = TensorProto.FLOAT
V = helper.make_tensor_value_info


def _float_model(nodes, x_shape, y_shape, weights, opset=13):
    graph = helper.make_graph(nodes, "g", [V("x", F, x_shape)], [V("y", F, y_shape)],
                              [numpy_helper.from_array(w, name) for name, w in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def qoperator_model(tmp_path, quantized_output=False):
    """MatMul, a residual Add, a Mul and a constant Add, quantized by quantize_static in the QOperator format:
    QLinearMatMul, two com.microsoft QLinearAdd (one with a constant operand) and a QLinearMul."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    rng = np.random.default_rng(0)
    n = 32
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Add", ["h", "x"], ["r"]),
             helper.make_node("Mul", ["r", "x"], ["m"]), helper.make_node("Add", ["m", "B"], ["y"])]
    weights = {"W": rng.normal(0, 0.2, (n, n)).astype(np.float32), "B": rng.normal(0, 0.5, (1, n)).astype(np.float32)}
    onnx.save(_float_model(nodes, [4, n], [4, n], weights), tmp_path / "float.onnx")

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.samples = iter([{"x": rng.normal(0, 1, (4, n)).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.samples, None)

    path = tmp_path / "qop.onnx"
    quantize_static(str(tmp_path / "float.onnx"), str(path), Reader(), quant_format=QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    model = onnx.load(path)
    if quantized_output:  # the last QLinearAdd's uint8 result as the output (compared exactly)
        last = model.graph.node[-1]
        assert last.op_type == "DequantizeLinear"
        model.graph.node.remove(last)
        model.graph.output[0].CopyFrom(V(last.input[0], TensorProto.UINT8, [4, n]))
    return model


def nbits_model(tmp_path, bits=4, symmetric=True, block=32, k=64, n=48):
    """Two MatMuls with constant weights around a Relu, quantized by MatMulNBitsQuantizer."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    rng = np.random.default_rng(1)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "W2"], ["y"])]
    weights = {"W": rng.normal(0, 0.2, (k, n)).astype(np.float32), "W2": rng.normal(0, 0.2, (n, 40)).astype(np.float32)}
    quantizer = MatMulNBitsQuantizer(_float_model(nodes, [2, 8, k], [2, 8, 40], weights, opset=17), bits=bits,
                                     block_size=block, is_symmetric=symmetric)
    quantizer.process()
    return quantizer.model.model


def _ops(conversion):
    return [n.op for n in conversion.module.graph.nodes if not n.attrs.get("_param")]


def test_qoperator_add_and_mul_run_on_the_device_and_match_onnxruntime(tmp_path):
    model = qoperator_model(tmp_path)
    assert {(n.domain, n.op_type) for n in model.graph.node} >= {("com.microsoft", "QLinearAdd"),
                                                                 ("com.microsoft", "QLinearMul")}
    conversion = convert(model, dtype="bf16")  # the bf16 program (auto computes a QLinearMatMul model in fp32)
    assert conversion.fallback_counts() == {} and not conversion.module.regions
    assert "round" in _ops(conversion) and "clip" in _ops(conversion)
    report = verify(model, conversion=conversion)
    assert report.passed and report.outputs[0].pcc > 0.999, report


def test_qlinear_add_codes_match_onnxruntime_exactly_in_float32(tmp_path):
    model = qoperator_model(tmp_path, quantized_output=True)
    report = verify(model, dtype="fp32")
    assert report.passed and report.outputs[0].exact, report


@pytest.mark.parametrize("bits, symmetric", [(4, True), (4, False), (8, False)])
def test_matmul_nbits_dequantizes_its_weight_at_conversion(tmp_path, bits, symmetric):
    model = nbits_model(tmp_path, bits=bits, symmetric=symmetric)
    nbits = [n for n in model.graph.node if n.op_type == "MatMulNBits"]
    assert len(nbits) == 2 and (len(nbits[0].input) > 3) == (not symmetric)
    conversion = convert(model)
    assert conversion.fallback_counts() == {} and not conversion.module.regions
    assert _ops(conversion).count("linear") == 2
    assert {dtype for dtype, _ in conversion.quantized_weights().values()} == {"bfp8"}
    stored = conversion.program.weights  # the codes and one scale per block, not the float32 weight
    key = f"w_q{bits}_dequantized"
    assert stored[key + ".codes"].shape == (64, 48) and stored[key + ".scale"].shape == (2, 48)
    assert f"dequantized_weight(data, '{key}', (0, 32))" in conversion.source
    report = verify(model, conversion=conversion)
    assert report.passed and report.outputs[0].pcc > 0.999, report


def test_matmul_nbits_with_a_bias_is_one_linear(tmp_path):
    model = nbits_model(tmp_path)
    node = next(n for n in model.graph.node if n.op_type == "MatMulNBits")
    while len(node.input) < 5:
        node.input.append("")
    node.input.append("bias")
    model.graph.initializer.append(numpy_helper.from_array(np.linspace(-1, 1, 48).astype(np.float32), "bias"))
    conversion = convert(model)
    assert _ops(conversion).count("linear") == 2 and "add" not in _ops(conversion)
    assert verify(model, conversion=conversion).passed


def test_matmul_nbits_with_float_zero_points_runs_in_a_host_region(tmp_path):
    model = nbits_model(tmp_path)
    node = next(n for n in model.graph.node if n.op_type == "MatMulNBits")
    node.input.append("zp_float")
    model.graph.initializer.append(numpy_helper.from_array(np.full((48, 2), 0.5, np.float32), "zp_float"))
    conversion = convert(model)
    assert len(conversion.module.regions) == 1
    assert verify(model, conversion=conversion).passed


def test_matmul_nbits_with_a_b_of_the_wrong_shape_is_an_error_naming_the_node(tmp_path):
    model = nbits_model(tmp_path)
    node = next(n for n in model.graph.node if n.op_type == "MatMulNBits")
    node.name = "proj"
    next(a for a in node.attribute if a.name == "K").i = 96
    with pytest.raises(ConversionError, match="node 'proj': B has shape"):
        convert(model)


def test_codes_unpack_low_bits_first():
    assert unpack_codes(np.array([[0x21, 0x43]], np.uint8), 4, 4).tolist() == [[1, 2, 3, 4]]
    assert unpack_codes(np.array([[0b11100100]], np.uint8), 2, 3).tolist() == [[0, 1, 2]]
