"""Block floats on the host (lowering/block_float.py): the rounding both formats share, and each weight's rounding
errors computed once per conversion (RoundingErrors), measure-weight-gain's answers reused by lower-to-ttnn."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.lowering import block_float
from onnx2ttnn.lowering.block_float import RoundingErrors, block_round, relative_error, rounding_errors

rng = np.random.default_rng(7)


def _reference(x: np.ndarray, bits: int) -> np.ndarray:
    """The simulator's torch rounding (sim/_rounding.py), the definition both formats are checked against."""
    import torch

    from onnx2ttnn.sim._rounding import bfp_round

    return bfp_round(torch.from_numpy(np.ascontiguousarray(x)), bits).numpy()


def _case(case: str) -> np.ndarray:
    if case == "transposed":  # a prepared conv weight's view: non-contiguous
        return rng.standard_normal((48, 80)).astype(np.float32).T
    if case == "tiny exponents":  # group exponents below -104: the np.ldexp path (2**(23 - E) is no float32)
        return (rng.standard_normal((4, 32)) * 2.0 ** -120).astype(np.float32)
    if case == "zeros and spread":
        spread = rng.standard_normal((2, 32)) * np.exp(rng.uniform(-30, 30, (2, 32)))
        return np.concatenate([np.zeros((2, 32)), spread]).astype(np.float32)
    return rng.standard_normal({"gaussian": (64, 96), "ragged width": (5, 37)}[case]).astype(np.float32)


@pytest.mark.parametrize("case", ["gaussian", "ragged width", "transposed", "tiny exponents", "zeros and spread"])
def test_both_formats_round_as_the_simulator_does(case):
    x = _case(case)
    rounded = block_round(x)
    for fmt, bits in (("bfp4", 3), ("bfp8", 7)):
        np.testing.assert_array_equal(rounded[fmt], _reference(x, bits))
        assert rounded[fmt].shape == x.shape


def test_the_errors_of_both_formats_are_relative_error_s():
    w = (rng.standard_normal((128, 256)) / 16).astype(np.float32)
    errors, rounded = rounding_errors(w.T)
    assert errors == {"bfp4": relative_error(w.T, "bfp4"), "bfp8": relative_error(w.T, "bfp8")}
    assert 0.003 < errors["bfp8"] < 0.01 < 0.05 < errors["bfp4"] < 0.2
    np.testing.assert_array_equal(rounded["bfp8"], block_round(w.T, ("bfp8",))["bfp8"])


def test_rounding_errors_answer_again_only_for_the_same_array_in_the_same_view(monkeypatch):
    calls = []
    real = block_float.rounding_errors
    monkeypatch.setattr(block_float, "rounding_errors", lambda v, *a: calls.append(v.shape) or real(v, *a))
    w = rng.standard_normal((64, 32)).astype(np.float32)
    cache = RoundingErrors()
    cache.put(w.T, real(w.T)[0])
    assert cache.errors(w.T) == real(w.T)[0] and cache.hits == 1 and not calls  # a new view of the same place
    cache.errors(w)  # the same memory in another orientation: other groups, other errors
    other = w.copy()  # equal values elsewhere: not known to be equal without reading them
    cache.errors(other.T)
    assert calls == [(64, 32), (32, 64)] and cache.hits == 1
    del w, other
    fresh = np.zeros((64, 32), np.float32)  # may take the freed memory: the dead owner makes the entry stale
    assert cache.errors(fresh.T) == {"bfp4": 0.0, "bfp8": 0.0}


