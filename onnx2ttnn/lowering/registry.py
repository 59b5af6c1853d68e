"""The registry of lowering rules: one decorated function per (domain, ONNX op type, since-version).

A rule is looked up by mapping the model's opset to the op schema's since-version
(`onnx.defs.get_schema(..., max_inclusive_version=opset)`) and taking the newest rule not newer than it.
When an op's semantics change between versions, a second rule is registered rather than branching.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import onnx

from onnx2ttnn.ir.graph import FUSED_DOMAIN  # noqa: F401 (the rules of fused nodes register under it)


@dataclass(frozen=True)
class Rule:
    domain: str
    op_type: str
    since: int
    fn: Callable
    ttnn_ops: tuple[str, ...]  # what it lowers to, for the support table
    note: str = ""


_RULES: dict[tuple[str, str], list[Rule]] = {}


def register(op_type: str, since: int = 1, *, domain: str = "", ttnn: tuple[str, ...] = (), note: str = ""):
    """Decorator: `fn(ctx, node)` lowers ONNX `op_type` from opset `since` on."""

    def wrap(fn: Callable) -> Callable:
        add_versioned(_RULES, Rule(domain, op_type, since, fn, tuple(ttnn), note), "lowering rule")
        return fn

    return wrap


def add_versioned(table: dict, rule, what: str) -> None:
    """File `rule` (with .domain, .op_type, .since) under its op in `table`, kept sorted by since-version."""
    rules = table.setdefault((rule.domain, rule.op_type), [])
    if any(r.since == rule.since for r in rules):
        raise ValueError(f"duplicate {what} for {rule.domain or 'ai.onnx'}::{rule.op_type} since {rule.since}")
    rules.append(rule)
    rules.sort(key=lambda r: r.since)


def select_versioned(table: dict, domain: str, op_type: str, opset: int):
    """The newest rule in `table` for this op not newer than the schema version serving `opset`, or None."""
    rules = table.get((domain, op_type))
    if not rules:
        return None
    version = opset
    if domain in ("", "ai.onnx"):
        try:
            version = onnx.defs.get_schema(op_type, max_inclusive_version=opset, domain="").since_version
        except onnx.defs.SchemaError:
            return None
    candidates = [r for r in rules if r.since <= version]
    return candidates[-1] if candidates else None


def lookup(domain: str, op_type: str, opset: int) -> Optional[Rule]:
    """The rule for this op at this opset, or None when there is none."""
    return select_versioned(_RULES, domain, op_type, opset)


def all_rules() -> list[Rule]:
    """Every registered rule, sorted by domain, op type and version (the support table)."""
    return [r for key in sorted(_RULES) for r in _RULES[key]]
