"""convert(): run the importer and the pass pipeline, then emit the program and its weights."""
from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional

from onnx2ttnn.emit.python import EmittedProgram, emit_program
from onnx2ttnn.emit.weights import npz_bytes, write_files
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.importer import import_model
from onnx2ttnn.ir.device import DEVICES
from onnx2ttnn.ir.graph import Module
from onnx2ttnn.ir.ttnn_ops import HOST_COMPUTE
from onnx2ttnn.options import DTYPES, MEMORY_POLICIES, Options
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.pipeline import PassManager, build_pipeline


@dataclass
class Conversion:
    """The result of a conversion: the final IR, the program text, its weights and a summary."""

    module: Module
    program: EmittedProgram
    options: Options
    timings: list = field(default_factory=list)
    program_weights_name: str = "model_ttnn.npz"  # the sidecar name the program refers to

    @property
    def source(self) -> str:
        return self.program.source

    def op_counts(self) -> Counter:
        """ttnn call -> how many the program makes (host fallback computations are not ttnn calls)."""
        return Counter(n.op for n in self.module.graph.nodes if not n.attrs.get("_param") and n.op != HOST_COMPUTE)

    def fallback_counts(self) -> dict[str, int]:
        """ONNX op type -> number of its nodes the program computes on the host (host fallback)."""
        return dict(self.module.notes.get("lower-to-ttnn", {}).get("host_fallbacks", {}))

    def weight_bytes(self) -> int:
        return sum(a.nbytes for a in self.program.weights.values())

    def write(self, path: str, weights_path: Optional[str] = None) -> tuple[str, str]:
        """Write the program and its weights sidecar atomically; returns both paths."""
        weights_path = weights_path or weights_path_for(path)
        if os.path.basename(weights_path) != self.program_weights_name:
            raise ConversionError("the weights file must keep the name the program was generated with "
                                  f"({self.program_weights_name})")
        write_files({weights_path: npz_bytes(self.program.weights), path: self.program.source})
        return path, weights_path


def weights_path_for(program_path: str) -> str:
    root, _ = os.path.splitext(program_path)
    return root + ".npz"


def _options(kwargs: dict) -> Options:
    options = Options(**kwargs)
    if options.device not in DEVICES:
        raise ConversionError(f"unknown device {options.device!r}; choose one of {', '.join(DEVICES)}")
    if options.memory not in MEMORY_POLICIES:
        raise ConversionError(f"unknown memory policy {options.memory!r}; choose one of "
                              f"{', '.join(MEMORY_POLICIES)}")
    if options.dtype not in DTYPES:
        raise ConversionError(f"unknown dtype {options.dtype!r}; choose one of {', '.join(DTYPES)}")
    return options


def convert(model, output_path: Optional[str] = None, *, progress: Callable[[str], None] = None,
            probes: bool = False, **options) -> Conversion:
    """Convert an ONNX model (path or ModelProto) for a Tenstorrent device.

    Options are the fields of onnx2ttnn.options.Options (device, memory, dtype, input_shapes, fallback, ...);
    `fallback=False` refuses host fallbacks (UnsupportedOpsError names every op type that would need one).
    `output_path` only names the files the program refers to; nothing is written until Conversion.write().
    `probes` makes the program report every intermediate value to a PROBE hook (for verify --per-op).
    """
    opts = _options(options)
    ctx = PassContext(opts)
    start = time.perf_counter()
    if progress:
        progress("import")
    module = import_model(model, opts.input_shapes)
    ctx.timings.append(("import", time.perf_counter() - start))
    PassManager(build_pipeline()).run(module, ctx, progress)
    weights_name = os.path.basename(weights_path_for(output_path or "model_ttnn.py"))
    source_model = _source_reference(module.source_path, output_path)
    start = time.perf_counter()
    program = emit_program(module, weights_file=weights_name, source_model=source_model,
                           options_text=opts.describe(), device_name=opts.device, probes=probes)
    ctx.timings.append(("emit", time.perf_counter() - start))
    result = Conversion(module, program, opts, ctx.timings)
    result.program_weights_name = weights_name
    return result


def _source_reference(source: Optional[str], output_path: Optional[str]) -> str:
    """How the program refers to its source model: relative to the program's folder when possible."""
    if not source:
        return ""
    if output_path is None:
        return os.path.basename(source)
    out_dir = os.path.dirname(os.path.abspath(output_path))
    try:
        return os.path.relpath(os.path.abspath(source), out_dir)
    except ValueError:
        return os.path.abspath(source)
