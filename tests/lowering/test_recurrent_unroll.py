"""What every unrolled LSTM, GRU and RNN shares (onnx2ttnn/lowering/recurrent_unroll.py): one input
projection for every step, and the nodes it declines or refuses (short sequence_lens, runtime weights, unknown
activations, the budget of unrolled steps, a bad clip or hidden_size) with the reason."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.recurrent_unroll import MAX_UNROLLED_STEPS
from onnx2ttnn.verify import verify
from tests.lowering._recurrent_models import declined, feeds, recurrent_model
from tests.program_run import forward_text, run


def test_one_input_projection_and_one_recurrent_matmul_per_step():
    """LSTM, seq 5, bidirectional: one linear projects all 5 steps of both directions, then one linear per
    step and direction (the first step of each direction has a zero state and needs none)."""
    source = convert(recurrent_model("LSTM", direction="bidirectional"), dtype="fp32").source
    assert forward_text(source).count("ttnn.linear(") == 1 + 2 * 4
    source = convert(recurrent_model("LSTM", direction="bidirectional", initial_h=True), dtype="fp32").source
    assert forward_text(source).count("ttnn.linear(") == 1 + 2 * 5
    gru = convert(recurrent_model("GRU", initial_h=True), dtype="fp32").source
    assert forward_text(gru).count("ttnn.linear(") == 1 + 2 * 5  # linear_before_reset=0: h R_zr^T and (r * h) R_h^T


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_unequal_sequence_lens_run_on_the_host_and_match_onnxruntime(op):
    model = recurrent_model(op, sequence_lens=[5, 3, 1], direction="bidirectional", initial_h=True)
    declined(model, r"sequence_lens \[5, 3, 1\] are not all")
    inputs = feeds(model)
    got, leaks, _ = run(model, inputs)
    assert leaks == []
    report = verify(model, inputs=inputs, dtype="fp32")
    assert report.passed, report.text()


def test_runtime_weights_run_on_the_host():
    model = recurrent_model("GRU", runtime_weights=True, linear_before_reset=1)
    declined(model, "W and R must be constants")
    report = verify(model, inputs=feeds(model), dtype="fp32")
    assert report.passed, report.text()


def test_unknown_activations_are_refused_by_both():
    declined(recurrent_model("RNN", activations=["Gelu"]), "activation 'Gelu' has no ttnn lowering", fallback=False)
    # with fallbacks on, the node would go to a host region, and onnxruntime refuses the activation too
    with pytest.raises(ConversionError, match="RNN.*onnxruntime refuses the model.*Gelu"):
        convert(recurrent_model("RNN", activations=["Gelu"]), dtype="fp32")
    # a parameterised activation without its parameters: onnxruntime takes its defaults, so a host region runs it
    with pytest.raises(ConversionError, match="needs its parameters"):
        convert(recurrent_model("RNN", activations=["LeakyRelu"]), dtype="fp32", fallback=False)
    assert len(convert(recurrent_model("RNN", activations=["LeakyRelu"]), dtype="fp32").region_summaries()) == 1


def test_unrolled_steps_over_the_budget_decline():
    declined(recurrent_model("RNN", seq=MAX_UNROLLED_STEPS // 2 + 1, batch=1, inputs=1, hidden=1,
                              direction="bidirectional"), f"more than the budget of {MAX_UNROLLED_STEPS}")


def test_the_budget_counts_every_recurrent_node_of_the_model():
    """Two stacked layers of 3/4 of the budget each: the second one declines (and runs on the host)."""
    seq = MAX_UNROLLED_STEPS * 3 // 4
    rng = np.random.default_rng(0)
    w = [numpy_helper.from_array(rng.standard_normal((1, 2, 2)).astype(np.float32), n) for n in ("W", "R")]
    nodes = [helper.make_node("RNN", ["X", "W", "R"], ["Y1"], hidden_size=2),
             helper.make_node("Squeeze", ["Y1", "axis"], ["S"]),
             helper.make_node("RNN", ["S", "W", "R"], ["", "Y_h"], hidden_size=2)]
    axis = numpy_helper.from_array(np.array([1], np.int64), "axis")
    graph = helper.make_graph(nodes, "stacked", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [seq, 1, 2])],
                              [helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, None)], w + [axis])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    declined(model, f"unroll to {2 * seq} steps with the model's earlier recurrent nodes")


def test_a_clip_that_is_not_positive_is_one_error():
    with pytest.raises(ConversionError, match="clip must be positive, got -1.0"):
        convert(recurrent_model("RNN", clip=-1.0), dtype="fp32", fallback=False)
    # onnxruntime runs it, so with fallbacks on (the default) the node goes to a host region
    assert len(convert(recurrent_model("RNN", clip=-1.0), dtype="fp32").region_summaries()) == 1


def test_a_hidden_size_that_contradicts_r_is_one_error():
    model = recurrent_model("GRU")
    next(a for a in model.graph.node[0].attribute if a.name == "hidden_size").i = 7  # R says 6
    # validation (frontend/validate_recurrent.py) refuses it before the lowering's "hidden_size 7 does not match R"
    with pytest.raises(ConversionError, match=r"W has shape \[1, 18, 4\]; it must be \[1, 21, 4\] \(hidden_size 7\)"):
        convert(model, dtype="fp32", fallback=False)
