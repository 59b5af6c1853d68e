"""LSTM, GRU and RNN (onnx2ttnn/lowering/recurrent.py) on one-node models with trained-style constant weights,
against onnxruntime in fp32 and bf16, with leak and ttnn-API checks; and the LSTM variant the rule declines
(what every cell declines is tests/lowering/test_recurrent_unroll.py)."""
from __future__ import annotations

import numpy as np
import pytest

from onnx2ttnn.convert import convert
from onnx2ttnn.verify import verify
from tests.lowering._recurrent_models import declined, feeds, recurrent_model
from tests.program_run import run
from tests.real_ttnn.conftest import ttnn_mock  # noqa: F401  (the session fixture, shared)


CASES = {
    "lstm-forward-initial-states": ("LSTM", dict(initial_h=True, initial_c=True)),
    "lstm-bidirectional-batch-first-peepholes": ("LSTM", dict(direction="bidirectional", layout=1, peepholes=True,
                                                              initial_c=True)),
    "lstm-reverse-no-bias-clip": ("LSTM", dict(direction="reverse", bias=False, clip=0.7, initial_h=True)),
    "lstm-peepholes-zero-state": ("LSTM", dict(peepholes=True, outputs=("Y_c",))),
    # a clip below the cell state: onnxruntime clips the gates' inputs, not Ct's input to h() (fuzz seed 73 case
    # 1731 was 0.12 off when the program clipped it too)
    "lstm-clip-below-the-cell-state": ("LSTM", dict(clip=0.2, initial_h=True, initial_c=True, peepholes=True)),
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


def test_input_forget_runs_on_the_host():
    model = recurrent_model("LSTM", input_forget=1, peepholes=True, initial_c=True)
    declined(model, "input_forget")
    report = verify(model, inputs=feeds(model), dtype="fp32")
    assert report.passed, report.text()


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


@pytest.mark.parametrize("sequence_lens", [None, [5, 2, 4]])  # the unrolled lowering; the host fallback
def test_lstm_clip_bounds_the_gates_but_not_the_cell_state_into_h(sequence_lens):
    """Found by the fuzzer (seed 67 case 623: clip 2.0, Y 0.0018 off onnxruntime): the lowering and the host
    fallback clipped the cell state on its way into h() too; onnxruntime clips the gates' inputs only.  Here an
    initial cell state of 3 (past clip 0.5) shows the difference at once."""
    from onnx2ttnn import ort
    from tests.fuzz.oracle import compare
    from tests.node.runner import execute

    model = recurrent_model("LSTM", clip=0.5, initial_c=True, sequence_lens=sequence_lens)
    inputs = feeds(model)
    inputs["initial_c"] = np.full_like(inputs["initial_c"], 3.0)

    names = [o.name for o in model.graph.output]
    want = dict(zip(names, ort.run(ort.session(model.SerializeToString()), names, inputs)))
    got, leaks = execute(convert(model, dtype="fp32"), inputs)
    assert leaks == []
    assert all(compare(got[name], np.asarray(want[name])) == "" for name in names)
