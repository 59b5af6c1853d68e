"""The registry of lowering rules: one decorated function per (domain, ONNX op type, schema versions).

Each rule names the schema versions it was checked against (`versions=(6, 13)`: the since-versions of the
op's schemas whose semantics it implements); a node is served only by the rule naming the schema version
that serves the model's opset, so a version no rule names is unsupported rather than served by an older
rule (lowering/versions.py).  Naming a version the op does not have, or one another rule of the op names,
is an error.  When an op's semantics change between versions, a second rule is registered rather than
branching inside one; its docstring says what changed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from onnx2ttnn.lowering.versions import add_versioned, checked_versions, select_versioned

from onnx2ttnn.ir.graph import FUSED_DOMAIN  # noqa: F401 (the rules of fused nodes register under it)


@dataclass(frozen=True)
class Rule:
    domain: str
    op_type: str
    versions: tuple[int, ...]  # the schema since-versions the rule was checked against
    fn: Callable
    ttnn_ops: tuple[str, ...]  # what it lowers to, for the support table
    note: str = ""


_RULES: dict[tuple[str, str], list[Rule]] = {}


def register(op_type: str, *, versions: tuple[int, ...], domain: str = "", ttnn: tuple[str, ...] = (),
             note: str = ""):
    """Decorator: `fn(ctx, node)` lowers ONNX `op_type` at the schema versions `versions`."""

    def wrap(fn: Callable) -> Callable:
        add_versioned(_RULES, Rule(domain, op_type, tuple(versions), fn, tuple(ttnn), note), "lowering rule")
        return fn

    return wrap


def lookup(domain: str, op_type: str, opset: int) -> Optional[Rule]:
    """The rule for this op at this model opset, or None when no rule names its schema version."""
    return select_versioned(_RULES, domain, op_type, opset)


def lowering_versions(domain: str, op_type: str) -> tuple[int, ...]:
    """The schema versions the op's lowering rules were checked against."""
    return checked_versions(_RULES, domain, op_type)


def all_rules() -> list[Rule]:
    """Every registered rule, sorted by domain, op type and version (the support table)."""
    return [r for key in sorted(_RULES) for r in _RULES[key]]
