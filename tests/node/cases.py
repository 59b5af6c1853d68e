"""The ONNX backend node-test cases, built once per process, and which op each one counts for.

Rule for the op of a case: a one-node case counts for its node's op type; an expanded case
(`<base>_expanded` or `<base>_expanded_verNN`, the function body of an op written out as several nodes)
counts for the op of its base case.  Every multi-node case of onnx 1.23 is such an expansion.  A case is
claimed when a lowering rule or host fallback serves its op at the case's opset (the schema version the
opset resolves to is one a rule was checked against).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from onnx2ttnn.support import claimed
from tests.node.exclusions import Exclusion, exclusion_of

EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


@dataclass(frozen=True)
class NodeCase:
    """One backend test case with its classification."""

    name: str
    op: str  # the op type it counts for ("" when not an ai.onnx op)
    case: object  # onnx.backend.test.loader TestCase
    exclusion: Optional[Exclusion]
    opset: int = 0  # the model's ai.onnx opset (0: it imports none)

    @property
    def claimed(self) -> bool:
        return bool(self.op) and claimed(self.op, self.opset)

    @property
    def runs(self) -> bool:
        """A case of a claimed op that is not excluded: it must convert and pass."""
        return self.claimed and self.exclusion is None


def _opset(case) -> int:
    return next((o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx")), 0)


def _single_op(case) -> str:
    nodes = case.model.graph.node
    if len(nodes) != 1 or nodes[0].domain not in ("", "ai.onnx"):
        return ""
    return nodes[0].op_type


@lru_cache(maxsize=1)
def all_cases() -> tuple[NodeCase, ...]:
    """Every node-test case (about 10 s to build: once per process)."""
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case generators overflow casts on purpose
        raw = load_model_tests(kind="node")
    single = {c.name: _single_op(c) for c in raw if len(c.model.graph.node) == 1}
    out = []
    for c in raw:
        op = _single_op(c) if len(c.model.graph.node) == 1 else single.get(EXPANDED.sub("", c.name), "")
        out.append(NodeCase(c.name, op, c, exclusion_of(c), _opset(c)))
    return tuple(out)


@lru_cache(maxsize=1)
def by_name() -> dict[str, NodeCase]:
    return {c.name: c for c in all_cases()}


def running_cases() -> list[NodeCase]:
    """The cases of claimed ops that are not excluded, in loader order."""
    return [c for c in all_cases() if c.runs]
