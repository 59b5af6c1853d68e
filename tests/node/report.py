"""Per-op node-test table for developers: `python -m tests.node.report [--failures] [--op OP]...`.

Columns: op, cases (all counting for the op), excluded, unclaimed (at a schema version no rule covers),
passed fp32, passed bf16, rate (fp32 passes over the cases that run).  `--failures` lists every failing case
with its stage and message; `--update-known-failures` rewrites tests/node/known_failures.py from this run
(keeping existing reasons).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from tests.node import known_failures
from tests.node.cases import running_cases
from tests.node.rates import REQUIRED_RATE, below_rate, op_rates
from tests.node.runner import result


def table(rates) -> str:
    lines = [f"{'op':24} {'cases':>5} {'excluded':>8} {'unclaimed':>9} {'fp32':>5} {'bf16':>5} {'rate':>6}"]
    for r in rates.values():
        flag = "" if r.rate >= REQUIRED_RATE else "  < 95%"
        lines.append(f"{r.op:24} {r.cases:5} {r.excluded:8} {r.unclaimed:9} {r.passed_fp32:5} {r.passed_bf16:5} "
                     f"{r.rate:6.0%}{flag}")
    runs = sum(r.runs for r in rates.values())
    fp32 = sum(r.passed_fp32 for r in rates.values())
    bf16 = sum(r.passed_bf16 for r in rates.values())
    lines.append(f"{'total':24} {sum(r.cases for r in rates.values()):5} "
                 f"{sum(r.excluded for r in rates.values()):8} {sum(r.unclaimed for r in rates.values()):9} "
                 f"{fp32:5} {bf16:5} {fp32 / max(runs, 1):6.0%}")
    return "\n".join(lines)


def _reason(outcome) -> str:
    return f"{outcome.stage}: {outcome.message}"[:100]


def _dict_literal(name: str, entries: dict[str, str]) -> str:
    lines = [f"{name}: dict[str, str] = {{"]
    lines += [f"    {key!r}: {value!r}," for key, value in sorted(entries.items())]
    return "\n".join(lines) + "\n}\n"


def write_known_failures(path: str) -> None:
    """Rewrite the known-failures file from the current fp32 results."""
    failing = {}
    for case in running_cases():
        outcome = result(case, "fp32")
        if not outcome.passed:
            failing[case.name] = known_failures.KNOWN_FAILURES.get(case.name) or _reason(outcome)
    below = {op: known_failures.KNOWN_BELOW_RATE.get(op, "below 95 %") for op in below_rate(op_rates())}
    with open(path) as handle:
        head = handle.read().split("KNOWN_FAILURES", 1)[0]
    body = _dict_literal("KNOWN_FAILURES", failing) + "\n" + _dict_literal("KNOWN_BELOW_RATE", below)
    with open(path, "w") as handle:
        handle.write(head + body)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", action="append", help="only this op (repeatable)")
    parser.add_argument("--failures", action="store_true", help="list failing cases")
    parser.add_argument("--no-bf16", action="store_true", help="skip the bf16 runs")
    parser.add_argument("--update-known-failures", action="store_true",
                        help="rewrite tests/node/known_failures.py from this run")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rates = op_rates(args.op, bf16=not args.no_bf16)
    print(table(rates))
    if args.failures:
        for case in running_cases():
            if case.op in rates and not result(case, "fp32").passed:
                outcome = result(case, "fp32")
                print(f"{case.op:20} {case.name:50} {outcome.stage}: {outcome.message}")
    if args.update_known_failures:
        write_known_failures(os.path.join(os.path.dirname(__file__), "known_failures.py"))
    print(f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
