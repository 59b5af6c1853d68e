"""Checks generated programs against the real ttnn 0.81.1 API manifest kept in tests/data.

Every `ttnn.X(...)` call must name an operation, function or class of the manifest, its keywords must be
parameters of one overload and its positional arguments must fit that overload; every `ttnn.A.B`
reference must be a member of enum/class A.
"""
from __future__ import annotations

import ast
import json
import os
import re
from functools import lru_cache

MANIFEST = os.path.join(os.path.dirname(__file__), "data", "ttnn-0.81.1-api.json")


@lru_cache(maxsize=1)
def manifest() -> dict:
    with open(MANIFEST) as handle:
        return json.load(handle)


def _split_params(signature: str) -> tuple[list[str], set[str], bool]:
    """(positional parameter names, all parameter names, accepts **kwargs) of one signature string."""
    inner = signature[signature.index("(") + 1: signature.rindex(")")]
    depth, current, parts = 0, "", []
    for ch in inner:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    positional, names, keyword_only, var_kw = [], set(), False, False
    for part in (p.strip().replace("\\*", "*") for p in parts):
        if not part or part == "self" or part == "/":
            continue
        if part.startswith("**"):
            var_kw = True
            continue
        if part.startswith("*"):
            keyword_only = True
            continue
        name = re.split(r"[:=]", part, maxsplit=1)[0].strip()
        names.add(name)
        if not keyword_only:
            positional.append(name)
    return positional, names, var_kw


def documented_keywords(entry: dict | None) -> set[str]:
    """Keyword arguments an entry's doc lists under "Keyword Args" (open_device's nanobind signature leaves
    out num_command_queues, which its doc lists and the real mock accepts: tools/ttnn_mock/probes/results/trace.txt).
    The simulator's signatures may accept them (tests/sim/test_sim_api_manifest.py); generated programs do not
    use them (check_source is strict: --trace programs open their device with CreateDevice, ttnn-facts §32)."""
    doc = (entry or {}).get("doc") or ""  # (a submodule's function has no top-level entry)
    section = doc.split("Keyword Args:", 1)[1] if "Keyword Args:" in doc else ""
    return set(re.findall(r"^\s+(\w+) \(", section, re.M))


def _signatures(name: str) -> list[str] | None:
    api = manifest()
    module, dot, member = name.rpartition(".")
    if dot:  # a submodule's function: ttnn.transformer.scaled_dot_product_attention
        entry = api["modules"].get(module, {}).get(member)
        return entry.get("signatures", []) if isinstance(entry, dict) else None
    for section in ("operations", "functions", "classes"):
        if name in api[section]:
            return api[section][name].get("signatures", [])
    return None


def _ttnn_owner(func) -> str | None:
    """"" for a call of ttnn.f, "m." for ttnn.m.f with m a ttnn submodule in the manifest, else None."""
    if not isinstance(func, ast.Attribute):
        return None
    if isinstance(func.value, ast.Name) and func.value.id == "ttnn":
        return ""
    value = func.value
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "ttnn" and \
            value.attr in manifest()["modules"]:
        return value.attr + "."
    return None


def check_source(source: str) -> list[str]:
    """Violations of the ttnn API in a program's source (empty when it fits)."""
    api = manifest()
    tree = ast.parse(source)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and \
                isinstance(node.value.value, ast.Name) and node.value.value.id == "ttnn":
            owner, member = node.value.attr, node.attr
            members = set(api["enums"].get(owner, {}).get("members", [])) | set(
                api["classes"].get(owner, {}).get("members", []))
            if members and member not in members:
                problems.append(f"line {node.lineno}: ttnn.{owner}.{member} is not a member")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ttnn":
            name = node.attr
            if _signatures(name) is None and name not in api["constants"] and name not in api["enums"] and \
                    name not in api["modules"]:
                problems.append(f"line {node.lineno}: ttnn.{name} does not exist")
        owner = _ttnn_owner(node.func) if isinstance(node, ast.Call) else None
        if owner is not None:
            sigs = _signatures(owner + node.func.attr)
            if sigs is None and owner:
                problems.append(f"line {node.lineno}: ttnn.{owner}{node.func.attr} does not exist")
            if not sigs:
                continue
            keywords = {k.arg for k in node.keywords}  # strict: a keyword only the doc lists does not count
            fits = False
            for sig in sigs:
                positional, names, var_kw = _split_params(sig)
                if len(node.args) <= len(positional) and (var_kw or keywords <= names) and \
                        not keywords & set(positional[:len(node.args)]):
                    fits = True
                    break
            if not fits:
                problems.append(f"line {node.lineno}: ttnn.{node.func.attr}({len(node.args)} positional, "
                                f"{sorted(keywords)}) fits no overload")
    return problems
