"""Errors the user sees: one clear message, exit code 2, no traceback."""
from __future__ import annotations


class ConversionError(Exception):
    """The model or the options cannot be converted; the message says why and what to do."""


class UnsupportedOpsError(ConversionError):
    """Some ONNX op types have no lowering; lists every one of them at once."""

    def __init__(self, missing: dict[str, list[str]], opset: int) -> None:
        self.missing = missing
        lines = [f"{len(missing)} unsupported ONNX op type(s) (opset {opset}):"]
        for op_type in sorted(missing):
            names = missing[op_type]
            shown = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
            lines.append(f"  {op_type}: {len(names)} node(s): {shown}")
        super().__init__("\n".join(lines))


class VerificationError(Exception):
    """An internal invariant of the compiler does not hold (a bug, not bad input)."""
