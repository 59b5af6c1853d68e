"""Node-test cases of claimed ops that fail today (case name -> short reason), and the ops still below the
95 % pass rate.  The cases are xfail(strict=True): a fix makes the test fail until its entry is removed.
Regenerate with `python -m tests.node.report --update-known-failures` (existing reasons are kept).
"""

KNOWN_FAILURES: dict[str, str] = {
}

KNOWN_BELOW_RATE: dict[str, str] = {
}
