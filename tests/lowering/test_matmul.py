"""MatMul / Gemm / Einsum (lowering/matmul.py) against onnxruntime on the simulator (fp32)."""
from __future__ import annotations

import numpy as np
import pytest

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.verify import verify
from tests.lowering._nodes import f32, model, ttnn_ops


def einsum(equation, *shapes):
    return model("Einsum", {f"x{i}": s for i, s in enumerate(shapes)}, attrs={"equation": equation}, opset=12)


CASES = {
    "matmul-batch-broadcast-b": model("MatMul", {"a": [2, 3, 7, 8], "b": [1, 3, 8, 5]}),
    "matmul-batch-broadcast-a": model("MatMul", {"a": [1, 3, 7, 8], "b": [2, 1, 8, 5]}),
    "matmul-rank-mismatch": model("MatMul", {"a": [3, 7, 8], "b": [2, 3, 8, 5]}),
    "matmul-1d-1d": model("MatMul", {"a": [8], "b": [8, 4]}),
    "gemm-transA-C-row": model("Gemm", {"a": [7, 4]}, [f32(7, 5), f32(1, 5)], {"transA": 1, "beta": 0.5}),
    "gemm-C-column": model("Gemm", {"a": [4, 7], "b": [7, 5]}, [f32(4, 1)], {"alpha": 2.0}),
    "einsum-batch-matmul": einsum("bij,bjk->bik", [5, 2, 3], [5, 3, 4]),
    "einsum-attention": einsum("bhqd,bhkd->bhqk", [2, 3, 5, 8], [2, 3, 7, 8]),
    "einsum-transpose": einsum("ij->ji", [3, 4]),
    "einsum-sum": einsum("ij->i", [3, 4]),
    "einsum-ellipsis": einsum("...ij,...jk", [2, 3, 4], [2, 4, 5]),
    "einsum-outer": einsum("i,j->ij", [3], [4]),
    "einsum-permuted-out": einsum("bij,jk->bki", [2, 3, 4], [4, 6]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matmul_family_matches_onnxruntime(name):
    report = verify(CASES[name], dtype="fp32")
    assert report.passed, report.text()


def test_batch_broadcast_is_expanded_for_real_ttnn():
    """Real matmul refuses [2,3,M,K] @ [1,3,K,N]: the smaller batch is expanded first."""
    assert "expand" in ttnn_ops(CASES["matmul-batch-broadcast-b"], dtype="fp32")
    assert "expand" not in ttnn_ops(model("MatMul", {"a": [2, 3, 7, 8], "b": [8, 5]}), dtype="fp32")


def test_einsum_diagonal_is_declined():
    with pytest.raises(ConversionError, match="repeated subscripts"):
        ttnn_ops(einsum("...ii->...i", [3, 5, 5]), fallback=False)


def test_einsum_three_operands_is_declined():
    with pytest.raises(ConversionError, match="3 operands"):
        ttnn_ops(einsum("ij,jk,kl->il", [2, 3], [3, 4], [4, 5]), fallback=False)


def test_vector_dot_vector_is_rank0_without_leaks():
    """[K] @ [K] is rank 0: [1] on the device (ttnn has no rank-0 tensors), () in the program's output."""
    from onnx import TensorProto

    from tests.program_run import one_node, run

    m = one_node("MatMul", {"a": (TensorProto.FLOAT, [5]), "b": (TensorProto.FLOAT, [5])},
                 {"c": (TensorProto.FLOAT, [])})
    a, b = f32(5), f32(5)
    outputs, leaks, source = run(m, {"a": a, "b": b})
    assert leaks == [] and "shape=()" not in source
    assert tuple(outputs["c"].shape) == ()
    np.testing.assert_allclose(outputs["c"].numpy(), a @ b, rtol=1e-5)


@pytest.mark.parametrize("alpha", [np.inf, -np.inf])
def test_a_gemm_with_an_infinite_alpha_scales_the_product_not_the_weight(alpha):
    """Fuzz seed 157 case 1044: Gemm alpha inf folded into a constant B of both signs made the product's sum
    inf - inf, NaN; the spec's alpha * (A @ B) + C is +-inf, as onnxruntime gives."""
    import onnxruntime

    from onnx2ttnn.convert import convert
    from tests.node.runner import execute

    m = model("Gemm", {"a": [2, 4]}, [f32(4, 3), f32(1, 3)], {"alpha": float(alpha)})
    feeds = {"a": f32(2, 4)}
    want = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, feeds)[0]
    got = np.asarray(execute(convert(m, dtype="fp32"), feeds)[0][m.graph.output[0].name])
    assert np.isinf(want).all()
    np.testing.assert_array_equal(got, want)
