"""Converter speed: is onnx2ttnn.convert linear in graph size, and does it load the weights only once?

Builds transformers BERT encoders with 1, 2, 4, 8 and 12 layers (hidden 768, 12 heads, intermediate 3072,
128 tokens; random weights, fixed seed; exported with torch.onnx.export(dynamo=True) by models/export.py,
which caches the exports; 12 layers is the zoo's BERT-base entry itself), converts each one in a fresh
process (the fastest of --repeats conversions is timed) and prints one table: layers, ONNX nodes, weights
MB, total convert seconds, seconds per 1000 nodes, the split of the import into its stages (load + checker,
shape inference, graph import; timed once more after the conversions), each pass's seconds, and the peak RSS
growth during the conversions as a multiple of the weights' size (about 1x: the weights are held once;
2x or more: something holds a second copy). Last lines: the linearity ratio, the largest model's seconds
per node over the smallest's (1.0 = linear; the embeddings weigh the same in every model, so the
per-node time of the small models carries more fixed cost and the ratio sits below 1 when all is linear),
and the marginal seconds per 1000 nodes from each size to the next (rising: super-linear).
With `--chain 5000 10000 20000 40000` it converts Add/Relu chains of that many nodes instead (built with
onnx.helper into a temporary folder; no weights), and prints each pass's marginal cost per 1000 nodes
between sizes, the figure that shows a pass growing faster than the graph. The chain table measures the
process's CPU seconds per pass (`time.process_time` between the pipeline's progress calls), which a loaded
machine disturbs far less than wall-clock seconds; `--calls` counts the Python function calls each pass makes
instead (cProfile), a figure no load changes: a pass whose calls grow faster than the graph is super-linear
in its algorithm, not in the machine.
With `--zoo NAME ...` it converts those zoo models too (`--layers` with no sizes: only them), and with
`--against DIR` each model is converted by the onnx2ttnn checkout in DIR as well (its rows marked *), followed by
this checkout's figures over DIR's: a comparison measured in one run on one machine state.  The last column is
the peak RSS growth while measure-weight-gain runs (the high-water mark restarted as each pass starts).
Usage: python benchmarks/bench_convert.py [--layers 1 2 4 8 12 | --chain N ... [--calls]] [--repeats 2]
       [--memory auto] [--zoo NAME ...] [--against CHECKOUT]
Results of a run are kept in benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
if os.environ.get("ONNX2TTNN_BENCH_CHECKOUT"):  # --checkout: a child converting with another checkout's onnx2ttnn
    sys.path.insert(0, os.environ["ONNX2TTNN_BENCH_CHECKOUT"])

LAYERS = (1, 2, 4, 8, 12)
PASS_COLUMNS = (  # (timings name, column header)
    ("fold-constants", "fold"), ("measure-weight-gain", "gain"), ("remove-identities", "ident"),
    ("fuse-patterns", "fuse"),
    ("lower-to-ttnn", "lower"), ("simplify-ttnn", "simpl"), ("assign-layouts", "layout"),
    ("decompose-layouts", "decomp"), ("place-memory", "place"), ("insert-moves", "moves"),
    ("insert-deallocs", "dealloc"),
    ("assign-memory-configs", "memcfg"), ("emit", "emit"),
)
IMPORT_COLUMNS = (("load", "load"), ("infer-shapes", "shapes"), ("graph", "graph"))


def bert_entry(layers: int):
    """The zoo's BERT-base entry with `layers` encoder layers (12: the entry itself, so its export is shared)."""
    from models import zoo

    base = zoo.get("bert")
    if layers == 12:
        return base
    return dataclasses.replace(base, name=f"bert_l{layers}", full={"num_hidden_layers": layers})


def export_path(layers: int) -> str:
    from models import export

    return export.export(bert_entry(layers), "full", "dynamo", log=lambda *a: print(*a, file=sys.stderr))


