"""Schema versions (lowering/versions.py): the version serving an opset, the opsets a set of versions serves,
and the checks every versioned rule table makes when a rule is filed."""
from __future__ import annotations

from dataclasses import dataclass

import onnx
import pytest

from onnx2ttnn.lowering.versions import (add_versioned, checked_versions, newest_opset, schema_version,
                                         schema_versions, select_versioned, served_opsets, unserved)


@dataclass(frozen=True)
class _Rule:
    domain: str
    op_type: str
    versions: tuple[int, ...]


def test_schema_versions_are_the_since_versions_of_the_op():
    assert schema_versions("", "Abs") == (1, 6, 13)
    assert schema_versions("ai.onnx", "Split") == (1, 2, 11, 13, 18)
    assert schema_versions("", "NoSuchOp") == ()
    assert schema_versions("onnx2ttnn", "Linear") == (1,)  # the fused ops have one version


def test_schema_version_agrees_with_onnx_get_schema():
    for op in ("Abs", "Split", "Squeeze", "Resize", "Cast", "Pad", "ReduceMax", "Gelu"):
        for opset in range(1, newest_opset() + 1):
            try:
                want = onnx.defs.get_schema(op, max_inclusive_version=opset, domain="").since_version
            except onnx.defs.SchemaError:
                want = None
            assert schema_version("", op, opset) == want, (op, opset)


def test_an_opset_newer_than_onnx_knows_has_no_schema_version():
    assert schema_version("", "Abs", newest_opset()) == 13
    assert schema_version("", "Abs", newest_opset() + 2) is None
    assert "knows opsets up to" in unserved("", "Abs", newest_opset() + 2, (6, 13))


def test_served_opsets_run_from_each_version_to_the_next_schema():
    last = newest_opset()
    assert served_opsets("", "Abs", (6, 13)) == [(6, last)]
    assert served_opsets("", "Split", (2, 11)) == [(2, 12)]
    assert served_opsets("", "Split", (2, 18)) == [(2, 10), (18, last)]


def test_select_serves_only_the_named_versions():
    table: dict = {}
    add_versioned(table, _Rule("", "Split", (2, 11)), "rule")
    add_versioned(table, _Rule("", "Split", (13,)), "rule")
    assert select_versioned(table, "", "Split", 12).versions == (2, 11)
    assert select_versioned(table, "", "Split", 17).versions == (13,)
    assert select_versioned(table, "", "Split", 18) is None  # schema 18 is not served by the rule of 13
    assert select_versioned(table, "", "Split", 1) is None
    assert checked_versions(table, "", "Split") == (2, 11, 13)
    assert unserved("", "Split", 18, (2, 11, 13)) == "rules were checked against schema 2, 11, 13 only"


def test_a_version_that_is_not_a_since_version_of_the_op_is_refused():
    with pytest.raises(ValueError, match=r"rule for ai.onnx::Abs claims schema version 7, which is not a "
                                         r"since-version of ai.onnx::Abs \(its schemas: 1, 6, 13\)"):
        add_versioned({}, _Rule("", "Abs", (6, 7)), "rule")
    with pytest.raises(ValueError, match="not a since-version of ai.onnx::NoSuchOp"):
        add_versioned({}, _Rule("", "NoSuchOp", (1,)), "rule")


def test_overlapping_versions_are_refused():
    table: dict = {}
    add_versioned(table, _Rule("", "Squeeze", (1, 11)), "lowering rule")
    with pytest.raises(ValueError, match="duplicate lowering rule for ai.onnx::Squeeze schema 11"):
        add_versioned(table, _Rule("", "Squeeze", (11, 13)), "lowering rule")
    add_versioned(table, _Rule("", "Squeeze", (13,)), "lowering rule")  # disjoint: fine


def test_versions_must_be_ascending_and_not_empty():
    for versions in ((), (13, 6), (6, 6)):
        with pytest.raises(ValueError, match="must be ascending schema versions"):
            add_versioned({}, _Rule("", "Abs", versions), "rule")
