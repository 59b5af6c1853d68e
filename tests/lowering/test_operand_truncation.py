"""lowering/operand_truncation.py: the activation a block-float weight's call reads, as its math fidelity reads
it, modelled in ONNX ops for the gain measurement."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.lowering.operand_truncation import activation_bits, truncate_operands

F = TensorProto.FLOAT


def _run(model, x):
    from onnx2ttnn import ort

    session = ort.session(model.SerializeToString())
    return np.asarray(ort.run(session, ["y"], {"x": x})[0])


def _matmul(weight_name: str = "w"):
    graph = helper.make_graph([helper.make_node("MatMul", ["x", weight_name], ["y"], name="mm")], "m",
                              [helper.make_tensor_value_info("x", F, [64, 64])],
                              [helper.make_tensor_value_info("y", F, [64, 64])],
                              initializer=[numpy_helper.from_array(np.eye(64, dtype=np.float32), weight_name)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_the_fidelity_of_the_weight_s_format_sets_the_bits():
    assert activation_bits("bfp8") == 6 and activation_bits("bfp4") == 6  # HiFi2 and LoFi: SrcB's 6 bits
    assert activation_bits("bfp8", "HiFi4") == 7 and activation_bits("bfp8", "HiFi3") == 7


@pytest.mark.parametrize("bits", [6, 4])
def test_the_activation_is_read_as_the_simulator_reads_it(bits):
    """x through an identity MatMul: bfloat16, then `bits` mantissa bits kept toward zero (sim/_fidelity.py)."""
    from onnx2ttnn.sim._fidelity import truncate_mantissa

    rng = np.random.default_rng(0)
    x = (rng.standard_normal((64, 64)) * np.exp(rng.uniform(-8, 8, (64, 64)))).astype(np.float32)
    x[0, :4] = [0.0, -0.0, 1.0, -0.5]
    model = _matmul()
    assert truncate_operands(model.graph, {"w": bits}) == 1
    want = truncate_mantissa(torch.from_numpy(x).to(torch.bfloat16).float(), bits).numpy()
    got = _run(model, x)
    # ties of the bfloat16 rounding (round half to even there, half away here) are the only differences
    assert np.mean(got == want) > 0.999 and np.allclose(got, want, rtol=2 ** -bits, atol=0)
    assert not np.array_equal(got, x)


def test_other_weights_and_all_seven_bits_leave_the_graph_as_it_was():
    model = _matmul()
    assert truncate_operands(model.graph, {"other": 6}) == 0 and truncate_operands(model.graph, {"w": 7}) == 0
    assert [n.op_type for n in model.graph.node] == ["MatMul"]
