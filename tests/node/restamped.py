"""Node-test cases re-stamped at the older schema versions a rule claims: the evidence for those versions.

A rule naming several schema versions says they mean the same for the nodes it serves (the later versions
add types, or attributes and inputs whose defaults keep the earlier meaning).  A claimed version no node-test
case is at (no node of the op at that version in any running case) is checked on the one-node cases the same
rule serves at a newer version: each is re-stamped at the older opset (the version itself) and kept when the
onnx checker accepts it there (full check: attributes, inputs and types valid at the old schema, shapes
inferred); it must then convert and match the case's expected outputs as at its own opset.  At most
CASES_PER_VERSION cases per version, in loader order.
"""
from __future__ import annotations

import dataclasses
import warnings
from functools import lru_cache
from typing import Optional

import onnx

from onnx2ttnn.fallback import all_fallbacks
from onnx2ttnn.lowering import all_rules
from onnx2ttnn.lowering.versions import schema_version
from tests.node.cases import NodeCase, running_cases

CASES_PER_VERSION = 2  # enough to exercise the rule at the old version; keeps the extra run time small
# ops whose older rule has no node-test case of its own: its versions are re-stamped from the newer rule's cases,
# which the two rules compute alike (a case where they differ would fail, not pass silently)
FROM_NEWER_RULE = {
    "AveragePool": "the rule before 19 differs only for a window past the padded input's end (the whole kernel "
                   "divides), which the re-stamped cases do not have",
}


def _nodes(graph: onnx.GraphProto):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _nodes(sub)


@lru_cache(maxsize=1)
def node_test_versions() -> frozenset[tuple[str, int]]:
    """(op type, schema version) of every ai.onnx node in a running node-test case."""
    found = set()
    for case in running_cases():
        for node in _nodes(case.case.model.graph):
            if node.domain in ("", "ai.onnx"):
                found.add((node.op_type, schema_version("", node.op_type, case.opset)))
    return frozenset(found)


def _restamp(model: onnx.ModelProto, opset: int) -> Optional[onnx.ModelProto]:
    """`model` at ai.onnx opset `opset`, or None when the onnx checker refuses it there."""
    stamped = onnx.ModelProto()
    stamped.CopyFrom(model)
    for entry in stamped.opset_import:
        if entry.domain in ("", "ai.onnx"):
            entry.version = opset
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            onnx.checker.check_model(stamped, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError):
        return None
    return stamped


def claimed_versions() -> dict[str, list[tuple[int, ...]]]:
    """ai.onnx op type -> the version tuples of its rules and fallbacks (each one semantic version)."""
    out: dict[str, list[tuple[int, ...]]] = {}
    for rule in all_rules() + all_fallbacks():
        if rule.domain in ("", "ai.onnx") and rule.versions not in out.get(rule.op_type, []):
            out.setdefault(rule.op_type, []).append(rule.versions)
    return out


@lru_cache(maxsize=1)
def restamped_cases() -> tuple[NodeCase, ...]:
    """The re-stamped cases, named `<case>@opset<version>`."""
    one_node: dict[tuple[str, int], list[NodeCase]] = {}
    for case in running_cases():
        if len(case.case.model.graph.node) == 1:
            one_node.setdefault((case.op, schema_version("", case.op, case.opset)), []).append(case)
    out, seen = [], set()
    for op, groups in sorted(claimed_versions().items()):
        for versions in groups:
            for version in versions:
                if (op, version) in node_test_versions() or (op, version) in seen:
                    continue
                seen.add((op, version))
                newer = [c for v in versions if v > version for c in one_node.get((op, v), [])]
                if not newer and op in FROM_NEWER_RULE:
                    newer = [c for (o, v), cases in sorted(one_node.items()) if o == op and v > version
                             for c in cases]
                picked = 0
                for case in newer:
                    model = _restamp(case.case.model, version)
                    if model is None:
                        continue
                    name = f"{case.name}@opset{version}"
                    test = dataclasses.replace(case.case, model=model, name=name)
                    out.append(NodeCase(name, op, test, None, version))
                    picked += 1
                    if picked == CASES_PER_VERSION:
                        break
    return tuple(out)
