"""The source text of host helpers, read from fallback/host/<family>.py without importing it (it imports torch).

`helper_source(uses)` returns the helpers named by (family, helper) pairs, with every module-level function
of the same file they use (transitively), in file order, ready to paste into a generated program whose
only imports are torch, numpy and ttnn.
"""
from __future__ import annotations

import ast
import os
from functools import lru_cache
from typing import Iterable

HOST_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "host")


@lru_cache(maxsize=None)
def _functions(family: str) -> tuple[dict[str, str], dict[str, set[str]], tuple[str, ...]]:
    """(name -> source, name -> module-level names it uses, names in file order) of one host file."""
    path = os.path.join(HOST_DIR, family + ".py")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    tree = ast.parse(text, filename=path)
    sources, uses, order = {}, {}, []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            sources[stmt.name] = ast.get_source_segment(text, stmt)
            uses[stmt.name] = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
            order.append(stmt.name)
    return sources, uses, tuple(order)


def helper_names(family: str) -> tuple[str, ...]:
    """The module-level functions of one host file."""
    return _functions(family)[2]


def helper_source(helpers: Iterable[tuple[str, str]]) -> str:
    """The source of every (family, helper) function (each once), with its same-file dependencies."""
    wanted: dict[str, set[str]] = {}
    for family, helper in helpers:
        sources, uses, _ = _functions(family)
        if helper not in sources:
            raise KeyError(f"host helper {helper!r} is not defined in fallback/host/{family}.py")
        todo, seen = [helper], wanted.setdefault(family, set())
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo += [n for n in uses[name] if n in sources and n not in seen]
    blocks = []
    for family in sorted(wanted):
        sources, _, order = _functions(family)
        blocks += [sources[name] for name in order if name in wanted[family]]
    return "\n\n\n".join(blocks)


def defined_names(helpers: Iterable[tuple[str, str]]) -> set[str]:
    """Every function name the host files of these helpers define (reserved in the program's namespace)."""
    return {name for family in {f for f, _ in helpers} for name in helper_names(family)}
