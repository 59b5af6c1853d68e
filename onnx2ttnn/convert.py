"""convert(): run the importer and the pass pipeline, then emit the program and its weights."""
from __future__ import annotations

import contextlib
import gc
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from onnx2ttnn.emit.ir_dump import dump_path, ir_bytes
from onnx2ttnn.emit.publish import check_distinct, publish
from onnx2ttnn.emit.python import EmittedProgram, emit_program
from onnx2ttnn.emit.weights import npz_bytes
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.importer import copy_proto, import_proto, read_model
from onnx2ttnn.frontend.weights import FileValues, SharedReads
from onnx2ttnn.ir.cost import program_cost
from onnx2ttnn.ir.device import DEVICES, get_device
from onnx2ttnn.ir.graph import Module
from onnx2ttnn.ir.ttnn_ops import HOST_COMPUTE, HOST_REGION
from onnx2ttnn.limits import check_dram_plan, check_tensors
from onnx2ttnn.messages import one_line
from onnx2ttnn.options import (ACTIVATION_FORMATS, COMPUTE_DTYPES, MATH_FIDELITIES, MEMORY_POLICIES, PARALLEL_MODES,
                               WEIGHT_FORMATS, Options)
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.parallel import dp_holds, faster, settle_auto
from onnx2ttnn.passes.pipeline import PassManager, build_pipeline


@dataclass
class Conversion:
    """The result of a conversion: the final IR, the program text, its weights and a summary."""

    module: Module
    program: EmittedProgram
    options: Options
    timings: list = field(default_factory=list)
    program_weights_name: str = "model_ttnn.npz"  # the sidecar name the program refers to
    dumps: dict[str, bytes] = field(default_factory=dict)  # pass -> the IR after it (--dump-ir-after)
    inputs: list[tuple[str, str]] = field(default_factory=list)  # (role, path): the files the model was read from
    auto: dict = field(default_factory=dict)  # --parallel auto's comparison: times (mode -> s), kept, refused

    def modelled_s(self) -> float:
        """Modelled time of an eager forward (ir/cost.py ProgramCost.eager_s, what `report` prints)."""
        return program_cost(self.module.graph, get_device(self.options.device)).eager_s

    @property
    def source(self) -> str:
        return self.program.source

    def op_counts(self) -> Counter:
        """ttnn call -> how many the program makes (host fallback computations are not ttnn calls)."""
        return Counter(n.op for n in self.module.graph.nodes
                       if not n.attrs.get("_param") and n.op not in (HOST_COMPUTE, HOST_REGION))

    def fallback_counts(self) -> dict[str, int]:
        """ONNX op type -> number of its nodes the program computes on the host (host fallback)."""
        return dict(self.module.notes.get("lower-to-ttnn", {}).get("host_fallbacks", {}))

    def region_summaries(self) -> list[dict]:
        """The host regions (fallback/regions.py summary): index, nodes (name, op), inputs, outputs."""
        return list(self.module.notes.get("lower-to-ttnn", {}).get("host_regions", []))

    def quantized_weights(self) -> dict[str, tuple[str, str]]:
        """Dequantized weight -> (its device dtype: bfp8, bf16 or f32, why when not bfp8)."""
        return dict(self.module.notes.get("lower-to-ttnn", {}).get("quantized_weights", {}))

    def weight_formats(self) -> dict[str, tuple[str, str]]:
        """Weight -> (the device format --weights chose: bfp4, bfp8, bf16 or f32, why)."""
        return dict(self.module.notes.get("lower-to-ttnn", {}).get("weight_formats", {}))

    def weight_bytes(self) -> int:
        return sum(a.nbytes for a in self.program.weights.values())

    def write(self, path: str, weights_path: Optional[str] = None, ir_path: Optional[str] = None) -> tuple[str, str]:
        """Publish the program, its weights sidecar, the annotated IR (when `ir_path` is given) and the IR dumps
        asked for as one set (emit/publish.py: all new, or on any failure all old); returns the program and
        weights paths. No output may be an input or another output."""
        weights_path = weights_path or weights_path_for(path)
        if os.path.basename(weights_path) != self.program_weights_name:
            raise ConversionError("the weights file must keep the name the program was generated with "
                                  f"({self.program_weights_name})")
        regions = {os.path.join(os.path.dirname(weights_path), name): data
                   for name, data in self.program.regions.items()}
        outputs = output_files(path, weights_path, ir_path, self.options.dump_dir, tuple(self.dumps), tuple(regions))
        check_distinct(self.inputs, outputs)
        payloads = {weights_path: npz_bytes(self.program.weights), path: self.program.source}
        payloads.update(regions)
        if ir_path:
            payloads[ir_path] = ir_bytes(self.module)
        payloads.update((dump_path(self.options.dump_dir, name), data) for name, data in self.dumps.items())
        try:
            publish(payloads)
        except Exception:
            _keep_failed_dumps(self.options, self.dumps, self.inputs)
            raise
        return path, weights_path


