"""Errors the user sees: one clear message, exit code 2, no traceback."""
from __future__ import annotations

from onnx2ttnn.messages import clean_message


class ConversionError(Exception):
    """The model or the options cannot be converted; the message says why and what to do."""


class NotLowerable(ConversionError):
    """Raised by a lowering rule that declines a node (an attribute or input variant it cannot map to ttnn).

    The lowering pass catches it: the node goes to its host fallback when one exists and fallbacks are on,
    else it is reported with every other unsupported node.  Raised through `LoweringContext.decline`;
    `reason` is the message without the node name.
    """

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


class UnsupportedOpsError(ConversionError):
    """Some ONNX op types have no lowering (and no usable fallback); lists every one of them at once.

    `missing`: op type -> names of its nodes; `reasons`: op type -> why a rule declined or why no rule serves
    the node's schema version; `fallbacks`: op types a host fallback exists for (refused by --no-fallback);
    `versions`: ai.onnx op type -> the schema version the model's opset resolves to (None: unknown);
    `regions`: op types only a host region (onnxruntime) would run, refused by --no-fallback.
    """

    def __init__(self, missing: dict[str, list[str]], opset: int, reasons: dict[str, str] | None = None,
                 fallbacks: tuple[str, ...] = (), versions: dict[str, int | None] | None = None,
                 regions: tuple[str, ...] = ()) -> None:
        self.missing = missing
        self.reasons = reasons or {}
        self.fallbacks = tuple(sorted(fallbacks))
        self.regions = tuple(sorted(regions))
        self.versions = versions or {}
        counts = ", ".join(f"{clean_message(op)} ({_nodes(len(missing[op]))})" for op in sorted(missing))
        kinds = f"{len(missing)} ONNX op type{'s' if len(missing) != 1 else ''}"
        lines = [f"{kinds} {'have' if len(missing) != 1 else 'has'} no ttnn lowering: {counts}"]
        for op_type in sorted(missing):
            names = missing[op_type]
            shown = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
            reason = f" ({self.reasons[op_type]})" if op_type in self.reasons else ""
            lines.append(f"  {clean_message(self._versioned(op_type, opset))}: {shown}{clean_message(reason)}")
        if self.fallbacks:
            listed = ", ".join(f"{op} (schema {self.versions[op]})" if self.versions.get(op) else op
                               for op in self.fallbacks)
            lines.append(f"  host fallbacks exist for {clean_message(listed)}: convert without --no-fallback to run "
                         "them on the host")
        if self.regions:
            lines.append(f"  onnxruntime runs {clean_message(', '.join(self.regions))} in a host region: convert "
                         "without --no-fallback to run "
                         f"{'it' if len(self.regions) == 1 else 'them'} on the host")
        super().__init__("\n".join(lines))

    def _versioned(self, op_type: str, opset: int) -> str:
        """`Abs (opset 18 schema 13)` for an ai.onnx op, the op type alone for other domains."""
        if op_type not in self.versions:
            return op_type
        version = self.versions[op_type]
        return f"{op_type} (opset {opset} schema {version if version is not None else 'unknown'})"


def _nodes(count: int) -> str:
    return f"{count} node" if count == 1 else f"{count} nodes"


class VerificationError(Exception):
    """An internal invariant of the compiler does not hold (a bug, not bad input)."""
