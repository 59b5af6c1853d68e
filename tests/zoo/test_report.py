"""docs/zoo.md: a failing model is shown failing, never dropped; the checked-in page covers the manifest."""
from __future__ import annotations

import os

from models import zoo
from models.evaluate import ZooResult
from models.report import DOCS, render


def _result(name, status, **kw):
    return ZooResult(name, name.upper(), "reduced", "dynamo", status=status, **kw)


def test_failures_are_listed_with_their_stage_and_message():
    ok = _result("good", "pass", onnx_nodes=10, ttnn_ops=20, pcc={"y": 0.9995}, real_ttnn="ok",
                 peak_dram_per_bank=4096)
    bad = _result("bad", "fail", stage="simulator", error="AssertionError: PCC 0.5000 (need >= 0.99)")
    page = render([ok, bad], "Model zoo", "python -m models.report", [])
    table = [line for line in page.splitlines() if line.startswith("| ")]
    assert len(table) == 3  # header + both models
    assert "| good | GOOD | reduced | dynamo | pass | 10 | 20 | 0 |" in page
    assert "| bad | BAD | reduced | dynamo | **FAIL** (simulator) |" in page
    assert "- **bad** (reduced, dynamo) at simulator: `AssertionError: PCC 0.5000 (need >= 0.99)`" in page
    assert "1 of 2 runs pass" in page


def test_the_checked_in_page_lists_every_ci_entry():
    with open(os.path.join(DOCS, "zoo.md")) as f:
        page = f.read()
    rows = {line.split("|")[1].strip() for line in page.splitlines() if line.startswith("| ")}
    missing = [e.name for e in zoo.selected() if e.name not in rows]
    assert not missing, f"docs/zoo.md lacks {missing}: regenerate it with `python -m models.report`"
