"""The lowering registry (lowering/registry.py): rules serve exactly the schema versions they name, one rule per
semantic version, and registering a version the op does not have or one already taken is an error."""
from __future__ import annotations

import onnx
import pytest

from onnx2ttnn.fallback import all_fallbacks, lookup_fallback
from onnx2ttnn.lowering import all_rules, lookup, registry
from onnx2ttnn.lowering.registry import FUSED_DOMAIN


def _fn(op_type: str, opset: int) -> str:
    rule = lookup("", op_type, opset)
    return rule.fn.__name__ if rule is not None else None


def test_each_semantic_version_has_its_own_rule():
    assert [_fn("Squeeze", o) for o in (1, 11, 12, 13, 21, 25)] == ["squeeze_1"] * 3 + ["squeeze"] * 3
    assert [_fn("Unsqueeze", o) for o in (11, 13)] == ["unsqueeze_1", "unsqueeze"]
    assert [_fn("Split", o) for o in (2, 11, 13, 17, 18, 28)] == ["split_2", "split_2", "split_13", "split_13",
                                                                  "split_18", "split_18"]
    assert [_fn("Dropout", o) for o in (7, 10, 11, 12, 22)] == ["dropout_7"] * 3 + ["dropout"] * 2
    assert [_fn("Softmax", o) for o in (1, 11, 12, 13)] == ["softmax_1"] * 3 + ["softmax"]
    assert [_fn("TopK", o) for o in (1, 10, 11, 24)] == ["topk_1", "topk_10", "topk", "topk"]


def test_versions_no_rule_was_checked_against_are_not_served():
    assert _fn("Add", 6) is None  # the `broadcast`/`axis` attributes of Add-6 differ from numpy broadcasting
    assert _fn("Add", 7) is not None
    assert _fn("Cast", 5) is None  # Cast-1 names its target type by a string
    assert _fn("Dropout", 6) is None  # is_test, defaulting to training
    assert lookup_fallback("", "OneHot", 10) is None  # OneHot-9 gives negative indices all off values
    assert lookup_fallback("", "OneHot", 11) is not None
    assert _fn("Abs", onnx.defs.onnx_opset_version() + 1) is None  # a schema onnx does not know yet


def test_fused_ops_have_the_one_version_1():
    for op in ("Linear", "ConvAct", "Gelu", "RMSNorm"):
        rule = lookup(FUSED_DOMAIN, op, 18)
        assert rule is not None and rule.versions == (1,), op


def test_every_claimed_version_has_onnx_shape_inference():
    """The converter needs static shapes: a version claimed by a rule has an inference function, or a
    function body onnx infers through (GroupNormalization, MeanVarianceNormalization, ...)."""
    for rule in all_rules() + all_fallbacks():
        if rule.domain:
            continue
        for version in rule.versions:
            schema = onnx.defs.get_schema(rule.op_type, max_inclusive_version=version, domain="")
            assert schema.since_version == version
            assert (schema.has_type_and_shape_inference_function or schema.has_function
                    or schema.has_context_dependent_function), (rule.op_type, version)


def test_register_refuses_unknown_and_taken_versions(monkeypatch):
    monkeypatch.setattr(registry, "_RULES", {})
    registry.register("Relu", versions=(6, 13), ttnn=("relu",))(lambda ctx, node: None)
    with pytest.raises(ValueError, match="duplicate lowering rule for ai.onnx::Relu schema 13"):
        registry.register("Relu", versions=(13, 14), ttnn=("relu",))(lambda ctx, node: None)
    with pytest.raises(ValueError, match="claims schema version 12, which is not a since-version"):
        registry.register("Relu", versions=(12,), ttnn=("relu",))(lambda ctx, node: None)
    registry.register("Relu", versions=(14,), ttnn=("relu",))(lambda ctx, node: None)
    assert [r.versions for r in registry.all_rules()] == [(6, 13), (14,)]
