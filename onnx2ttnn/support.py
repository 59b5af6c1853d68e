"""The support table, generated from the lowering and host-fallback registries (`onnx2ttnn ops`, docs/ops.md).

One row per lowering rule of the ai.onnx domain: the op, the model opsets the rule serves (those whose
schema version it names), the schema versions it was checked against, the ttnn ops it emits, its
constraints (the rule's note) and the host fallbacks covering those versions; then one row per host
fallback for the schema versions no lowering rule names.  An opset missing from an op's rows is
unsupported.  `python -m onnx2ttnn.support` prints the Markdown page checked in as docs/ops.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import onnx

from onnx2ttnn.fallback import all_fallbacks, lookup_fallback
from onnx2ttnn.fallback.regions import REGION_CHECKED, region_checked
from onnx2ttnn.lowering import all_rules, lookup
from onnx2ttnn.lowering.registry import FUSED_DOMAIN
from onnx2ttnn.lowering.versions import is_onnx_domain, listed, newest_opset, served_opsets

REGENERATE = "python -m onnx2ttnn.support > docs/ops.md"
COLUMNS = ("op", "opsets", "schema versions", "ttnn ops", "constraints", "fallback")
REGION_CELL = "onnxruntime on the host (host region)"


@dataclass(frozen=True)
class SupportRow:
    op: str
    versions: tuple[int, ...]  # the schema versions the row's rule was checked against
    ttnn_ops: tuple[str, ...]
    constraints: str
    fallback: str = ""

    @property
    def served(self) -> list[tuple[int, int]]:
        """The model opset ranges (first, last) the row serves."""
        return served_opsets("", self.op, self.versions)

    @property
    def opsets(self) -> str:
        return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in self.served)

    def cells(self) -> tuple[str, ...]:
        return (self.op, self.opsets, listed(self.versions), ", ".join(self.ttnn_ops) or "(none: no ttnn call)",
                self.constraints, self.fallback)


def _describe(fallback) -> str:
    return "; ".join(n for n in (f"torch on the host ({fallback.helper})", fallback.note) if n)


def _fallback_cell(fallbacks: list, versions: tuple[int, ...]) -> str:
    """How the op's host fallbacks compute the schema versions `versions` (those they cover)."""
    covered: dict[str, list[int]] = {}
    for fb in fallbacks:
        covered.setdefault(_describe(fb), []).extend(v for v in versions if v in fb.versions)
    return "; ".join(text + ("" if len(shared) == len(versions) else f" (schema {listed(sorted(shared))})")
                     for text, shared in covered.items() if shared)


def claimed_op_types() -> frozenset[str]:
    """The ai.onnx op types onnx2ttnn converts at some opset: those with a lowering rule or a host fallback, and
    those its node tests pass through host regions (fallback/regions.py REGION_CHECKED)."""
    return frozenset(r.op_type for r in all_rules() + all_fallbacks() if is_onnx_domain(r.domain)) | \
        frozenset(REGION_CHECKED)


def claimed(op_type: str, opset: int) -> bool:
    """Whether a lowering rule, a host fallback or a checked host region serves ai.onnx `op_type` in a model of
    opset `opset`."""
    return lookup("", op_type, opset) is not None or lookup_fallback("", op_type, opset) is not None or \
        region_checked(op_type, opset)


def support_rows() -> list[SupportRow]:
    """The rows of the support table, by op type then schema version."""
    rules: dict[str, list] = {}
    fallbacks: dict[str, list] = {}
    for rule in all_rules():
        if is_onnx_domain(rule.domain):
            rules.setdefault(rule.op_type, []).append(rule)
    for fb in all_fallbacks():
        if is_onnx_domain(fb.domain):
            fallbacks.setdefault(fb.op_type, []).append(fb)
    rows = []
    for op in sorted(set(rules) | set(fallbacks)):
        own = [SupportRow(op, r.versions, r.ttnn_ops, r.note, _fallback_cell(fallbacks.get(op, []), r.versions))
               for r in rules.get(op, [])]
        lowered = {v for r in rules.get(op, []) for v in r.versions}
        for fb in fallbacks.get(op, []):
            rest = tuple(v for v in fb.versions if v not in lowered)
            if rest:
                own.append(SupportRow(op, rest, (), "", _describe(fb)))
        rows += sorted(own, key=lambda row: row.versions[0])
    for op in sorted(REGION_CHECKED):  # (no rule or fallback serves these: they come after the rows above)
        rows.append(SupportRow(op, REGION_CHECKED[op], (), "", REGION_CELL))
    return sorted(rows, key=lambda row: (row.op, row.versions[0]))


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
        f"Generated from the lowering and host-fallback registries by `{REGENERATE}`",
        "(also `onnx2ttnn ops --markdown`); tests/test_support.py fails when this page is stale.",
        "",
        f"{len(claimed_op_types())} ONNX op types (domain ai.onnx).  *schema versions* are the since-versions of",
        "the op's ONNX schemas a rule was checked against; *opsets* are the model opsets whose schema version is",
        f"one of them (up to {newest_opset()}, the newest opset onnx {onnx.__version__} knows).  A model opset",
        "missing from an op's rows is unsupported: the conversion names the op and its schema version.",
        "*constraints* are what the rule needs beyond the ONNX spec (the conversion fails with a message",
        "otherwise); *fallback* says how the host computes the op where ttnn has no equivalent or the rule",
        "declines a node.  Any op onnxruntime runs that no row serves (a com.microsoft contrib op, a Loop with a",
        "data-dependent exit, sequence ops) also converts: it runs in a host region; the rows marked",
        f"*{REGION_CELL}* are those whose node tests pass that way.",
        "ai.onnx.ml ops (a scikit-learn export) run in host regions too; ZipMap's seq(map) is returned as onnxruntime gives it.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for row in support_rows():
        lines.append("| " + " | ".join(_md(c) for c in row.cells()) + " |")
    contrib = [r for r in all_rules() if not is_onnx_domain(r.domain) and r.domain != FUSED_DOMAIN]
    if contrib:
        lines += ["", "Contrib ops lowered to ttnn (the other contrib ops run in host regions):", ""]
        lines += [f"- `{r.domain}::{r.op_type}`: {_md(r.note)}" for r in contrib]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(support_markdown(), end="")
