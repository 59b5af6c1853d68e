"""The node-test summary line: `node tests: P passed / C claimed / 1884 total` (and the bf16 line, and the
line of the cases re-stamped at older schema versions when they ran)."""
from __future__ import annotations

from tests.node.cases import all_cases, running_cases
from tests.node.restamped import restamped_cases
from tests.node.runner import cached


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    fp32 = cached("fp32")
    if not fp32:
        return
    claimed = running_cases()
    total = len(all_cases())
    passed = sum(fp32[c.name].passed for c in claimed if c.name in fp32)
    not_run = sum(c.name not in fp32 for c in claimed)
    suffix = f" ({not_run} claimed cases not run)" if not_run else ""
    terminalreporter.write_line(f"node tests: {passed} passed / {len(claimed)} claimed / {total} total{suffix}")
    bf16 = cached("bf16")
    passed16 = sum(bf16[c.name].passed for c in claimed if c.name in bf16)
    terminalreporter.write_line(f"node tests bf16 (PCC >= 0.99, reported only): {passed16} passed / "
                                f"{len(claimed)} claimed")
    if not any("@opset" in name for name in fp32):
        return
    restamped = [c for c in restamped_cases() if c.name in fp32]
    if restamped:
        passed_old = sum(fp32[c.name].passed for c in restamped)
        terminalreporter.write_line(f"node tests at older schema versions (re-stamped): {passed_old} passed / "
                                    f"{len(restamped)} run of {len(restamped_cases())}")
