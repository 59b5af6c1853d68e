"""The support table and docs/ops.md, generated from the lowering and host-fallback registries."""
from __future__ import annotations

from pathlib import Path

import onnx

from onnx2ttnn.fallback import all_fallbacks
from onnx2ttnn.fallback.regions import REGION_CHECKED
from onnx2ttnn.lowering import all_rules
from onnx2ttnn.lowering.registry import FUSED_DOMAIN
from onnx2ttnn.support import (COLUMNS, REGENERATE, claimed, claimed_op_types, support_markdown, support_rows,
                               support_table)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "ops.md"


def test_docs_page_is_up_to_date():
    assert DOCS.read_text() == support_markdown(), f"docs/ops.md is stale: regenerate it with `{REGENERATE}`"


def test_claimed_op_types_are_the_onnx_rules():
    claimed = claimed_op_types()
    assert {r.op_type for r in all_rules() if r.domain == ""} | {f.op_type for f in all_fallbacks()} | \
        set(REGION_CHECKED) == claimed
    assert "Linear" not in claimed  # fused nodes (domain onnx2ttnn) are not ONNX ops a model can hold
    assert any(r.domain == FUSED_DOMAIN and r.op_type == "Linear" for r in all_rules())


def test_an_op_is_claimed_at_the_opsets_of_its_checked_versions():
    assert claimed("Split", 18) and claimed("Split", 2)
    assert not claimed("Split", 1)  # Split-1 is not claimed
    assert claimed("OneHot", 11) and not claimed("OneHot", 9)  # a fallback-only op
    assert not claimed("Abs", onnx.defs.onnx_opset_version() + 1)


def test_rows_serve_exactly_their_schema_versions():
    current = onnx.defs.onnx_opset_version()
    by_op: dict[str, list] = {}
    for row in support_rows():
        by_op.setdefault(row.op, []).append(row)
    for op, rows in by_op.items():
        versions = [v for row in rows for v in row.versions]
        assert versions == sorted(set(versions)), op  # no version in two rows, rows in version order
        for row in rows:
            for first, last in row.served:
                for opset in (first, last):
                    assert onnx.defs.get_schema(op, max_inclusive_version=opset, domain="").since_version \
                        in row.versions, (op, opset)
    assert [row.opsets for row in by_op["Clip"]] == ["6-10", f"11-{current}"]
    assert [row.opsets for row in by_op["Split"]] == ["2-12", "13-17", f"18-{current}"]
    assert [row.opsets for row in by_op["Add"]] == [f"7-{current}"]  # Add-1 and 6 are not claimed


def test_rows_carry_versions_ttnn_ops_constraints_and_fallbacks():
    rows = {(r.op, r.versions[0]): r for r in support_rows()}
    assert rows[("Split", 2)].ttnn_ops == ("slice",)
    assert rows[("Split", 2)].constraints == "as one ttnn.slice per output"
    assert rows[("Split", 2)].cells()[2] == "2, 11"
    assert rows[("Identity", 1)].cells()[3] == "(none: no ttnn call)"
    assert rows[("ArgMax", 1)].fallback == "torch on the host (host_arg_reduce)"  # two fallbacks, one text
    assert rows[("OneHot", 11)].cells()[:3] == ("OneHot", f"11-{onnx.defs.onnx_opset_version()}", "11, 28")
    assert rows[("Hardmax", 1)].fallback.startswith("torch on the host (host_hardmax_2d)")


def test_text_table_has_one_row_per_rule_and_the_fallback_column():
    lines = support_table().splitlines()
    assert lines[0].split()[-1] == "fallback"
    assert len(lines) == len(support_rows()) + 3  # header, rule line, count


def test_markdown_escapes_pipes():
    page = support_markdown()
    for line in page.splitlines():
        if line.startswith("| ") and "---" not in line:
            assert line.replace("\\|", "").count("|") == len(COLUMNS) + 1, line
