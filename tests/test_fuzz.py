"""Fuzzing in the test run (issue 16): a bounded campaign of tests/fuzz with a fixed seed.

Every case (a checker-valid mutant of models/ or a generated graph over the claimed ops) must end in one of:
converted and verified on the simulator against onnxruntime (fp32), or a clean `error:` (a ConversionError,
exit 2).  An internal error (exit 3), a traceback, a model onnxruntime refuses but convert accepts, a program
that crashes on the simulator, an fp32 mismatch, a call outside the ttnn API, a leak or a timeout fails the
test; the message gives the command that reruns the case.  The long campaign, any seed:
`python -m tests.fuzz.campaign --seed S --count N` (benchmarks/README.md).
"""
from __future__ import annotations

from tests.fuzz.campaign import run

SEED, COUNT = 16, 250  # about a minute on a quiet 2-core machine


def test_a_bounded_fuzz_campaign_has_no_finding():
    summary = run(SEED, COUNT)
    print(summary.text())
    assert not summary.findings, summary.text()
    # the fuzzer is not vacuous: many cases convert and verify, many are refused, most mutants are checker-valid
    assert summary.outcomes["verified"] >= COUNT // 4, summary.outcomes
    assert summary.outcomes["refused"] >= COUNT // 10, summary.outcomes
    assert summary.outcomes["no valid mutant"] <= COUNT // 20, summary.outcomes
    assert sum(summary.outcomes.values()) == COUNT
