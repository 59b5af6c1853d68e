"""The registry of host fallbacks: ONNX ops the generated program computes with torch on the host.

A fallback is a decorated function keyed by (domain, ONNX op type, schema versions), like a lowering rule:
it names the schema versions it was checked against and serves only those (lowering/versions.py).
It names the torch helper that computes the op (a function `host_<name>` in `fallback/host/<family>.py`,
the file of the same name as the rule's module) and returns the helper's keyword arguments for one node,
or raises `NotLowerable` for a variant it cannot compute.  The converter never imports the helpers (they
import torch): their source is copied into the generated program when a node uses them (fallback/source.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from onnx2ttnn.lowering.versions import add_versioned, checked_versions, select_versioned

_PACKAGE = __name__.rsplit(".", 1)[0]


@dataclass(frozen=True)
class FallbackRule:
    domain: str
    op_type: str
    versions: tuple[int, ...]  # the schema since-versions the fallback was checked against
    helper: str  # the torch function's name in fallback/host/<family>.py
    family: str  # the module the rule lives in (and the host file the helper lives in)
    fn: Callable  # fn(node) -> the helper's keyword arguments
    note: str = ""
    results: int = 1  # how many tensors the helper returns (a node may use fewer: optional outputs)


_RULES: dict[tuple[str, str], list[FallbackRule]] = {}


def fallback(op_type: str, *, versions: tuple[int, ...], helper: str, domain: str = "", note: str = "",
             results: int = 1):
    """Decorator: `fn(node) -> dict` gives the keyword arguments of torch helper `helper` for one node of
    `op_type` at the schema versions `versions` (the helper returns `results` tensors)."""

    def wrap(fn: Callable) -> Callable:
        family = fn.__module__.rsplit(".", 1)[-1]
        add_versioned(_RULES, FallbackRule(domain, op_type, tuple(versions), helper, family, fn, note, results),
                      "host fallback")
        return fn

    return wrap


def lookup_fallback(domain: str, op_type: str, opset: int) -> Optional[FallbackRule]:
    """The fallback for this op at this model opset, or None when none names its schema version."""
    return select_versioned(_RULES, domain, op_type, opset)


def fallback_versions(domain: str, op_type: str) -> tuple[int, ...]:
    """The schema versions the op's host fallbacks were checked against."""
    return checked_versions(_RULES, domain, op_type)


def all_fallbacks() -> list[FallbackRule]:
    """Every registered fallback, sorted by domain, op type and version."""
    return [r for key in sorted(_RULES) for r in _RULES[key]]


def fallback_op_types() -> list[str]:
    """The op types that have a host fallback (for the support table), `domain::Op` outside ai.onnx."""
    return sorted({r.op_type if not r.domain else f"{r.domain}::{r.op_type}" for r in all_fallbacks()})


def attr_kwargs(node, defaults: dict) -> dict:
    """The node's attributes named in `defaults`, each with its ONNX default when absent (ints, floats,
    strings and lists as Python values)."""
    kwargs = {}
    for name, default in defaults.items():
        value = node.attrs.get(name, default)
        if isinstance(value, bytes):
            value = value.decode()
        if isinstance(value, tuple):
            value = list(value)
        kwargs[name] = value
    return kwargs
