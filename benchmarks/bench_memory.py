"""Memory-plan quality: modelled DRAM traffic and device time of --memory dram / l1 / auto, against the floor.

For each model: converts it three times and evaluates the cost model (onnx2ttnn/ir/cost.py) on each placed
program.  Prints one table: DRAM traffic per forward pass of each policy and the floor of auto's program
(every weight not resident in L1 read once at its format + inputs + outputs), auto's traffic as a ratio of dram's and of the floor, the estimated device time of
each policy, the number of sharded buffers auto chose, and auto's planning share (the place-memory and
insert-moves passes' time / the whole auto conversion) and auto's conversion time as a ratio of the dram policy's.
Usage: python benchmarks/bench_memory.py [--full] [--models mlp cnn bert ...] [--device n150] [--repeats 3]
Default models: models/mlp.onnx, models/cnn.onnx and the zoo's CI entries at reduced size (--full: the
published sizes of the five models issue #7 accepts on, FULL_MODELS; exports are cached by models/export.py).
Results of a run are kept in benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import onnx2ttnn  # noqa: E402
from onnx2ttnn.ir.cost import program_cost  # noqa: E402
from onnx2ttnn.ir.device import get_device  # noqa: E402

POLICIES = ("dram", "l1", "auto")
FULL_MODELS = ("resnet", "mobilenet_v2", "bert", "vit", "gpt2")  # ResNet-50, MobileNetV2, BERT-base, ViT-B/16, GPT-2


def model_paths(full: bool, names: list[str] | None) -> list[tuple[str, str]]:
    from models import export, zoo

    size = "full" if full else "reduced"
    paths = []
    if full and not names:
        names = list(FULL_MODELS)
    for entry in zoo.selected(full=full, names=names):
        try:
            paths.append((entry.name, entry.path or export.export(entry, size, log=lambda *a: None)))
        except Exception as error:  # noqa: BLE001 - an export failure is reported, the others still run
            paths.append((entry.name, f"!export failed: {type(error).__name__}: {error}"))
    return paths


def measure(path: str, device: str, repeats: int) -> dict:
    """Each policy's cost and fastest conversion; the policies take turns within every repeat, so a slow
    stretch of a shared machine (or a cold file cache) does not fall on one policy only."""
    runs: dict[str, list] = {memory: [] for memory in POLICIES}
    for _ in range(repeats):
        for memory in POLICIES:
            start = time.perf_counter()
            conversion = onnx2ttnn.convert(path, memory=memory, device=device)
            runs[memory].append((time.perf_counter() - start, conversion))
    row = {}
    for memory in POLICIES:
        total, conversion = min(runs[memory], key=lambda run: run[0])
        cost = program_cost(conversion.module.graph, get_device(device))
        planning = sum(t for name, t in conversion.timings if name in ("place-memory", "insert-moves"))
        row[memory] = {"dram": cost.dram_bytes, "time": cost.time_s, "convert_s": total, "plan_s": planning,
                       "sharded": conversion.module.notes["place-memory"].get("sharded_buffers", 0)}
        row["floor"] = cost.floor_bytes
    return row


def _mb(n: int) -> str:
    return f"{n / 1e6:9.3f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="published model sizes")
    parser.add_argument("--models", nargs="*", help="zoo entry names (default: mlp, cnn and the CI zoo)")
    parser.add_argument("--device", default="n150")
    parser.add_argument("--repeats", type=int, default=3, help="conversions per policy (the fastest is timed)")
    args = parser.parse_args(argv)
    header = (f"{'model':18} {'dram MB':>9} {'l1 MB':>9} {'auto MB':>9} {'floor MB':>9} {'auto/dram':>9} "
              f"{'auto/floor':>10} {'t dram us':>10} {'t l1 us':>9} {'t auto us':>9} {'sharded':>7} "
              f"{'plan share':>10} {'conv auto/dram':>14}")
    print(header)
    print("-" * len(header))
    ratios = []
    for name, path in model_paths(args.full, args.models):
        if path.startswith("!"):
            print(f"{name:18} {path[1:]}")
            continue
        try:
            row = measure(path, args.device, args.repeats)
        except Exception as error:  # noqa: BLE001
            print(f"{name:18} conversion failed: {type(error).__name__}: {str(error)[:100]}")
            continue
        d, l1, auto = row["dram"], row["l1"], row["auto"]
        ratio = auto["dram"] / d["dram"] if d["dram"] else 0.0
        ratios.append(ratio)
        print(f"{name:18} {_mb(d['dram'])} {_mb(l1['dram'])} {_mb(auto['dram'])} {_mb(row['floor'])} "
              f"{ratio:9.2f} {auto['dram'] / max(1, row['floor']):10.2f} {d['time'] * 1e6:10.1f} "
              f"{l1['time'] * 1e6:9.1f} {auto['time'] * 1e6:9.1f} {auto['sharded']:7d} "
              f"{auto['plan_s'] / auto['convert_s']:10.1%} {auto['convert_s'] / d['convert_s']:14.2f}")
    if ratios:
        print(f"median auto/dram DRAM traffic: {statistics.median(ratios):.2f} over {len(ratios)} models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
