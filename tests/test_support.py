"""The support table and docs/ops.md, generated from the lowering registry."""
from __future__ import annotations

from pathlib import Path

import onnx

from onnx2ttnn.lowering import all_rules
from onnx2ttnn.lowering.registry import FUSED_DOMAIN
from onnx2ttnn.support import (REGENERATE, claimed_op_types, fallback_ops, support_markdown, support_rows,
                               support_table)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "ops.md"


def test_docs_page_is_up_to_date():
    assert DOCS.read_text() == support_markdown(), f"docs/ops.md is stale: regenerate it with `{REGENERATE}`"


def test_claimed_op_types_are_the_onnx_rules():
    claimed = claimed_op_types()
    assert {r.op_type for r in all_rules() if r.domain == ""} | set(fallback_ops()) == claimed
    assert "Linear" not in claimed  # fused nodes (domain onnx2ttnn) are not ONNX ops a model can hold
    assert any(r.domain == FUSED_DOMAIN and r.op_type == "Linear" for r in all_rules())


def test_opset_ranges_tile_the_versions_of_each_op():
    current = onnx.defs.onnx_opset_version()
    by_op: dict[str, list] = {}
    for row in support_rows():
        by_op.setdefault(row.op, []).append(row)
    for op, rows in by_op.items():
        assert rows[-1].last == current, op
        for before, after in zip(rows, rows[1:]):
            assert after.first == before.last + 1, op
    clip = [row.opsets for row in by_op["Clip"]]
    assert clip == ["6-10", f"11-{current}"]


def test_rows_carry_ttnn_ops_and_constraints():
    rows = {(r.op, r.first): r for r in support_rows()}
    assert rows[("Split", 1)].ttnn_ops == ("slice",)
    assert rows[("Split", 1)].constraints == "as one ttnn.slice per output"
    assert rows[("Identity", 1)].cells()[2] == "(none: no ttnn call)"


def test_text_table_has_one_row_per_rule_and_the_fallback_column():
    lines = support_table().splitlines()
    assert lines[0].split()[-1] == "fallback"
    assert len(lines) == len(support_rows()) + 3  # header, rule line, count


def test_markdown_escapes_pipes():
    page = support_markdown()
    for line in page.splitlines():
        if line.startswith("| ") and "---" not in line:
            assert line.replace("\\|", "").count("|") == 6, line
