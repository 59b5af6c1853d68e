"""Every public name of onnx2ttnn.sim exists in real ttnn 0.81.1 with compatible parameters.

Reads the real API manifest from tests/data/ttnn-0.81.1-api.json.  A simulated callable fits a real
overload when its positional parameters are a prefix of the overload's (same names unless positional-
only), its keyword-only parameters are keyword-capable there, and it has a default wherever the real
overload has one.  Enum classes must only have real members; constants must be real constants.
"""
from __future__ import annotations

import enum
import inspect
import json
import os
import re
import types

import pytest

import onnx2ttnn.sim as sim
from tests.ttnn_api import documented_keywords

MANIFEST = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                        "ttnn-0.81.1-api.json")


@pytest.fixture(scope="module")
def api():
    with open(MANIFEST) as f:
        return json.load(f)


def _split_params(body: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_overload(sig: str):
    """[(name, kind, has_default)] for one manifest signature; kind in pos_only/pos/kw_only/var/varkw."""
    m = re.match(r"def [\w.]+\((.*)\)(\s*->.*)?$", sig.strip(), re.S)
    assert m, sig
    params, star = [], False
    raw = [p.replace("\\*", "*") for p in _split_params(m.group(1))]
    if "/" in raw:
        cut = raw.index("/")
        pos_only = set(range(cut))
        raw = raw[:cut] + raw[cut + 1:]
    else:
        pos_only = set()
    for i, p in enumerate(raw):
        if p == "self":
            continue
        if p == "*":
            star = True
            continue
        if p.startswith("**"):
            params.append((p[2:], "varkw", True))
            continue
        if p.startswith("*"):
            params.append((p[1:], "var", True))
            star = True
            continue
        name = re.split(r"[:=]", p, maxsplit=1)[0].strip()
        has_default = "=" in p
        kind = "kw_only" if star else ("pos_only" if i in pos_only else "pos")
        params.append((name, kind, has_default))
    return params


def fits(sim_sig: inspect.Signature, overload, documented: set[str] = frozenset()) -> str | None:
    """None when the simulated signature fits the overload, else the reason it does not (a keyword-only
    parameter may also be one the doc lists: `documented`)."""
    real_pos = [p for p in overload if p[1] in ("pos_only", "pos")]
    real_kw = {p[0]: p for p in overload if p[1] in ("pos", "kw_only")}
    real_var = any(p[1] == "var" for p in overload)
    real_varkw = any(p[1] == "varkw" for p in overload)
    mine = list(sim_sig.parameters.values())
    positional = [p for p in mine if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) > len(real_pos) and not real_var:
        return f"{len(positional)} positional parameters, real has {len(real_pos)}"
    for i, p in enumerate(positional[:len(real_pos)]):
        name, kind, has_default = real_pos[i]
        if p.kind == p.POSITIONAL_OR_KEYWORD and kind != "pos_only" and p.name != name:
            return f"positional #{i} is {p.name!r}, real is {name!r}"
        if has_default and p.default is p.empty:
            return f"{p.name!r} has no default but the real one does"
    for p in mine:
        if p.kind == p.KEYWORD_ONLY:
            if p.name not in real_kw and not real_varkw and p.name not in documented:
                return f"keyword {p.name!r} not in the real overload"
            if p.name in real_kw and real_kw[p.name][2] and p.default is p.empty:
                return f"{p.name!r} has no default but the real one does"
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return f"simulator uses *{p.name}"
    return None


def public_names():
    for name in sorted(dir(sim)):
        if name.startswith("_"):
            continue
        value = getattr(sim, name)
        if isinstance(value, types.ModuleType):
            continue
        yield name, value


def test_every_public_callable_fits_a_real_overload(api):
    problems = []
    for name, value in public_names():
        if not callable(value):
            continue
        if isinstance(value, type) and issubclass(value, enum.Enum):
            real = api["enums"].get(name)
            if real is None:
                problems.append(f"{name}: no such enum in ttnn")
            else:
                extra = set(value.__members__) - set(real["members"])
                if extra:
                    problems.append(f"{name}: members {sorted(extra)} are not real")
            continue
        entry = api["operations"].get(name) or api["functions"].get(name) or api["classes"].get(name)
        if entry is None:
            problems.append(f"{name}: not in ttnn 0.81.1")
            continue
        sigs = entry.get("signatures") or []
        if not sigs:
            continue
        target = value.__init__ if isinstance(value, type) else value
        mine = inspect.signature(target)
        if isinstance(value, type):
            mine = mine.replace(parameters=list(mine.parameters.values())[1:])
        reasons = [fits(mine, parse_overload(s), documented_keywords(entry)) for s in sigs if "__init__" in s or not isinstance(value, type)]
        if reasons and all(r is not None for r in reasons):
            problems.append(f"{name}{mine}: fits no overload ({'; '.join(sorted(set(reasons)))})")
    assert not problems, "\n".join(problems)


def test_the_transformer_submodule_fits_the_real_one(api):
    """ttnn.transformer's functions the simulator has (sim/transformer.py) fit the real submodule's overloads."""
    real, problems = api["modules"]["transformer"], []
    for name in sorted(n for n in dir(sim.transformer) if not n.startswith("_")):
        value = getattr(sim.transformer, name)
        if not inspect.isfunction(value) or value.__module__ != sim.transformer.__name__:
            continue
        if name not in real:
            problems.append(f"transformer.{name}: not in ttnn 0.81.1")
            continue
        mine = inspect.signature(value)
        reasons = [fits(mine, parse_overload(s)) for s in real[name].get("signatures") or []]
        if reasons and all(r is not None for r in reasons):
            problems.append(f"transformer.{name}{mine}: fits no overload ({'; '.join(sorted(set(reasons)))})")
    assert not problems, "\n".join(problems)


def test_public_constants_are_real(api):
    known = set(api["constants"])
    fake = [n for n, v in public_names() if not callable(v) and n not in known]
    assert not fake, f"constants not in ttnn 0.81.1: {fake}"


def test_the_checker_rejects_wrong_signatures(api):
    """The comparison itself must catch renamed, reordered and invented parameters."""
    real = parse_overload(api["operations"]["softmax"]["signatures"][0])

    def renamed(x, dim=-1, *, memory_config=None): ...
    def invented(input_tensor, dim=-1, *, colour=None): ...
    def keyword_made_positional(input_tensor, dim=-1, memory_config=None): ...
    def good(input_tensor, dim=-1, *, memory_config=None, numeric_stable=True): ...

    assert fits(inspect.signature(renamed), real)
    assert fits(inspect.signature(invented), real)
    assert fits(inspect.signature(keyword_made_positional), real)
    assert fits(inspect.signature(good), real) is None


def test_the_subset_the_generated_programs_call_is_there():
    wanted = """open_device close_device from_torch to_torch to_device from_device to_layout typecast
    to_memory_config deallocate reshape permute transpose concat slice split expand repeat unsqueeze squeeze pad
    embedding relu relu6 sigmoid tanh exp log sqrt rsqrt neg abs erf gelu reciprocal sin cos floor ceil sign
    logical_not silu softplus leaky_relu hardtanh clip clamp add subtract multiply divide pow maximum minimum eq
    ne gt ge lt le logical_and logical_or where matmul linear softmax layer_norm rms_norm mean sum max min conv2d
    max_pool2d avg_pool2d global_avg_pool2d MemoryConfig ShardSpec CoreRangeSet CoreRange CoreCoord CoreGrid
    create_sharded_memory_config ShardStrategy TensorMemoryLayout BufferType ShardOrientation Layout DataType
    TILE_LAYOUT ROW_MAJOR_LAYOUT bfloat16 bfloat8_b float32 uint32 int32 uint16 uint8 DRAM_MEMORY_CONFIG
    L1_MEMORY_CONFIG Conv2dConfig UnaryWithParam UnaryOpType Tensor get_memory_view""".split()
    missing = [n for n in wanted if not hasattr(sim, n)]
    assert not missing
