"""The support table, generated from the lowering registry (`onnx2ttnn ops`, docs/ops.md).

One row per lowering rule of the ai.onnx domain: the op, the model opsets the rule serves (its
since-version up to the next rule's, or the newest opset onnx knows), the ttnn ops it emits, its
constraints (the rule's note) and the host fallback, if any.  `python -m onnx2ttnn.support` prints the
Markdown page checked in as docs/ops.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import onnx

from onnx2ttnn.fallback import all_fallbacks
from onnx2ttnn.lowering import all_rules

REGENERATE = "python -m onnx2ttnn.support > docs/ops.md"
COLUMNS = ("op", "opsets", "ttnn ops", "constraints", "fallback")


@dataclass(frozen=True)
class SupportRow:
    op: str
    first: int  # first model opset this row serves
    last: int  # last one (inclusive)
    ttnn_ops: tuple[str, ...]
    constraints: str
    fallback: str = ""

    @property
    def opsets(self) -> str:
        return f"{self.first}-{self.last}" if self.first != self.last else str(self.first)

    def cells(self) -> tuple[str, ...]:
        return (self.op, self.opsets, ", ".join(self.ttnn_ops) or "(none: no ttnn call)", self.constraints,
                self.fallback)


def fallback_ops() -> dict[str, str]:
    """ONNX op type (ai.onnx) -> how its host fallback computes it (torch on the host, and the rule's note).

    The fallback computes the node when the op has no lowering rule, or when its rule declines the node."""
    out = {}
    for fb in all_fallbacks():
        if _onnx_domain(fb.domain):
            out[fb.op_type] = "; ".join(n for n in (f"torch on the host ({fb.helper})", fb.note) if n)
    return out


def _onnx_domain(domain: str) -> bool:
    return domain in ("", "ai.onnx")


def claimed_op_types() -> frozenset[str]:
    """The ai.onnx op types onnx2ttnn converts: those with a lowering rule, plus those with a host fallback."""
    return frozenset(r.op_type for r in all_rules() if _onnx_domain(r.domain)) | frozenset(fallback_ops())


def support_rows() -> list[SupportRow]:
    """The rows of the support table, by op type then opset."""
    current = onnx.defs.onnx_opset_version()
    fallbacks = fallback_ops()
    by_op: dict[str, list] = {}
    for rule in all_rules():
        if _onnx_domain(rule.domain):
            by_op.setdefault(rule.op_type, []).append(rule)
    rows = []
    for op in sorted(set(by_op) | set(fallbacks)):
        rules = by_op.get(op, [])
        for rule, following in zip(rules, rules[1:] + [None]):
            last = following.since - 1 if following else current
            rows.append(SupportRow(op, rule.since, last, rule.ttnn_ops, rule.note, fallbacks.get(op, "")))
        if not rules:
            rows.append(SupportRow(op, 1, current, (), "", fallbacks[op]))
    return rows


def support_table() -> str:
    """The table as aligned plain text (what `onnx2ttnn ops` prints)."""
    cells = [COLUMNS] + [row.cells() for row in support_rows()]
    widths = [max(len(r[i]) for r in cells) for i in range(len(COLUMNS) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in cells]
    lines = [line.rstrip() for line in lines]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * len(COLUMNS[-1]))
    lines.append(f"{len(claimed_op_types())} ONNX op types")
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def support_markdown() -> str:
    """The docs page docs/ops.md."""
    lines = [
        "# Supported ONNX ops",
        "",
        f"Generated from the lowering registry by `{REGENERATE}` (also `onnx2ttnn ops --markdown`);",
        "tests/test_support.py fails when this page is stale.",
        "",
        f"{len(claimed_op_types())} ONNX op types (domain ai.onnx). *opsets* are the model opsets a rule serves;",
        "*constraints* are what the rule needs beyond the ONNX spec (the conversion fails with a message",
        "otherwise); *fallback* says how an op without a ttnn equivalent is computed on the host.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for row in support_rows():
        lines.append("| " + " | ".join(_md(c) for c in row.cells()) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(support_markdown(), end="")
