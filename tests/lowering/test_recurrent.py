"""LSTM, GRU and RNN (onnx2ttnn/lowering/recurrent.py) on one-node models with trained-style constant weights,
against onnxruntime in fp32 and bf16, with leak and ttnn-API checks; and the variants the rule declines."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.recurrent import MAX_UNROLLED_STEPS
from onnx2ttnn.verify import verify
from tests.program_run import forward_text, run
from tests.real_ttnn.conftest import ttnn_mock  # noqa: F401  (the session fixture, shared)

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def recurrent_model(op, seq=5, batch=3, inputs=4, hidden=6, direction="forward", layout=0, bias=True,
                    initial_h=False, initial_c=False, peepholes=False, outputs=("Y", "Y_h", "Y_c"), seed=0,
                    opset=22, sequence_lens=None, runtime_weights=False, **attrs):
    """`Y, Y_h[, Y_c] = op(X, W, R, B, sequence_lens, initial_h[, initial_c, P])` with constant weights."""
    rng = np.random.default_rng(seed)
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    x_shape = [seq, batch, inputs] if layout == 0 else [batch, seq, inputs]
    state = [dirs, batch, hidden] if layout == 0 else [batch, dirs, hidden]
    graph_inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)]
    inits = [numpy_helper.from_array((rng.standard_normal((dirs, g * hidden, inputs)) * 0.5).astype(np.float32), "W"),
             numpy_helper.from_array((rng.standard_normal((dirs, g * hidden, hidden)) * 0.5).astype(np.float32), "R")]
    if runtime_weights:
        graph_inputs.append(helper.make_tensor_value_info("W", TensorProto.FLOAT, [dirs, g * hidden, inputs]))
        inits = inits[1:]
    names = ["X", "W", "R", "", "", "", "", ""]
    if bias:
        inits.append(numpy_helper.from_array((rng.standard_normal((dirs, 2 * g * hidden)) * 0.5).astype(np.float32),
                                             "B"))
        names[3] = "B"
    if sequence_lens is not None:
        inits.append(numpy_helper.from_array(np.array(sequence_lens, np.int32), "sequence_lens"))
        names[4] = "sequence_lens"
    if initial_h:
        graph_inputs.append(helper.make_tensor_value_info("initial_h", TensorProto.FLOAT, state))
        names[5] = "initial_h"
    if initial_c:
        graph_inputs.append(helper.make_tensor_value_info("initial_c", TensorProto.FLOAT, state))
        names[6] = "initial_c"
    if peepholes:
        inits.append(numpy_helper.from_array((rng.standard_normal((dirs, 3 * hidden)) * 0.5).astype(np.float32), "P"))
        names[7] = "P"
    while names and not names[-1]:
        names.pop()
    if layout:
        attrs["layout"] = layout
    outs = [o if o in outputs else "" for o in ("Y", "Y_h", "Y_c")[:3 if op == "LSTM" else 2]]
    while not outs[-1]:
        outs.pop()
    node = helper.make_node(op, names, outs, hidden_size=hidden, direction=direction, **attrs)
    graph = helper.make_graph([node], op.lower(), graph_inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs if o], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def feeds(model, seed=1):
    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    return {vi.name: rng.standard_normal([d.dim_value for d in vi.type.tensor_type.shape.dim]).astype(np.float32)
            for vi in model.graph.input if vi.name not in inits}


CASES = {
    "lstm-forward-initial-states": ("LSTM", dict(initial_h=True, initial_c=True)),
    "lstm-bidirectional-batch-first-peepholes": ("LSTM", dict(direction="bidirectional", layout=1, peepholes=True,
                                                              initial_c=True)),
    "lstm-reverse-no-bias-clip": ("LSTM", dict(direction="reverse", bias=False, clip=0.7, initial_h=True)),
    "lstm-peepholes-zero-state": ("LSTM", dict(peepholes=True, outputs=("Y_c",))),
    "lstm-activations": ("LSTM", dict(activations=["HardSigmoid", "ScaledTanh", "LeakyRelu"],
                                      activation_alpha=[0.3, 0.8, 0.2], activation_beta=[0.4, 1.3])),
    "lstm-full-sequence-lens-opset14": ("LSTM", dict(sequence_lens=[5, 5, 5], opset=14, outputs=("Y",))),
    "lstm-opset7": ("LSTM", dict(opset=7, batch=1, seq=3)),
    "gru-bidirectional-initial-h": ("GRU", dict(direction="bidirectional", initial_h=True)),
    "gru-linear-before-reset": ("GRU", dict(linear_before_reset=1)),
    "gru-linear-before-reset-initial-h-batch-first": ("GRU", dict(linear_before_reset=1, initial_h=True, layout=1,
                                                                  direction="reverse")),
    "gru-clip-no-bias": ("GRU", dict(clip=0.5, bias=False, initial_h=True, outputs=("Y_h",))),
    "gru-activations": ("GRU", dict(activations=["Softsign", "Affine"], activation_alpha=[0.7],
                                    activation_beta=[0.1])),
    "rnn-bidirectional-relu": ("RNN", dict(direction="bidirectional", activations=["Relu", "Tanh"],
                                           initial_h=True)),
    "rnn-batch-first-initial-h": ("RNN", dict(layout=1, initial_h=True, direction="bidirectional")),
    "rnn-leaky": ("RNN", dict(activations=["LeakyRelu"], activation_alpha=[0.1])),
    "rnn-hidden-40-long": ("RNN", dict(seq=12, hidden=40, inputs=33, batch=2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_recurrent_matches_onnxruntime(name):
    op, kwargs = CASES[name]
    model = recurrent_model(op, **kwargs)
    inputs = feeds(model)
    got, leaks, source = run(model, inputs)
    assert leaks == []
    assert "ttnn.linear(" in source
    if kwargs.get("layout"):  # onnxruntime refuses layout 1 ("Batchwise recurrent operations (layout == 1) are
        # not supported"): the onnx reference implementation is the oracle
        from onnx.reference import ReferenceEvaluator

        names = [o.name for o in model.graph.output]
        for name, want in zip(names, ReferenceEvaluator(model).run(None, inputs)):
            np.testing.assert_allclose(got[name].numpy(), want, rtol=1e-4, atol=1e-5)
        return
    for dtype in ("fp32", "bf16"):
        report = verify(model, inputs=inputs, dtype=dtype)
        assert report.passed, report.text()


def test_one_input_projection_and_one_recurrent_matmul_per_step():
    """LSTM, seq 5, bidirectional: one linear projects all 5 steps of both directions, then one linear per
    step and direction (the first step of each direction has a zero state and needs none)."""
    source = convert(recurrent_model("LSTM", direction="bidirectional"), dtype="fp32").source
    assert forward_text(source).count("ttnn.linear(") == 1 + 2 * 4
    source = convert(recurrent_model("LSTM", direction="bidirectional", initial_h=True), dtype="fp32").source
    assert forward_text(source).count("ttnn.linear(") == 1 + 2 * 5
    gru = convert(recurrent_model("GRU", initial_h=True), dtype="fp32").source
    assert forward_text(gru).count("ttnn.linear(") == 1 + 2 * 5  # linear_before_reset=0: h R_zr^T and (r * h) R_h^T


def _declined(model, match, fallback=True):
    """The device rule declines `model`'s node with a reason matching `match`: without fallbacks the
    conversion names it; with them (the default) the node runs on the host, counted in the summary."""
    with pytest.raises(ConversionError, match=match):
        convert(model, dtype="fp32", fallback=False)
    if fallback:
        conversion = convert(model, dtype="fp32")
        assert sum(conversion.fallback_counts().values()) == 1, conversion.fallback_counts()
        return conversion
    return None


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_unequal_sequence_lens_run_on_the_host_and_match_onnxruntime(op):
    model = recurrent_model(op, sequence_lens=[5, 3, 1], direction="bidirectional", initial_h=True)
    _declined(model, r"sequence_lens \[5, 3, 1\] are not all")
    inputs = feeds(model)
    got, leaks, _ = run(model, inputs)
    assert leaks == []
    report = verify(model, inputs=inputs, dtype="fp32")
    assert report.passed, report.text()


def test_runtime_weights_run_on_the_host():
    model = recurrent_model("GRU", runtime_weights=True, linear_before_reset=1)
    _declined(model, "W and R must be constants")
    report = verify(model, inputs=feeds(model), dtype="fp32")
    assert report.passed, report.text()


def test_input_forget_runs_on_the_host():
    model = recurrent_model("LSTM", input_forget=1, peepholes=True, initial_c=True)
    _declined(model, "input_forget")
    report = verify(model, inputs=feeds(model), dtype="fp32")
    assert report.passed, report.text()


def test_unknown_activations_are_refused_by_both():
    _declined(recurrent_model("RNN", activations=["Gelu"]), "activation 'Gelu' has no ttnn lowering", fallback=False)
    # with fallbacks on, the node would go to a host region, and onnxruntime refuses the activation too
    with pytest.raises(ConversionError, match="RNN.*onnxruntime refuses the model.*Gelu"):
        convert(recurrent_model("RNN", activations=["Gelu"]), dtype="fp32")
    # a parameterised activation without its parameters: onnxruntime takes its defaults, so a host region runs it
    with pytest.raises(ConversionError, match="needs its parameters"):
        convert(recurrent_model("RNN", activations=["LeakyRelu"]), dtype="fp32", fallback=False)
    assert len(convert(recurrent_model("RNN", activations=["LeakyRelu"]), dtype="fp32").region_summaries()) == 1


def test_unrolled_steps_over_the_budget_decline():
    _declined(recurrent_model("RNN", seq=MAX_UNROLLED_STEPS // 2 + 1, batch=1, inputs=1, hidden=1,
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
    _declined(model, f"unroll to {2 * seq} steps with the model's earlier recurrent nodes")


def test_a_clip_that_is_not_positive_is_one_error():
    with pytest.raises(ConversionError, match="clip must be positive, got -1.0"):
        convert(recurrent_model("RNN", clip=-1.0), dtype="fp32", fallback=False)
    # onnxruntime runs it, so with fallbacks on (the default) the node goes to a host region
    assert len(convert(recurrent_model("RNN", clip=-1.0), dtype="fp32").region_summaries()) == 1


MOCK_CASES = {
    "lstm-bidirectional-batch-first-peepholes-clip": ("LSTM", dict(direction="bidirectional", layout=1, peepholes=True,
                                                                   initial_h=True, initial_c=True, clip=2.0)),
    "gru-both-resets": ("GRU", dict(direction="bidirectional", initial_h=True)),
    "gru-linear-before-reset-batch-first": ("GRU", dict(linear_before_reset=1, layout=1)),
    "rnn-short-sequence-lens-on-the-host": ("RNN", dict(sequence_lens=[5, 2, 4], initial_h=True)),
}


@pytest.mark.parametrize("name", sorted(MOCK_CASES))
def test_recurrent_programs_run_on_real_ttnn(ttnn_mock, name, tmp_path):  # noqa: F811
    """The program runs to the end on the real ttnn mock and leaves nothing allocated."""
    op, kwargs = MOCK_CASES[name]
    program = str(tmp_path / "model_ttnn.py")
    convert(recurrent_model(op, **kwargs), program).write(program)
    outcome = ttnn_mock.run_program(program)
    assert outcome["ok"], outcome.get("error")
    assert sum(outcome["leaked_buffers_per_bank"].values()) == 0


def test_a_hidden_size_that_contradicts_r_is_one_error():
    model = recurrent_model("GRU")
    next(a for a in model.graph.node[0].attribute if a.name == "hidden_size").i = 7  # R says 6
    with pytest.raises(ConversionError, match="hidden_size 7 does not match R"):
        convert(model, dtype="fp32", fallback=False)
