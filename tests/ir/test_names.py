"""Generated identifiers: valid, never reserved, unique in graph order."""
from __future__ import annotations

from onnx2ttnn.ir.names import Namespace, sanitize


def test_sanitize_makes_safe_identifiers():
    for raw in ["a-b", "1st", "class", "__import__('os')", "名前", "", "ttnn", "x\ny", "None"]:
        ident = sanitize(raw)
        assert ident.isidentifier() and ident.isascii()
        assert ident not in {"class", "None", "ttnn", "__import__"}


def test_namespace_is_unique_and_stable():
    ns = Namespace()
    assert [ns.create(n) for n in ["a-b", "a_b", "a.b", "x"]] == ["a_b", "a_b_1", "a_b_2", "x"]
    assert ns.create("whatever", key=1) == ns.create("other", key=1)
