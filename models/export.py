"""Export the zoo's transformers and torch models to ONNX, offline and reproducibly, into a cache.

    python -m models.export [--full] [--exporter dynamo|torchscript|all] [NAME ...]

Each export lands in `$ONNX2TTNN_ZOO_CACHE` (default ~/.cache/onnx2ttnn/zoo) under a folder whose name
holds a hash of everything that decides the file: the entry, the size, the exporter and the torch,
transformers and onnx versions. A finished export is never redone; an interrupted one leaves nothing
(it is built in a temporary folder and renamed into place).
"""
from __future__ import annotations

import argparse
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


def export(entry: zoo.ZooModel, size: str = "reduced", exporter: str = "dynamo", log=print) -> str:
    """The path of the entry's ONNX export (built now if it is not cached)."""
    if not entry.exported:
        return entry.path
    folder = cache_dir(entry, size, exporter)
    path = os.path.join(folder, f"{entry.name}.onnx")
    if os.path.exists(path):
        return path
    import torch

    start = time.time()
    log(f"exporting {entry.name} ({size}, {exporter}) ...")
    module, config = zoo.build_model(entry, size)
    inputs = zoo.example_inputs(entry, config, size)
    wrapped = _Outputs(module, entry.outputs)
    os.makedirs(CACHE, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{entry.name}-", dir=CACHE)
    try:
        target = os.path.join(tmp, f"{entry.name}.onnx")
        with torch.no_grad():
            torch.onnx.export(wrapped, tuple(inputs.values()), target, input_names=list(inputs),
                              output_names=list(entry.outputs), opset_version=OPSET,
                              dynamo=(exporter == "dynamo"), verbose=False)
        if os.path.exists(folder):  # a concurrent export finished first
            shutil.rmtree(tmp)
        else:
            os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(f"exported {entry.name} ({size}, {exporter}) in {time.time() - start:.1f} s -> {path}")
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="zoo entries (default: all transformers and torch entries)")
    ap.add_argument("--full", action="store_true", help="the published full-size configs")
    ap.add_argument("--exporter", choices=["dynamo", "torchscript", "all"], default="dynamo")
    args = ap.parse_args(argv)
    entries = [e for e in zoo.selected(True, args.names or None) if e.exported]
    failed = []
    for entry in entries:
        exporters = entry.exporters if args.exporter == "all" else (args.exporter,)
        for exporter in exporters:
            try:
                export(entry, "full" if args.full else "reduced", exporter)
            except Exception as exc:  # noqa: BLE001 - report every failure, then exit non-zero
                failed.append(f"{entry.name} ({exporter}): {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
    for line in failed:
        print(f"error: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
