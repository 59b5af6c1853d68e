"""An indentation-aware line writer: lines go into a list and are joined once."""
from __future__ import annotations

import contextlib


class CodeWriter:
    def __init__(self, indent: str = "    ") -> None:
        self._lines: list[str] = []
        self._level = 0
        self._indent = indent

    def line(self, text: str = "") -> None:
        self._lines.append(self._indent * self._level + text if text else "")

    def lines(self, text: str) -> None:
        """Several lines at the current indentation (a dedented block of text)."""
        for raw in text.strip("\n").splitlines():
            self.line(raw)

    @contextlib.contextmanager
    def indent(self):
        self._level += 1
        try:
            yield
        finally:
            self._level -= 1

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def text(self) -> str:
        return "\n".join(self._lines) + "\n"
