"""tests/fuzz/worker.py and the oracle's reference deadline: a case that never ends, or kills its process, is
classified and the campaign goes on (fuzz seed 163 case 1008: onnxruntime's run of a Loop of 2^30 iterations
held the campaign for ever; the oracle's alarm cannot interrupt onnxruntime)."""
from __future__ import annotations

import numpy as np
import onnx

from tests.test_ort import ENDLESS_LOOP as ENDLESS  # (one Loop of 2^30 iterations for both)

RELU = """
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3] x) => (float[2, 3] y) { y = Relu (x) }
"""


def _case(seed: int, index: int):
    """The cases of the test campaign, made in the case process: 0 onnxruntime never ends, 1 the converter never
    ends, 2 the converter kills its process, 3 a plain model, 4 the fuzzer itself fails."""
    import importlib
    import os
    import signal
    import time

    converter = importlib.import_module("onnx2ttnn.convert")  # (the package's `convert` is the function)

    if index == 0:
        return onnx.parser.parse_model(ENDLESS), "endless Loop"
    if index == 1:
        converter.convert = lambda *args, **kwargs: time.sleep(3600)
    if index == 2:
        converter.convert = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGSEGV)
    if index == 4:
        raise ValueError("no such case")
    return onnx.parser.parse_model(RELU), f"relu {index}"


def test_a_case_that_never_ends_or_crashes_is_classified_and_the_campaign_goes_on():
    from tests.fuzz.campaign import run

    summary = run(7, 5, make="tests.test_fuzz_worker:_case", seconds=3)
    print(summary.text())
    assert summary.outcomes == {"ort-timeout": 1, "timeout": 1, "crash": 2, "verified": 1}, summary.outcomes
    assert [(index, outcome.kind) for index, _, outcome in summary.unjudged] == [(0, "ort-timeout")]
    assert "onnxruntime's reference did not end in 3 s" in summary.unjudged[0][2].detail
    findings = {index: outcome for index, _, outcome in summary.findings}
    assert sorted(findings) == [1, 2, 4]
    assert findings[1].kind == "timeout" and findings[1].detail == "over 3 s in phase 'convert' (its process was killed)"
    assert findings[2].kind == "crash" and findings[2].detail == "the case's process died in phase 'convert': signal 11"
    assert findings[4].kind == "crash" and "ValueError: no such case" in findings[4].detail
    assert summary.restarts == 3  # cases 0, 1 and 2; case 4's failure was caught in the process
    assert "case 0 endless Loop" in summary.text() and "case 2 [crash] relu 2" in summary.text()


def test_a_reference_past_its_deadline_is_not_judged_but_the_model_is_converted(monkeypatch):
    """In the process itself, the oracle stops onnxruntime's run at REFERENCE_SECONDS and still converts."""
    from tests.fuzz import oracle

    monkeypatch.setattr(oracle, "REFERENCE_SECONDS", 0.5)
    outcome = oracle.run_case(onnx.parser.parse_model(ENDLESS), np.random.default_rng(0))
    assert outcome.kind == "ort-timeout" and not outcome.finding, outcome
    assert outcome.detail == "converted; not compared: onnxruntime's reference did not end"
    assert outcome.ort == "timeout: onnxruntime's run did not finish in 0.5 s"
