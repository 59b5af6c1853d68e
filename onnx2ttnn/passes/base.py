"""What every pass shares: the Pass base class and the PassContext it runs in."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Optional

from onnx2ttnn.ir.device import DeviceSpec, get_device
from onnx2ttnn.ir.graph import Module
from onnx2ttnn.options import Options


@dataclass
class PassContext:
    """Options, the target device and per-pass timings for one conversion; `measured`: what the passes that
    measure the model with onnxruntime found, by pass name, handed from one conversion of the model to the next
    (--parallel auto converts it twice: convert.py _compare), or None to measure afresh."""

    options: Options
    device: DeviceSpec = None
    timings: list[tuple[str, float]] = field(default_factory=list)
    measured: Optional[dict] = None

    def reuse(self, name: str, compute):
        """What pass `name` measured in an earlier conversion of this model, else `compute()`, kept for the next."""
        if self.measured is None:
            return compute()
        if name not in self.measured:
            self.measured[name] = compute()
        return self.measured[name]

    def __post_init__(self) -> None:
        if self.device is None:
            self.device = get_device(self.options.device)


class Pass:
    """A compiler pass: `name` is its CLI name; the module docstring is its documentation."""

    name: str = ""

    def run(self, module: Module, ctx: PassContext) -> None:
        raise NotImplementedError

    @classmethod
    def summary(cls) -> str:
        """First line of the pass module's docstring (what --print-pipeline shows)."""
        doc = sys.modules[cls.__module__].__doc__ or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""
