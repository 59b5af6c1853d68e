"""Exact schema versions: the since-versions of an ONNX op, the one serving a model's opset, and the
versioned rule tables the lowering and host-fallback registries share.

A rule names the schema versions it was checked against: the `since_version`s of the op's schemas in
`onnx.defs.get_all_schemas_with_history()` whose semantics it implements (Abs: 6 and 13).  A node is served
only by the rule naming the schema version that serves the model's opset (the newest since-version not newer
than it, as `onnx.defs.get_schema(op, max_inclusive_version=opset)` picks); a version no rule names is
unsupported until someone checks it, never served by the rule of an older version.  A model opset newer than
the installed onnx package knows has no known schema version.  Ops outside ai.onnx (the fused ops the fusion
rules make) have one version, 1.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

import onnx


def is_onnx_domain(domain: str) -> bool:
    return domain in ("", "ai.onnx")


@lru_cache(maxsize=1)
def _history() -> dict[str, tuple[int, ...]]:
    """ai.onnx op type -> the since-versions of its schemas, ascending."""
    found: dict[str, set[int]] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if is_onnx_domain(schema.domain):
            found.setdefault(schema.name, set()).add(schema.since_version)
    return {op: tuple(sorted(versions)) for op, versions in found.items()}


def newest_opset() -> int:
    """The newest ai.onnx opset the installed onnx package knows."""
    return onnx.defs.onnx_opset_version()


def schema_versions(domain: str, op_type: str) -> tuple[int, ...]:
    """Every since-version of the op's schemas, ascending; () for an ai.onnx op type onnx does not know."""
    return _history().get(op_type, ()) if is_onnx_domain(domain) else (1,)


def schema_version(domain: str, op_type: str, opset: int) -> Optional[int]:
    """The since-version of the schema serving model opset `opset`; None when the op has no schema that old,
    or the opset is newer than the onnx package knows (a newer schema may exist)."""
    if not is_onnx_domain(domain):
        return 1
    if opset > newest_opset():
        return None
    earlier = [v for v in schema_versions(domain, op_type) if v <= opset]
    return earlier[-1] if earlier else None


def served_opsets(domain: str, op_type: str, versions) -> list[tuple[int, int]]:
    """The model opset ranges (first, last) whose schema version is one of `versions`."""
    known = schema_versions(domain, op_type)
    ranges: list[tuple[int, int]] = []
    for index, version in enumerate(known):
        if version not in versions:
            continue
        last = known[index + 1] - 1 if index + 1 < len(known) else newest_opset()
        if ranges and ranges[-1][1] == version - 1:
            ranges[-1] = (ranges[-1][0], last)
        else:
            ranges.append((version, last))
    return ranges


def listed(versions) -> str:
    """`2, 11, 13`: versions as the messages and the support table write them."""
    return ", ".join(str(v) for v in versions)


# --- the versioned rule tables ------------------------------------------------------------------------------

def add_versioned(table: dict, rule, what: str) -> None:
    """File `rule` (with .domain, .op_type, .versions) under its op in `table`.  Its versions must be
    since-versions of the op's schemas, ascending, and named by no other rule of the op."""
    name = f"{rule.domain or 'ai.onnx'}::{rule.op_type}"
    versions = tuple(rule.versions)
    if not versions or list(versions) != sorted(set(versions)):
        raise ValueError(f"{what} for {name}: versions {versions} must be ascending schema versions, at least one")
    known = schema_versions(rule.domain, rule.op_type)
    unknown = [v for v in versions if v not in known]
    if unknown:
        raise ValueError(f"{what} for {name} claims schema version {listed(unknown)}, which is not a since-version "
                         f"of {name} (its schemas: {listed(known) or 'none in onnx ' + onnx.__version__})")
    rules = table.setdefault((rule.domain, rule.op_type), [])
    for other in rules:
        shared = sorted(set(other.versions) & set(versions))
        if shared:
            raise ValueError(f"duplicate {what} for {name} schema {listed(shared)}")
    rules.append(rule)
    rules.sort(key=lambda r: r.versions[0])


def select_versioned(table: dict, domain: str, op_type: str, opset: int):
    """The rule in `table` naming the schema version that serves `opset` for this op, or None."""
    version = schema_version(domain, op_type, opset)
    for rule in table.get((domain, op_type), ()):
        if version in rule.versions:
            return rule
    return None


def checked_versions(table: dict, domain: str, op_type: str) -> tuple[int, ...]:
    """Every schema version some rule in `table` names for this op, ascending."""
    return tuple(sorted(v for rule in table.get((domain, op_type), ()) for v in rule.versions))


def unserved(domain: str, op_type: str, opset: int, checked) -> str:
    """Why no rule serves the op at `opset`: the opset is newer than onnx knows, or the rules (`checked`: the
    versions they name) were checked against other schema versions only; '' when the op has no rule at all."""
    if is_onnx_domain(domain) and opset > newest_opset():
        return f"onnx {onnx.__version__} knows opsets up to {newest_opset()}"
    if not checked:
        return ""
    return f"rules were checked against schema {listed(checked)} only"