def chain_path(nodes: int, folder: str) -> str:
    """An Add/Relu chain of `nodes` nodes on a [1, 64] input (written once into `folder`)."""
    import onnx
    from onnx import TensorProto, helper

    path = os.path.join(folder, f"chain{nodes}.onnx")
    if not os.path.exists(path):
        body, previous = [], "x"
        for i in range(nodes // 2):
            body += [helper.make_node("Add", [previous, "x"], [f"a{i}"]),
                     helper.make_node("Relu", [f"a{i}"], [f"r{i}"])]
            previous = f"r{i}"
        graph = helper.make_graph(body, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                                  [helper.make_tensor_value_info(previous, TensorProto.FLOAT, [1, 64])])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def stage_costs(path: str, memory: str = "auto", calls: bool = False) -> dict[str, float]:
    """Each stage's cost in one conversion of `path` in this process: CPU seconds, or with `calls` the number of
    Python function calls (cProfile's counts).

    The pipeline calls `progress(name)` as each stage starts ("import", then every pass); a stage's cost is the
    counter's growth up to the next call, so the last pass (assign-memory-configs) includes the emitter."""
    import cProfile

    import onnx2ttnn

    profiler = cProfile.Profile() if calls else None

    def reading() -> float:
        if profiler is None:
            return time.process_time()
        profiler.disable()
        count = sum(entry.callcount for entry in profiler.getstats())
        profiler.enable()
        return count

    marks: list[tuple[str, float]] = []
    if profiler is not None:
        profiler.enable()
    onnx2ttnn.convert(path, memory=memory, progress=lambda name: marks.append((name, reading())))
    marks.append(("end", reading()))
    if profiler is not None:
        profiler.disable()
    return {name: after - before for (name, before), (_, after) in zip(marks, marks[1:])}


def chain_table(sizes: list[int], repeats: int, memory: str, calls: bool = False) -> None:
    """Per-pass CPU seconds (or Python calls) of Add/Relu chains, and each pass's marginal cost per 1000 nodes."""
    import tempfile

    names = [("import", "import")] + [(name, head) for name, head in PASS_COLUMNS if name != "emit"]
    names[-1] = (names[-1][0], names[-1][1] + "+e")  # the last pass's cost includes the emitter (stage_costs)
    unit, width = ("calls", 10) if calls else ("CPU s", 7)
    header = f"{'nodes':>6} {'total':>{width + 2}} " + " ".join(f"{head:>{width}}" for _, head in names)
    print(f"{unit} per stage")
    print(header)
    print("-" * len(header))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for nodes in sorted(sizes):
            costs = measure(chain_path(nodes, folder), repeats, memory, calls=calls)
            total = sum(costs.values())
            rows.append((nodes, total, costs))
            cell = (lambda v: f"{v:{width}.0f}") if calls else (lambda v: f"{v:{width}.3f}")
            print(f"{nodes:6d} {cell(total):>{width + 2}} " + " ".join(cell(costs.get(n, 0.0)) for n, _ in names),
                  flush=True)
    print(f"marginal {unit} per 1000 nodes, size to size (flat = linear):")
    for name, head in [("total", "total")] + names:
        steps = []
        for (n0, t0, p0), (n1, t1, p1) in zip(rows, rows[1:]):
            a, b = (t0, t1) if name == "total" else (p0.get(name, 0.0), p1.get(name, 0.0))
            steps.append(f"{1000 * (b - a) / (n1 - n0):.4f}" if not calls else f"{1000 * (b - a) / (n1 - n0):.0f}")
        print(f"  {head:9} " + " ".join(steps))
    if len(rows) > 1:
        print(f"largest over smallest total: {rows[-1][1] / rows[0][1]:.2f} for {rows[-1][0] / rows[0][0]:.1f}x "
              "the nodes")


def graph_size(path: str) -> tuple[int, int]:
    """(ONNX nodes, bytes of its initializers and Constant nodes' tensors: the weights), read without its external
    data."""
    import math

    import onnx

    model = onnx.load_model(path, load_external_data=False)
    tensors = list(model.graph.initializer) + [a.t for n in model.graph.node if n.op_type == "Constant"
                                               for a in n.attribute if a.name == "value"]
    nbytes = sum(math.prod(t.dims) * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize for t in tensors)
    return len(model.graph.node), nbytes


def _rss_bytes(field: str = "VmHWM") -> int:
    """This process's peak (VmHWM) or current (VmRSS) resident size.  /proc/self/status, not getrusage: a
    child's ru_maxrss starts at its parent's size when forked (a parent that imported torch: ~250 MB)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux KiB; no /proc: the best we have


def _import_stages(path: str, shapes: dict = None) -> dict:
    """Seconds of the importer's stages (frontend/importer.py does the same steps in this order)."""
    import onnx_graphsurgeon as gs

    from onnx2ttnn.frontend.load import load_model
    from onnx2ttnn.frontend.shapes import check_static_inputs, infer_shapes, override_input_shapes

    out = {}
    start = time.perf_counter()
    proto = load_model(path)
    out["load"] = time.perf_counter() - start
    override_input_shapes(proto, {name: tuple(dims) for name, dims in (shapes or {}).items()})
    check_static_inputs(proto)
    start = time.perf_counter()
    proto = infer_shapes(proto)
    out["infer-shapes"] = time.perf_counter() - start
    start = time.perf_counter()
    gs.import_onnx(proto)
    out["graph"] = time.perf_counter() - start
    return out


def _reset_peak() -> bool:
    """Start a new VmHWM from the current RSS (Linux: /proc/self/clear_refs); False where that cannot be done."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def child(path: str, repeats: int, memory: str, shapes: dict = None) -> dict:
    """Convert `path` `repeats` times in this (fresh) process; the fastest run's timings, the peak RSS, and the
    peak during measure-weight-gain (the high-water mark restarted as each stage starts, where Linux allows)."""
    import gc

    import onnx2ttnn

    gc.collect()
    before = _rss_bytes("VmRSS")
    best, peak, gain_peak = None, 0, None
    for _ in range(repeats):
        marks = []

        def progress(name: str) -> None:
            marks.append((name, _rss_bytes("VmHWM")))
            if not _reset_peak():
                marks.clear()

        start = time.perf_counter()
        conversion = onnx2ttnn.convert(path, memory=memory, progress=progress,
                                       input_shapes={name: tuple(dims) for name, dims in (shapes or {}).items()})
        total = time.perf_counter() - start
        marks.append(("end", _rss_bytes("VmHWM")))
        peak = max([peak] + [hwm for _, hwm in marks])
        gain_peak = next((hwm for (name, _), (_, hwm) in zip(marks, marks[1:]) if name == "measure-weight-gain"),
                         gain_peak)
        if best is None or total < best[0]:
            best = (total, list(conversion.timings))
        del conversion
        gc.collect()
    peak = max(peak, _rss_bytes("VmHWM"))
    return {"total": best[0], "timings": best[1], "rss_growth": peak - before, "stages": _import_stages(path, shapes),
            "gain_rss_growth": None if gain_peak is None else gain_peak - before}


def chain_child(path: str, repeats: int, memory: str, calls: bool) -> dict:
    """The cheapest of `repeats` conversions' stage costs (a call count is the same every time: one run)."""
    import gc

    best = None
    for _ in range(1 if calls else repeats):
        costs = stage_costs(path, memory, calls)
        if best is None or sum(costs.values()) < sum(best.values()):
            best = costs
        gc.collect()
    return best


def measure(path: str, repeats: int, memory: str, calls: bool = None, shapes: dict = None,
            checkout: str = None) -> dict:
    """Run `child` (or with `calls` set, `chain_child`) in a fresh interpreter, so each model's peak RSS is its
    own; `checkout`: the onnx2ttnn checkout converting (default: this one)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", path, "--repeats", str(repeats),
           "--memory", memory, "--shapes", json.dumps(shapes or {})]
    if calls is not None:
        cmd += ["--chain-child"] + (["--calls"] if calls else [])
    env = dict(os.environ, ONNX2TTNN_BENCH_CHECKOUT=os.path.abspath(checkout)) if checkout else None
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "child failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="*", default=list(LAYERS))
    parser.add_argument("--repeats", type=int, default=2, help="conversions per model (the fastest is timed)")
    parser.add_argument("--memory", default="auto", help="memory policy of the conversions")
    parser.add_argument("--chain", type=int, nargs="*", help="Add/Relu chains of these node counts instead of BERT")
    parser.add_argument("--calls", action="store_true",
                        help="with --chain: count each pass's Python function calls instead of its CPU seconds")
    parser.add_argument("--zoo", nargs="*", default=[],
                        help="zoo models (at CI's size: reduced exports, wheel models) after the BERT sizes")
    parser.add_argument("--against", help="another onnx2ttnn checkout (e.g. the main one): each model is converted "
                                          "by it too, in the same run, and this one's figures given over its")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--shapes", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--chain-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        result = (chain_child(args.child, args.repeats, args.memory, args.calls) if args.chain_child
                  else child(args.child, args.repeats, args.memory, json.loads(args.shapes)))
        print(json.dumps(result))
        return 0
    if args.chain:
        chain_table(args.chain, args.repeats, args.memory, args.calls)
        return 0
    models = [(str(layers), export_path(layers), {}) for layers in sorted(args.layers)]
    models += [zoo_model(name) for name in args.zoo]
    checkouts = [None] + ([args.against] if args.against else [])
    columns = [("layers", 9), ("nodes", 6), ("weights MB", 10), ("total s", 8), ("s/1k nodes", 10)]
    columns += [("import", 7)] + [(head, 7) for _, head in IMPORT_COLUMNS] + [(head, 7) for _, head in PASS_COLUMNS]
    columns += [("RSS/weights", 11), ("gain RSS/w", 10)]
    header = " ".join(f"{name:>{width}}" for name, width in columns)
    if args.against:
        print(f"rows marked * converted by {args.against}")
    print(header)
    print("-" * len(header))
    per_node, points = [], []
    for label, path, shapes in models:
        nodes, weight_bytes = graph_size(path)
        rows = {}
        for checkout in checkouts:
            row = rows[checkout] = measure(path, args.repeats, args.memory, shapes=shapes, checkout=checkout)
            timings = dict(row["timings"])
            if checkout is None and label.isdigit():
                per_node.append(row["total"] / nodes)
                points.append((int(label), nodes, row["total"]))
            gain_rss = row["gain_rss_growth"]
            cells = [f"{label + ('*' if checkout else ''):>9}", f"{nodes:6d}", f"{weight_bytes / 1e6:10.1f}",
                     f"{row['total']:8.3f}", f"{1000 * row['total'] / nodes:10.3f}"]
            cells += [f"{timings['import']:7.3f}"] + [f"{row['stages'][name]:7.3f}" for name, _ in IMPORT_COLUMNS]
            cells += [f"{timings.get(name, 0.0):7.3f}" for name, _ in PASS_COLUMNS]
            cells += [f"{row['rss_growth'] / weight_bytes:11.2f}",
                      f"{gain_rss / weight_bytes:10.2f}" if gain_rss is not None else f"{'-':>10}"]
            print(" ".join(cells), flush=True)
        if args.against:
            print("          this / *: " + _ratios(rows[None], rows[args.against]), flush=True)
    if len(per_node) > 1:
        print(f"linearity ratio (largest model's s/node over the smallest's): {per_node[-1] / per_node[0]:.2f}")
        steps = [f"{a[0]}->{b[0]}: {1000 * (b[2] - a[2]) / (b[1] - a[1]):.3f}" for a, b in zip(points, points[1:])]
        print("marginal s/1k nodes (flat or falling = linear): " + ", ".join(steps))
    return 0


def zoo_model(name: str) -> tuple[str, str, dict]:
    """(name, path, input shapes) of a zoo model at the size CI converts it (reduced exports; wheel models)."""
    from models import export, zoo

    entry = zoo.get(name)
    exporter = entry.exporters[0] if entry.exported else "-"
    path = export.export(entry, "reduced", exporter, log=lambda *a: print(*a, file=sys.stderr))
    return name, path, dict(entry.shapes)


def _ratios(this: dict, other: dict) -> str:
    """This checkout's total time, measure-weight-gain time, peak RSS growth and the pass's over the other's."""
    def ratio(a, b):
        return f"{a / b:.2f}" if a is not None and b else "-"

    gain = dict(this["timings"]).get("measure-weight-gain"), dict(other["timings"]).get("measure-weight-gain")
    return (f"total {ratio(this['total'], other['total'])}, gain {ratio(*gain)}, "
            f"RSS {ratio(this['rss_growth'], other['rss_growth'])}, "
            f"gain RSS {ratio(this['gain_rss_growth'], other['gain_rss_growth'])}")


if __name__ == "__main__":
    sys.exit(main())
