"""Does `--weights bf16` reproduce the baseline's numerics? (issue #14: "`--weights bf16` reproduces today's
numerics").

For each model, three programs run on the simulator on the same inputs, each against onnxruntime:
- baseline: the converter of BASELINE_REVISION (benchmarks/bench_perf.py's, "today's auto" when issue #14 was
  filed), its default options;
- bf16: this checkout with `--weights bf16` (every weight bf16, as the baseline had them; the fusions, epilogues
  and configs of issue #14 stay on);
- default: this checkout's default options (block-float weights under auto), for scale.
The table gives each program's PCC against onnxruntime (the lowest over the outputs) and, for bf16 and default,
their PCC against the baseline's own outputs and the largest absolute difference from them relative to the
output's largest magnitude. The programs cannot be identical call for call (fused attention, epilogues and core
grids move the rounding points), so "reproduces" is measured: bf16 must be as close to onnxruntime as the
baseline (within 1e-3 of its PCC) and close to the baseline itself.

Each side runs in a subprocess (`--worker`) that imports onnx2ttnn from its source folder and records the
outputs `verify` compares (no weights or programs are kept). The inputs are the programs' seeded random ones;
the run checks that both sides fed onnxruntime the same inputs by comparing onnxruntime's outputs.

Usage: python benchmarks/bench_numerics.py [--reduced] [--models NAME|PATH.onnx ...] [--baseline-rev REV]
Default: the full-size exports of ResNet-50, MobileNetV2, BERT-base, ViT-B/16 and GPT-2 small (several minutes
each on two cores). Results are kept in benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_perf import BASELINE_REVISION, MODELS, ROOT, baseline_source, model_paths  # noqa: E402

SIDES = (("baseline", None, {}), ("bf16", ROOT, {"weights": "bf16"}), ("default", ROOT, {}))


def worker(source: str, model: str, options: str, out: str) -> int:
    """Run `verify` of the onnx2ttnn in SOURCE on MODEL, saving what it compared: got/NAME and want/NAME."""
    sys.path.insert(0, source)
    import importlib

    verify_module = importlib.import_module("onnx2ttnn.verify")  # the package exports a function of that name

    if not verify_module.__file__.startswith(os.path.abspath(source)):
        print(f"imported {verify_module.__file__}, not the one in {source}", file=sys.stderr)
        return 1
    seen: dict[str, np.ndarray] = {}
    compare = verify_module.compare

    def recording(name, got, want, *args, **kwargs):
        seen[f"got/{name}"], seen[f"want/{name}"] = np.asarray(got, np.float32), np.asarray(want, np.float32)
        return compare(name, got, want, *args, **kwargs)

    verify_module.compare = recording
    report = verify_module.verify(model, **json.loads(options))
    if report.leaks:
        print(f"leaked buffers: {len(report.leaks)}", file=sys.stderr)
        return 1
    np.savez(out, **seen)
    return 0


def run_side(source: str, model: str, options: dict, out: str) -> dict[str, np.ndarray]:
    env = dict(os.environ, PYTHONPATH=source)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", source, model,
                           json.dumps(options), out], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["worker failed"])[-1])
    with np.load(out) as saved:
        return {key: saved[key] for key in saved.files}


def figures(side: dict, baseline: dict | None) -> dict:
    """Lowest PCC against onnxruntime; against the baseline's outputs: lowest PCC, largest relative difference."""
    from onnx2ttnn.verify import pcc  # verify's own measure (NaNs and constant outputs handled as it does)

    names = [key[4:] for key in side if key.startswith("got/")]
    row = {"ort": min(pcc(side[f"got/{n}"], side[f"want/{n}"]) for n in names)}
    if baseline is not None:
        row["base"] = min(pcc(side[f"got/{n}"], baseline[f"got/{n}"]) for n in names)
        row["diff"] = max(float(np.abs(side[f"got/{n}"] - baseline[f"got/{n}"]).max()
                                / max(float(np.abs(baseline[f"got/{n}"]).max()), 1e-30)) for n in names)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reduced", action="store_true", help="the zoo's CI sizes (default: full size)")
    parser.add_argument("--models", nargs="*", default=list(MODELS), help="zoo entry names or .onnx paths")
    parser.add_argument("--baseline-rev", default=BASELINE_REVISION)
    args = parser.parse_args(argv)
    sys.path.insert(0, ROOT)
    start = time.perf_counter()
    print(f"{'model':14} {'side':9} {'PCC vs ORT':>11} {'PCC vs base':>12} {'max |diff| / max|base|':>23}")
    with tempfile.TemporaryDirectory(prefix="bench_numerics_") as folder:
        base_source = baseline_source(args.baseline_rev, folder)
        for name, path in model_paths(args.reduced, args.models):
            try:
                outputs = {label: run_side(source or base_source, path, options,
                                           os.path.join(folder, f"{label}.npz"))
                           for label, source, options in SIDES}
            except (RuntimeError, OSError) as error:
                print(f"{name:14} failed: {str(error)[:160]}", flush=True)
                continue
            baseline = outputs["baseline"]
            same_inputs = all(np.array_equal(side[key], baseline[key]) for side in outputs.values()
                              for key in baseline if key.startswith("want/"))
            for label, side in outputs.items():
                row = figures(side, None if label == "baseline" else baseline)
                tail = "" if label == "baseline" else f" {row['base']:12.6f} {row['diff']:23.4g}"
                print(f"{name:14} {label:9} {row['ort']:11.6f}{tail}", flush=True)
            if not same_inputs:
                print(f"{name:14} the sides fed onnxruntime different inputs: the comparison with the baseline "
                      f"does not hold")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(worker(*sys.argv[2:6]))
    sys.exit(main())
