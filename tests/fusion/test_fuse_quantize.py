"""fusion/quantize.py: an activation's Q -> DQ pair becomes one QuantizeDequantize; a pair whose input is already
on its grid (data movement away from a dequantization of the same scale, zero point and type) is dropped."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from onnx2ttnn.convert import convert
from onnx2ttnn.verify import verify
from tests.lowering.test_quantize import _const, _model

F = TensorProto.FLOAT
V = helper.make_tensor_value_info


def requantized_after_moves(second_scale=0.05, second_zero=128, relu_output=True):
    """x -> Q/DQ (s, z) -> Reshape -> Transpose -> Q/DQ (s2, z2) -> Relu -> y: quantize_static's pattern."""
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q1"),
        helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq1"),
        helper.make_node("Reshape", ["xd", "shape"], ["r"], name="reshape"),
        helper.make_node("Transpose", ["r"], ["t"], name="transpose", perm=[0, 2, 1]),
        helper.make_node("QuantizeLinear", ["t", "s2", "z2"], ["tq"], name="q2"),
        helper.make_node("DequantizeLinear", ["tq", "s2", "z2"], ["td"], name="dq2"),
    ]
    out = "td"
    if relu_output:
        nodes.append(helper.make_node("Relu", ["td"], ["y"], name="relu"))
        out = "y"
    inits = [_const("s", np.float32(0.05)), _const("z", np.uint8(128)), _const("shape", np.array([2, 8, 16])),
             _const("s2", np.float32(second_scale)), _const("z2", np.uint8(second_zero))]
    return _model(nodes, [V("x", F, [16, 16])], [V(out, F, [2, 16, 8])], inits)


def _fused(conversion):
    return conversion.module.notes["fuse-patterns"]["applied"]


def _divides(conversion):
    return sum(1 for n in conversion.module.graph.nodes if n.op == "divide")


def test_a_pair_on_the_grid_of_the_dequantization_it_moves_is_dropped():
    model = requantized_after_moves()
    conversion = convert(model)
    assert _fused(conversion) == {"quantize-dequantize": 1, "quantize-dequantize (already on its grid)": 1}
    assert _divides(conversion) == 1
    report = verify(model, conversion=conversion)
    assert report.passed and report.outputs[0].pcc > 0.9999, report


def test_a_pair_to_another_grid_is_kept():
    for scale, zero in ((0.1, 128), (0.05, 120)):
        conversion = convert(requantized_after_moves(second_scale=scale, second_zero=zero))
        assert _fused(conversion) == {"quantize-dequantize": 2} and _divides(conversion) == 2
        assert verify(requantized_after_moves(second_scale=scale, second_zero=zero), conversion=conversion).passed


def test_a_pair_whose_result_is_a_graph_output_is_fused_not_dropped():
    model = requantized_after_moves(relu_output=False)
    conversion = convert(model)
    assert _divides(conversion) == 2
    assert verify(model, conversion=conversion).passed