def weights_path_for(program_path: str) -> str:
    root, _ = os.path.splitext(program_path)
    return root + ".npz"


def output_files(program_path: str, weights_path: Optional[str] = None, ir_path: Optional[str] = None,
                 dump_dir: str = ".", dump_passes: tuple[str, ...] = (),
                 regions: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(role, path) of every file a conversion writes: the program, its weights, its host regions' models,
    the IR, the IR dumps."""
    files = [("the program", program_path), ("the weights", weights_path or weights_path_for(program_path))]
    files += [(f"host region {k}'s model", region) for k, region in enumerate(regions)]
    if ir_path:
        files.append(("the IR", ir_path))
    return files + _dump_files(dump_dir, dump_passes)


def _dump_files(dump_dir: str, passes) -> list[tuple[str, str]]:
    return [(f"the IR dump after {name}", dump_path(dump_dir, name)) for name in passes]


def _input_files(module: Module) -> list[tuple[str, str]]:
    """(role, path) of the model file and of the external data files its large tensors are read from."""
    if not module.source_path:
        return []
    files = [("the model", module.source_path)]
    for tensor in module.graph.tensors().values():
        values = getattr(tensor, "_values", None)
        if isinstance(values, FileValues) and ("the model's external data", values.path) not in files:
            files.append(("the model's external data", values.path))
    return files


def _keep_failed_dumps(options: Options, dumps: dict[str, bytes], inputs: list[tuple[str, str]]) -> None:
    """--keep-failed-dumps: write the IR dumps of a failed conversion, best effort (the failure is the news)."""
    if not options.keep_failed_dumps or not dumps:
        return
    files = _dump_files(options.dump_dir, dumps)
    try:
        check_distinct(inputs, files)
        publish({path: data for (_, path), data in zip(files, dumps.values())})
    except (ConversionError, OSError):
        pass


def _options(kwargs: dict) -> Options:
    options = Options(**kwargs)
    if options.device not in DEVICES:
        raise ConversionError(f"unknown device {options.device!r}; choose one of {', '.join(DEVICES)}")
    _resolve_mesh(options)
    if options.memory not in MEMORY_POLICIES:
        raise ConversionError(f"unknown memory policy {options.memory!r}; choose one of "
                              f"{', '.join(MEMORY_POLICIES)}")
    if options.dtype not in COMPUTE_DTYPES:
        raise ConversionError(f"unknown dtype {options.dtype!r}; choose one of {', '.join(COMPUTE_DTYPES)}")
    if options.math_fidelity not in MATH_FIDELITIES:
        raise ConversionError(f"unknown math fidelity {options.math_fidelity!r}; choose one of "
                              f"{', '.join(MATH_FIDELITIES)}")
    if options.weights not in WEIGHT_FORMATS:
        raise ConversionError(f"unknown weight format {options.weights!r}; choose one of {', '.join(WEIGHT_FORMATS)}")
    if options.activations not in ACTIVATION_FORMATS:
        raise ConversionError(f"unknown activation format {options.activations!r}; choose one of "
                              f"{', '.join(ACTIVATION_FORMATS)}")
    return options


def _resolve_mesh(options: Options) -> None:
    """--mesh and --parallel checked against the device: `mesh` becomes "RxC" (the device's whole mesh when
    not given) and `parallel` the mode asked ("tp": tensor parallel along the mesh's columns, the batch split
    over its rows; "dp"; "auto" is settled once the model is read, parallel.py)."""
    device = DEVICES[options.device]
    if options.mesh:
        if not re.fullmatch(r"[1-9][0-9]{0,2}x[1-9][0-9]{0,2}", options.mesh):
            raise ConversionError(f"--mesh {options.mesh!r}: expected RxC (rows x columns of chips, e.g. 1x2)")
        rows, cols = options.mesh_shape()
        if not device.fits_mesh(rows, cols):
            shapes = " or ".join(f"{r}x{c}" for r, c in device.meshes)
            raise ConversionError(f"--mesh {options.mesh} is larger than device {options.device} ({device.chips} "
                                  f"chip{'s' if device.chips > 1 else ''}, mesh {shapes})")
    else:
        options.mesh = "{}x{}".format(*device.meshes[0])
    if options.parallel not in PARALLEL_MODES:
        raise ConversionError(f"unknown parallel mode {options.parallel!r}; choose one of {', '.join(PARALLEL_MODES)}")
    if options.parallel == "tp" and options.mesh_shape()[1] == 1:
        raise ConversionError(f"--parallel tp needs a mesh with more than one column of chips (got {options.mesh})")


def convert(model, output_path: Optional[str] = None, *, progress: Callable[[str], None] = None,
            probes: bool = False, **options) -> Conversion:
    """Convert an ONNX model (path or ModelProto) for a Tenstorrent device.

    Options are the fields of onnx2ttnn.options.Options (device, memory, dtype, input_shapes, fallback, ...);
    `fallback=False` refuses host fallbacks (UnsupportedOpsError names every op type that would need one).
    `output_path` only names the files the program refers to; nothing is written until Conversion.write(), which
    also writes the IR dumps asked for with `dump_ir_after` (into `dump_dir`). When the conversion fails they are
    written only with `keep_failed_dumps=True`.
    `probes` makes the program report every intermediate value to a PROBE hook (for verify --per-op).
    """
    with _rare_full_collections():
        return _convert(model, output_path, progress, probes, options)


@contextlib.contextmanager
def _rare_full_collections():
    """While converting, CPython's full garbage collections are made rare, then the thresholds restored.

    The IR is a graph of linked Python objects (nodes and tensors point at each other), a few hundred per
    ONNX node; each full collection re-walks all of them, and their number grows with the graph, so the
    collections alone made a conversion super-linear (an Add/Relu chain, `benchmarks/bench_convert.py
    --chain`: 40k nodes took 4.6x the time of 10k, 3.4x with this).  Young generations still collect; what
    a full collection would have freed is freed after the conversion."""
    old = gc.get_threshold()
    gc.set_threshold(old[0], old[1], max(old[2], 1_000_000))
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _convert(model, output_path: Optional[str], progress, probes: bool, options: dict) -> "Conversion":
    """convert() without the collector settings: the model read once, converted in the --parallel mode, or
    for auto in the one mode that can hold it or both ways (parallel.py)."""
    opts = _options(options)
    start = time.perf_counter()
    if progress:
        progress("import")
    proto, path = read_model(model)
    read_s = time.perf_counter() - start
    settle_auto(proto, opts)
    if opts.parallel != "auto" or opts.chips == 1:
        return _convert_as(proto, path, opts, output_path, progress, probes, read_s)
    return _compare(proto, path, opts, output_path, progress, probes, read_s)


def _compare(proto, path: Optional[str], opts: Options, output_path: Optional[str], progress, probes: bool,
             read_s: float) -> "Conversion":
    """--parallel auto where dp and tp can both hold the model: both conversions from the one loaded proto
    (each external weight read from its file once; the onnxruntime measurements of settle-dtype and
    measure-weight-gain made once, in the first, and reused), the one of lower modelled eager time per forward
    kept; dp when tp refuses the model; tp when the dtype the dp conversion settled (fp32) makes the weights
    outgrow one chip (parallel.dp_holds)."""
    shared, results, spent, measured = SharedReads(), {}, {}, {}
    for mode in ("dp", "tp"):
        start = time.perf_counter()
        if progress:
            progress(f"auto-{mode}")  # the passes of the conversion as `mode` follow
        if mode == "tp":
            shared.last()
            dtype = results["dp"].module.compute_dtype  # settled in the dp conversion: in fp32 the weights can
            outgrown = not dp_holds(proto, opts, dtype)  # outgrow one chip (read before tp's import changes proto)
        try:
            results[mode] = _convert_as(proto if mode == "tp" else copy_proto(proto), path,
                                        replace(opts, parallel=mode), output_path, progress, probes,
                                        read_s if mode == "dp" else 0.0, shared, measured)
        except ConversionError as exc:
            if mode == "dp":
                raise
            refused = one_line(exc)
        spent[mode] = time.perf_counter() - start
    shared.clear()  # copies tp did not take (the kept program's unread constants still hold `shared`)
    times = {mode: conversion.modelled_s() for mode, conversion in results.items()}
    kept = results["tp" if outgrown and "tp" in times else faster(times) if "tp" in times else "dp"]
    other = "tp" if kept.options.parallel == "dp" else "dp"
    kept.auto = {"times": times, "kept": kept.options.parallel, **({} if "tp" in times else {"refused": refused}),
                 **({"outgrown": f"in {dtype}"} if outgrown else {})}
    kept.timings.insert(0, (f"auto: the {other} conversion", spent[other]))
    return kept


def _convert_as(proto, path: Optional[str], opts: Options, output_path: Optional[str], progress, probes: bool,
                read_s: float, shared: Optional[SharedReads] = None, measured: Optional[dict] = None) -> "Conversion":
    """The conversion of a proto from read_model() (which it changes) in the settled --parallel mode (`measured`:
    PassContext's)."""
    ctx = PassContext(opts, measured=measured)
    start = time.perf_counter()
    tp = opts.mesh_shape()[1] if opts.parallel == "tp" else 1
    module = import_proto(proto, path, opts.input_shapes, opts.chips // tp, shared)
    module.mesh, module.tp = opts.mesh_shape(), tp
    check_tensors(module.graph, get_device(opts.device), "fp32" if opts.dtype == "fp32" else "bf16")  # auto: as bf16 (a
    # program settle-dtype makes fp32 is held to its DRAM by check_dram_plan)  # before folding computes any of them
    ctx.timings.append(("import", read_s + time.perf_counter() - start))
    inputs = _input_files(module)
    manager = PassManager(build_pipeline())
    try:
        manager.run(module, ctx, progress)
        check_dram_plan(module.graph, get_device(opts.device), module.dp, module.tp)
        weights_name = os.path.basename(weights_path_for(output_path or "model_ttnn.py"))
        source_model = _source_reference(module.source_path, output_path)
        start = time.perf_counter()
        program = emit_program(module, weights_file=weights_name, source_model=source_model,
                               options_text=opts.describe(module.compute_dtype), device_name=opts.device, probes=probes)
        ctx.timings.append(("emit", time.perf_counter() - start))
    except Exception:
        _keep_failed_dumps(opts, manager.dumps, inputs)
        raise
    return Conversion(module, program, opts, ctx.timings, weights_name, manager.dumps, inputs)


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
