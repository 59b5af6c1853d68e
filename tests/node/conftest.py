"""The node-test summary line: `node tests: P passed / C claimed / 1884 total` (and the bf16 line)."""
from __future__ import annotations

from tests.node.cases import all_cases, running_cases
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
