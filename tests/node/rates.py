"""Per-op pass rates over the node-test cases (shared by the rate test, the summary line and the report)."""
from __future__ import annotations

from dataclasses import dataclass

from onnx2ttnn.support import claimed_op_types
from tests.node.cases import all_cases
from tests.node.runner import result

REQUIRED_RATE = 0.95  # issue #5: every claimed op passes >= 95 % of its non-excluded cases in fp32


@dataclass
class OpRate:
    op: str
    cases: int = 0  # all cases counting for the op
    excluded: int = 0
    unclaimed: int = 0  # cases at an opset whose schema version no rule of the op was checked against
    passed_fp32: int = 0
    passed_bf16: int = 0

    @property
    def runs(self) -> int:
        return self.cases - self.excluded - self.unclaimed

    @property
    def rate(self) -> float:
        return self.passed_fp32 / self.runs if self.runs else 1.0


def op_rates(ops=None, *, bf16: bool = True) -> dict[str, OpRate]:
    """OpRate of every op in `ops` (default: the claimed ones), running the cases not yet run."""
    ops = set(claimed_op_types() if ops is None else ops)
    rates = {op: OpRate(op) for op in sorted(ops)}
    for case in all_cases():
        if case.op not in rates:
            continue
        rate = rates[case.op]
        rate.cases += 1
        if case.exclusion is not None:
            rate.excluded += 1
            continue
        if not case.claimed:
            rate.unclaimed += 1
            continue
        rate.passed_fp32 += result(case, "fp32").passed
        if bf16:
            rate.passed_bf16 += result(case, "bf16").passed
    return rates


def below_rate(rates: dict[str, OpRate]) -> dict[str, OpRate]:
    return {op: r for op, r in rates.items() if r.runs and r.rate < REQUIRED_RATE}
