"""Cast (onnx2ttnn/lowering/misc.py)."""
from __future__ import annotations

import numpy as np
import torch
from onnx import TensorProto, helper, numpy_helper

from tests.program_run import one_node, run


def test_cast_float_to_bfloat16_keeps_the_values_and_returns_bfloat16():
    m = one_node("Cast", {"x": (TensorProto.FLOAT, [2, 3])}, {"y": (TensorProto.BFLOAT16, [2, 3])},
                 attrs={"to": TensorProto.BFLOAT16}, opset=21)
    x = np.array([[0.4785, 1.0, -2.5], [3.14159, np.inf, -np.inf]], np.float32)
    outputs, leaks, source = run(m, {"x": x})
    assert leaks == [] and "ttnn.typecast(" not in source
    assert outputs["y"].dtype == torch.bfloat16
    assert torch.equal(outputs["y"], torch.from_numpy(x).to(torch.bfloat16))


def test_cast_to_a_signed_integer_keeps_negative_values_int32():
    """float -> int64 becomes typecast(int32): a negative value must not wrap as uint32 would (an ignore_index of
    -5 compared after the cast)."""
    nodes = [helper.make_node("Cast", ["x"], ["i"], to=TensorProto.INT64),
             helper.make_node("Equal", ["i", "minus5"], ["y"])]
    graph = helper.make_graph(nodes, "cast_eq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.BOOL, [2, 3])],
                              [numpy_helper.from_array(np.array(-5, np.int64), "minus5")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.array([[-5.0, 2.0, -5.0], [0.0, 5.0, -4.0]], np.float32)
    outputs, leaks, source = run(m, {"x": x})
    assert leaks == [] and "ttnn.typecast(" in source and "dtype=ttnn.int32" in source
    assert "dtype=ttnn.uint32" not in source
    np.testing.assert_array_equal(outputs["y"].numpy(), x == -5)


def test_cast_to_an_unsigned_integer_is_uint32():
    m = one_node("Cast", {"x": (TensorProto.FLOAT, [4])}, {"y": (TensorProto.UINT32, [4])},
                 attrs={"to": TensorProto.UINT32})
    x = np.array([0.0, 3.0, 7.0, 65536.0], np.float32)
    outputs, leaks, source = run(m, {"x": x})
    assert leaks == [] and "dtype=ttnn.uint32" in source
    np.testing.assert_array_equal(outputs["y"].numpy().astype(np.int64), x.astype(np.int64))


def test_cast_to_a_type_ttnn_lacks_is_declined():
    """Cast-19 on adds float8 targets (and more later): declined, not typecast to an integer."""
    import pytest

    from onnx2ttnn.convert import convert
    from onnx2ttnn.errors import UnsupportedOpsError

    m = one_node("Cast", {"x": (TensorProto.FLOAT, [2, 3])}, {"y": (TensorProto.FLOAT8E4M3FN, [2, 3])},
                 attrs={"to": TensorProto.FLOAT8E4M3FN}, opset=19)
    with pytest.raises(UnsupportedOpsError, match=r"Cast \(opset 19 schema 19\): .* \(ttnn has no float8_e4m3fn type"):
        convert(m, dtype="fp32")


def test_cast_float_to_bool_is_x_not_zero():
    """Found by the fuzzer (tests/fuzz, seed 0 case 1199): Cast float -> bool was bound to its input, so a
    MatMul result cast to bool and back to float kept its values (2.75 instead of 1.0)."""
    nodes = [helper.make_node("Cast", ["x"], ["b"], to=TensorProto.BOOL),
             helper.make_node("Cast", ["b"], ["y"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "cast_bool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
                               helper.make_tensor_value_info("b", TensorProto.BOOL, [2, 3])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.array([[2.75, 0.0, -0.5], [-0.0, 1e-3, np.nan]], np.float32)
    outputs, leaks, source = run(m, {"x": x})
    assert leaks == [] and "ttnn.ne(" in source
    np.testing.assert_array_equal(outputs["y"].float().numpy(), (x != 0).astype(np.float32))
    np.testing.assert_array_equal(outputs["b"].numpy().astype(bool), x != 0)


def test_a_cast_to_float16_in_a_float32_program_rounds_as_the_spec_says():
    """Found by the fuzzer (seed 67 case 627): Cast float -> float16 -> float passed float32 through, so a later
    rounding step saw -0.8828241 * 64 = -56.501 (-57) where float16's -0.8828125 gives exactly -56.5 (-56, half
    to even); the MatMulInteger after it was 127 off.  A host region now rounds the cast (ttnn has no float16)."""
    nodes = [helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["h"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["f", "scale"], ["s"]),
             helper.make_node("Round", ["s"], ["y"])]
    graph = helper.make_graph(nodes, "cast16", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                              [numpy_helper.from_array(np.array(64.0, np.float32), "scale")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.array([[-0.8828241, -0.35026678, 1.0001, 3.14159265]], np.float32)
    from onnx2ttnn.convert import convert
    from tests.node.runner import execute

    conversion = convert(m, dtype="fp32")
    assert "run_region(" in conversion.source
    outputs, leaks = execute(conversion, {"x": x})
    want = np.round(x.astype(np.float16).astype(np.float32) * 64)
    assert want[0, 0] == -56.0  # np.round is half to even, as ONNX's Round
    assert leaks == []
    np.testing.assert_array_equal(np.asarray(outputs["y"]), want)


def test_a_cast_from_a_wide_integer_to_float16_in_a_float32_program_rounds_too():
    """Found in review: int32 2049 -> float16 is 2048 and 70000 is inf (onnxruntime, the spec); the program passed
    the int32 values through.  Integers wider than 8 bits now go to the host region as floats do."""
    nodes = [helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["h"], ["y"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "int16", [helper.make_tensor_value_info("x", TensorProto.INT32, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    from onnx2ttnn.verify import verify

    report = verify(m, inputs={"x": np.array([2049, 4097, 65519, 70000], np.int32)}, dtype="fp32")
    assert report.passed, report.text()


def test_a_cast_to_bfloat16_in_a_float32_program_rounds_to_nearest_even():
    """Found by the fuzzer (seed 173 case 288): Cast float -> bfloat16 -> float before a MatMul passed float32
    through, 0.0034 off onnxruntime's product of the rounded values.  Its host fallback now rounds to nearest even
    (ties: 1 + 2^-8 down to 1, 1 + 3 * 2^-8 up to 1 + 2^-6); int32 257 is 256 in bfloat16, and NaN stays NaN."""
    import ml_dtypes
    import onnx
    import onnxruntime

    from onnx2ttnn.convert import convert
    from tests.node.runner import execute

    model = onnx.parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[6] x, int32[2] i) => (float[6] y, float[2] j) {
            b = Cast<to = 16>(x)
            y = Cast<to = 1>(b)
            k = Cast<to = 16>(i)
            j = Cast<to = 1>(k)
        }""")
    x = np.array([2.1000686, 1 + 2**-8, 1 + 3 * 2**-8, -0.5219796, np.nan, 3e38], np.float32)
    i = np.array([257, -70001], np.int32)
    conversion = convert(model, dtype="fp32")
    assert "= host_round_to_bfloat16(x)" in conversion.source and "= host_round_to_bfloat16(i)" in conversion.source
    outputs, leaks = execute(conversion, {"x": x, "i": i})
    want = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    assert want[1] == 1.0 and want[2] == 1 + 2**-6
    np.testing.assert_array_equal(np.asarray(outputs["y"]), want)
    np.testing.assert_array_equal(np.asarray(outputs["j"]), [256.0, -70144.0])
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ort_y, ort_j = session.run(["y", "j"], {"x": x, "i": i})
    np.testing.assert_array_equal(ort_y, want)
    np.testing.assert_array_equal(ort_j, [256.0, -70144.0])
    assert leaks == []
