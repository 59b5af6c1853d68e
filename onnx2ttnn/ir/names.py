"""Names: one namespace for generated Python names (sanitise, then make unique in graph order), and
unique ONNX names for nodes and tensors a pass adds to a graph."""
from __future__ import annotations

import builtins
import keyword
import re

_RESERVED = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins)) | {
    "ttnn", "torch", "numpy", "np", "device", "params", "inputs", "outputs", "data", "os", "sys",
    "device_outputs",  # read_outputs' parameter (--trace)
}


def sanitize(name: str) -> str:
    """A valid, non-reserved Python identifier made from any string (ASCII only, deterministic)."""
    text = re.sub(r"[^0-9A-Za-z_]", "_", name or "")
    text = re.sub(r"_+", "_", text).strip("_").lower() or "t"
    if text[0].isdigit():
        text = "t_" + text
    if text in _RESERVED or text.startswith("__"):
        text += "_"
    return text


class Namespace:
    """Hands out unique identifiers: the same base gets _1, _2, ... in the order names are asked for."""

    def __init__(self, reserved: tuple[str, ...] = ()) -> None:
        self._used: set[str] = set(reserved)
        self._counters: dict[str, int] = {}
        self._by_key: dict[object, str] = {}
        self._log: list[tuple[str, str, int, object]] = []  # (identifier, base, base's previous counter, key)

    def mark(self) -> int:
        """A point to rewind to: the identifiers created so far stay, later ones can be forgotten."""
        return len(self._log)

    def rewind(self, mark: int) -> None:
        """Forget every identifier created since `mark` (a lowering rule that declined made them)."""
        while len(self._log) > mark:
            candidate, base, counter, key = self._log.pop()
            self._used.discard(candidate)
            if counter:
                self._counters[base] = counter
            else:
                self._counters.pop(base, None)
            if key is not None:
                del self._by_key[key]

    def create(self, name: str, key: object = None) -> str:
        """A fresh identifier for `name`; with a key, the same key always gets the same identifier."""
        if key is not None and key in self._by_key:
            return self._by_key[key]
        base = sanitize(name)
        candidate, counter = base, self._counters.get(base, 0)
        while candidate in self._used:
            self._counters[base] = self._counters.get(base, 0) + 1
            candidate = f"{base}_{self._counters[base]}"
        self._used.add(candidate)
        self._log.append((candidate, base, counter, key))
        if key is not None:
            self._by_key[key] = candidate
        return candidate


class GraphNames:
    """ONNX node and tensor names already taken in a graph; `fresh` returns an unused one derived from a
    base name, unchanged (ONNX names need no sanitising, unlike Namespace's Python identifiers)."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)

    def fresh(self, base: str) -> str:
        name, count = base, 0
        while name in self.taken:
            count += 1
            name = f"{base}_{count}"
        self.taken.add(name)
        return name
