"""Run one zoo model through the whole pipeline and say how it went: the row of docs/zoo.md.

    evaluate(entry, size="reduced") -> ZooResult

Steps: export (cached) -> convert (timed) -> run on the simulator against onnxruntime (PCC per output, leaks,
peak memory, the memory trace of forward) -> optionally run the same program on the real ttnn mock device.
A failing step is recorded in the result (stage + message) rather than raised, so a report shows every model.
"""
from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from models import export, wheels, zoo
from onnx2ttnn.options import Options

PCC_MIN = 0.99


@dataclass
class ZooResult:
    name: str
    architecture: str
    size: str
    exporter: str
    status: str = "fail"  # "pass" | "fail"
    stage: str = ""  # where it failed: export | convert | simulator | real-ttnn
    error: str = ""
    onnx_nodes: int = 0
    ttnn_ops: int = 0
    fallback_ops: int = 0
    fallback_detail: dict = field(default_factory=dict)
    convert_seconds: float = 0.0
    dtype: str = ""  # the dtype the program computes in (--dtype auto settles bf16 or fp32)
    pcc: dict = field(default_factory=dict)  # output -> PCC
    leaks: int = 0
    peak_l1_per_core: int = 0
    peak_dram_per_bank: int = 0
    memory_trace: list = field(default_factory=list)  # (ttnn call, L1 B/bank, DRAM B/bank) over forward
    real_ttnn: Optional[str] = None  # None (not run) | "ok" | the real library's message

    @property
    def min_pcc(self) -> float:
        return min(self.pcc.values()) if self.pcc else 0.0


def _count_nodes(path: str) -> int:
    import onnx

    return len(onnx.load(path, load_external_data=False).graph.node)


def evaluate(entry: zoo.ZooModel, size: str = "reduced", exporter: str = "dynamo", memory: str = Options.memory,
             mock=None, workdir: Optional[str] = None, dtype: str = Options.dtype) -> ZooResult:
    """The result of one model; `mock` (tests.real_ttnn.mock.TTNNMock) also runs it on real ttnn. `dtype` is
    --dtype (the default, auto, or bf16 / fp32); the bound is PCC_MIN whichever."""
    import onnx2ttnn
    from onnx2ttnn.verify import verify

    source = zoo.get(entry.base) if entry.kind == "quantized" else entry  # (a quantized entry: its base's size)
    exported = source.exported
    if exported and exporter not in source.exporters:
        exporter = source.exporters[0]
    result = ZooResult(entry.name, entry.architecture, size if exported else "as shipped",
                       exporter if exported else "-")
    stage = "export"
    try:
        path = export.export(entry, size, exporter, log=lambda line: None)
        result.onnx_nodes = _count_nodes(path)
        stage = "convert"
        program = os.path.join(workdir, f"{entry.name}_ttnn.py") if workdir else f"{entry.name}_ttnn.py"
        start = time.perf_counter()
        conversion = onnx2ttnn.convert(path, program, memory=memory, dtype=dtype,
                                       input_shapes=dict(entry.shapes))
        result.convert_seconds = time.perf_counter() - start
        result.dtype = conversion.module.compute_dtype
        result.ttnn_ops = sum(conversion.op_counts().values())
        result.fallback_detail = dict(conversion.fallback_counts())
        result.fallback_ops = sum(result.fallback_detail.values())
        stage = "simulator"
        feeds = wheels.feeds(entry, path)
        report = verify(path, conversion=conversion, trace=True, inputs=feeds)
        result.pcc = {o.name: o.pcc for o in report.outputs}
        result.leaks = len(report.leaks)
        result.peak_l1_per_core = report.peak_l1_per_core
        result.peak_dram_per_bank = report.peak_dram_per_bank
        result.memory_trace = report.memory_trace
        if result.leaks or result.min_pcc < PCC_MIN:
            raise AssertionError(f"PCC {result.min_pcc:.4f} (need >= {PCC_MIN}), {result.leaks} leaked buffers")
        if mock is not None:
            stage = "real-ttnn"
            conversion.write(program)
            inputs = None
            if feeds is not None:  # (the mock's own random inputs would not take the branch the values pick)
                inputs = os.path.splitext(program)[0] + "_inputs.npz"
                np.savez(inputs, **feeds)
            run = mock.run_program(program, inputs=inputs)
            result.real_ttnn = "ok" if run["ok"] else (run.get("error") or "failed")
            if not run["ok"]:
                raise AssertionError(f"real ttnn: {result.real_ttnn}")
            leaked = sum(run["leaked_buffers_per_bank"].values())
            if leaked:
                raise AssertionError(f"real ttnn: {leaked} B per bank left allocated after forward")
        result.status = "pass"
    except Exception as exc:  # noqa: BLE001 - the report shows the failure
        result.stage = stage
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        result.error = f"{type(exc).__name__}: {first}"[:400]
        if os.environ.get("ONNX2TTNN_DEBUG"):
            traceback.print_exc()
    return result