def _three_weights():
    """y = Conv(x) -> Gemm(transB=1) -> MatMul: one weight of each upload orientation (weight_dtype.WEIGHT_OPS)."""
    f = TensorProto.FLOAT
    weights = {"conv_w": rng.standard_normal((32, 16, 3, 3)) / 12, "gemm_w": rng.standard_normal((64, 512)) / 23,
               "mm_w": rng.standard_normal((64, 64)) / 8}
    nodes = [helper.make_node("Conv", ["x", "conv_w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Reshape", ["c", "shape"], ["r"], name="flat"),
             helper.make_node("Gemm", ["r", "gemm_w"], ["g"], transB=1, name="gemm"),
             helper.make_node("MatMul", ["g", "mm_w"], ["y"], name="mm")]
    init = [numpy_helper.from_array(np.asarray(w, np.float32), n) for n, w in weights.items()]
    init.append(numpy_helper.from_array(np.array([1, 512], np.int64), "shape"))
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", f, [1, 16, 4, 4])],
                              [helper.make_tensor_value_info("y", f, [1, 64])], initializer=init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_lowering_judges_each_weight_by_the_errors_the_gain_measurement_computed(monkeypatch):
    # the measurement and lowering state each weight's upload orientation once (weight_dtype.weight_upload): were
    # lowering to upload one differently, it would round that weight again here
    from onnx2ttnn.convert import convert
    from onnx2ttnn.lowering import weight_gain

    measured, again = [], []
    real = weight_gain.rounding_errors
    monkeypatch.setattr(weight_gain, "rounding_errors", lambda v, *a: measured.append(v.shape) or real(v, *a))
    monkeypatch.setattr(block_float, "rounding_errors", lambda v, *a: again.append(v.shape) or real(v, *a))
    conversion = convert(_three_weights())
    assert sorted(measured) == [(64, 64), (144, 32), (512, 64)] and not again  # conv2d's [KH*KW*IC, OC]
    assert set(conversion.weight_formats()) == {"conv_w", "gemm_w_t", "mm_w"}
    assert conversion.module.rounding is None  # dropped once lowering has judged the weights


def test_onnxruntime_reads_the_weights_the_measurement_keeps_from_the_graph_itself():
    # constants of HANDED_BYTES or more are not serialized: the exact run is onnxruntime's on the model as it is
    import onnx_graphsurgeon as gs

    from onnx2ttnn import ort
    from onnx2ttnn.lowering.weight_gain import HANDED_BYTES, _run_both

    model = _three_weights()
    assert all(len(t.raw_data) >= HANDED_BYTES for t in model.graph.initializer if t.name != "shape")
    x = np.random.default_rng(0).standard_normal((1, 16, 4, 4)).astype(np.float32)  # the measurement's input
    expected = ort.run(ort.session(model.SerializeToString()), ["y"], {"x": x})[0]
    exact, _ = _run_both(gs.import_onnx(model), {}, {})
    np.testing.assert_array_equal(exact[0], expected)  # the same initializers, the same kernels: the same bits
    exact, approx = _run_both(gs.import_onnx(model), {"mm_w": np.zeros((64, 64), np.float32)}, {})
    np.testing.assert_allclose(exact[0], expected, rtol=1e-5, atol=1e-6)
    assert not approx[0].any()  # the replaced weight was fed: zeros


def test_the_rounded_weights_go_to_onnxruntime_in_bfloat16_and_give_the_same_outputs():
    import onnx_graphsurgeon as gs

    from onnx2ttnn.lowering.weight_gain import _compact, _run_both

    model = _three_weights()
    w = numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "mm_w"))
    rounded = block_round(w)["bfp8"]
    compact = _compact(rounded)  # a block float's 7 significant bits fit bfloat16's 8: half the bytes, exact
    assert compact.dtype.name == "bfloat16" and np.array_equal(compact.astype(np.float32), rounded)
    assert _compact(np.full((2, 16), 2.0 ** -140, np.float32)).dtype == np.float32  # subnormal: not in bfloat16
    _, as_float = _run_both(gs.import_onnx(model), {"mm_w": rounded}, {})
    _, as_bfloat16 = _run_both(gs.import_onnx(model), {"mm_w": compact}, {})  # a second session, a Cast each
    np.testing.assert_array_equal(as_bfloat16[0], as_float[0])
