"""ONNX backend node tests: every non-excluded case of a claimed op converts, runs and matches in fp32.

Known failures (known_failures.py) are xfail(strict=True): fixing one makes its test fail until the entry
is removed.  The bf16 result of every case is computed alongside and only reported (summary line and
`python -m tests.node.report`).
"""
from __future__ import annotations

import pytest

from tests.node.cases import running_cases
from tests.node.known_failures import KNOWN_BELOW_RATE, KNOWN_FAILURES
from tests.node.rates import REQUIRED_RATE, below_rate, op_rates
from tests.node.runner import result


def _params():
    for case in running_cases():
        marks = ()
        if case.name in KNOWN_FAILURES:
            marks = (pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[case.name]),)
        yield pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_node_case(case):
    result(case, "bf16")  # reported only
    outcome = result(case, "fp32")
    assert outcome.passed, f"{case.op}: {outcome.stage}: {outcome.message}"


def test_known_failures_are_cases_that_run():
    names = {c.name for c in running_cases()}
    assert sorted(set(KNOWN_FAILURES) - names) == []


def test_claimed_ops_pass_rate():
    """Every claimed op passes >= 95 % of its non-excluded cases (known failures count as failures); the
    ops still below are listed in KNOWN_BELOW_RATE, which must match exactly."""
    offenders = below_rate(op_rates())
    lines = [f"  {r.op}: {r.passed_fp32}/{r.runs} = {r.rate:.0%}" for r in offenders.values()]
    print(f"claimed ops below {REQUIRED_RATE:.0%} in fp32:\n" + ("\n".join(lines) or "  none"))
    unexpected = sorted(set(offenders) - set(KNOWN_BELOW_RATE))
    fixed = sorted(set(KNOWN_BELOW_RATE) - set(offenders))
    assert not unexpected, "ops below the required pass rate:\n" + "\n".join(
        line for line in lines if line.split(":")[0].strip() in unexpected)
    assert not fixed, f"ops now at >= {REQUIRED_RATE:.0%}: remove them from KNOWN_BELOW_RATE: {fixed}"
