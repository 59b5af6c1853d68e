"""Find the weights whose block-float format drives a model's outputs under PCC 0.99 on the simulator.

    python tools/weight_bisect.py MODEL.onnx [--weights auto|bfp8|bfp4] [--threshold 0.99] [-- OPTION=VALUE ...]
    python tools/weight_bisect.py --zoo NAME [NAME ...] [--weights ...]       (CI zoo entries, reduced sizes)
    python tools/weight_bisect.py --zoo ci --sweep                             (every CI entry: PCC only)

For each model: convert with --weights, run `verify` (the simulator against onnxruntime) and print the worst
output PCC and how many weights took each format.  When the worst PCC is under the threshold, the weights the
conversion put in a block float are bisected in the order the program uploads them: the shortest prefix whose
weights, kept in bf16 (Options.keep_bf16), bring the model back over the threshold ends with a culprit; it is
added to the kept set and the search repeats on the rest until the model passes.  Each step is one conversion
and one simulator run, so k culprits among n block-float weights take about k * log2(n) runs.  The culprits
printed are the weights to keep in bf16 (the converter's keep_bf16 option), and a case for tightening auto's
criterion (onnx2ttnn/lowering/weight_dtype.py) if auto chose them.  With --sweep, no bisection: one line per
model (the proof that auto holds on the zoo, docs/design.md §6.13).
"""
from __future__ import annotations

import argparse
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.append(REPO)


def worst_pcc(model: str, options: dict) -> tuple[float, dict]:
    """(the lowest output PCC on the simulator, weight -> (format, why)) of `model` converted with `options`."""
    import onnx2ttnn
    from onnx2ttnn.verify import verify

    conversion = onnx2ttnn.convert(model, **options)
    report = verify(model, conversion=conversion)
    float_outputs = [o.pcc for o in report.outputs if not o.exact]
    return (min(float_outputs) if float_outputs else 1.0), conversion.weight_formats()


def bisect(model: str, options: dict, threshold: float, log=print) -> list[str]:
    """The weights to keep in bf16 for `model` to pass `threshold` (empty when it passes as it is)."""
    pcc, formats = worst_pcc(model, options)
    candidates = [name for name, (dtype, _) in formats.items() if dtype in ("bfp8", "bfp4")]
    log(f"  worst PCC {pcc:.5f} with {len(candidates)} block-float weights")
    kept: list[str] = []
    if pcc >= threshold:
        return kept
    floor, _ = worst_pcc(model, {**options, "keep_bf16": tuple(candidates)})
    if floor < threshold:
        log(f"  every weight in bf16 still gives {floor:.5f}: the weights' formats are not the cause")
        return candidates
    while pcc < threshold:
        rest = [c for c in candidates if c not in kept]
        low, high = 1, len(rest)  # the shortest prefix of `rest` that passes is in [low, high]
        while low < high:
            mid = (low + high) // 2
            if worst_pcc(model, {**options, "keep_bf16": tuple(kept + rest[:mid])})[0] >= threshold:
                high = mid
            else:
                low = mid + 1
        kept.append(rest[low - 1])
        pcc, _ = worst_pcc(model, {**options, "keep_bf16": tuple(kept)})
        log(f"  culprit {rest[low - 1]}: kept in bf16, worst PCC now {pcc:.5f}")
    return kept


def _zoo_models(names: list[str]) -> list[tuple[str, str]]:
    """(case name, exported .onnx path) of CI zoo entries (`ci`: all), reduced sizes, every exporter."""
    from models import export, zoo

    cases = []
    for entry in zoo.selected(full=False):
        if names != ["ci"] and entry.name not in names:
            continue
        for exporter in (entry.exporters if entry.exported else ("-",)):
            path = export.export(entry, "reduced", exporter if exporter != "-" else "dynamo", log=lambda line: None)
            cases.append((entry.name if exporter == "-" else f"{entry.name}-{exporter}", path))
    return cases


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", help="an .onnx file")
    parser.add_argument("--zoo", nargs="+", metavar="NAME", help="CI zoo entries instead (`ci`: all of them)")
    parser.add_argument("--weights", default="auto", choices=("auto", "bfp8", "bfp4"))
    parser.add_argument("--threshold", type=float, default=0.99)
    parser.add_argument("--sweep", action="store_true", help="print each model's worst PCC; no bisection")
    args = parser.parse_args(argv)
    if bool(args.model) == bool(args.zoo):
        parser.error("give one MODEL.onnx or --zoo NAME ...")
    cases = _zoo_models(args.zoo) if args.zoo else [(os.path.basename(args.model), args.model)]
    options = {"weights": args.weights}
    failed = 0
    for name, path in cases:
        try:
            if args.sweep:
                pcc, formats = worst_pcc(path, options)
                counts = {}
                for dtype, _ in formats.values():
                    counts[dtype] = counts.get(dtype, 0) + 1
                status = "ok" if pcc >= args.threshold else "UNDER"
                failed += status != "ok"
                print(f"{name:32} {status:5} worst PCC {pcc:.5f}  formats {dict(sorted(counts.items()))}", flush=True)
                continue
            print(f"{name}:", flush=True)
            kept = bisect(path, options, args.threshold, log=lambda line: print(line, flush=True))
            failed += bool(kept)
            print(f"  keep in bf16: {', '.join(kept) if kept else 'nothing'}", flush=True)
        except Exception as error:  # noqa: BLE001 - one line per model, the sweep goes on
            failed += 1
            print(f"{name:32} ERROR {type(error).__name__}: {str(error).splitlines()[0][:200]}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
