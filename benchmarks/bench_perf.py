"""Performance of the generated programs against a baseline measured in the same run (issue #14).

For each model, the candidate (this checkout, its default options plus CANDIDATE_OPTIONS) and the baseline are
converted and measured the same way, and the table gives both and their ratio candidate / baseline:
- DRAM MB: the cost model's DRAM bytes per forward (onnx2ttnn/ir/cost.py);
- calls: ttnn calls per forward (deallocations, weight uploads and host fallbacks excluded);
- eager us / traced us: modelled time per forward, device time + dispatch (ProgramCost.eager_s / traced_s);
- device us: the device time alone (roofline of compute, DRAM and L1 per call);
- ckc: calls passing a compute kernel config (`compute_kernel_config=`, conv's `compute_config=`); mm ckc/mm:
  the matmul, linear and conv calls that pass one, of all of them; pcfg: calls passing a `program_config=`;
- attn/layer: fused attention calls (KIND_OF_ATTENTION) per attention layer (the source model's Softmax
  nodes, one per layer in the zoo's transformers);
- weights: the forward's weights by the format they are read in (MB), conv weights in the format the conv
  prepares them in.
Nothing is timed: every figure comes from the cost model and the placed program (the emitted IR).

The baseline is "today's auto" (issue #14): the program as main made it when the issue was filed.
- BASELINE_OPTIONS: option overrides (onnx2ttnn.options.Options fields) that turn the new features off,
  e.g. {"weights": "bf16"} once --weights exists.  When the features of issue #14 are all behind options,
  set them here and set BASELINE_REVISION to "": the baseline is then this checkout with these options.
- BASELINE_REVISION: until then, the converter of that commit of main.  Its onnx2ttnn/ folder is extracted
  with `git archive` into a temporary folder (nothing registered in the repository, nothing left behind) and
  the baseline conversion runs in a subprocess that imports onnx2ttnn from there.
Both conversions run in a subprocess (`--worker`) that pickles the placed IR (weights dropped: constants keep
shape and dtype) for this process to measure with *this* checkout's cost model, so the two sides differ only in
their programs, never in how they are measured.  `--baseline-rev none` measures this checkout against itself
(every ratio 1.00: the harness's own check).

Usage: python benchmarks/bench_perf.py [--reduced] [--models NAME|PATH.onnx ...] [--device n150]
       [--baseline-rev REV|none] [--baseline-options JSON] [--candidate-options JSON]
Default: the full-size exports (models/export.py caches them) of ResNet-50, MobileNetV2, BERT-base, ViT-B/16
and GPT-2 small; --reduced: their CI sizes.  Results are kept in benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import copyreg
import io
import json
import os
import pickle
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ("resnet", "mobilenet_v2", "bert", "vit", "gpt2")  # ResNet-50, MobileNetV2, BERT-base, ViT-B/16, GPT-2
BASELINE_REVISION = "2521c7a21c43338fa13ec889f57f8822535a0c48"  # main when issue #14 was worked on
BASELINE_OPTIONS: dict = {}  # e.g. {"weights": "bf16", "fuse_attention": False}: today's program by options
CANDIDATE_OPTIONS: dict = {}  # the candidate is the default options (plus these overrides)
KIND_OF_ATTENTION = ("scaled_dot_product_attention", "attention_softmax")  # fused attention ops (name contains)
KERNEL_CONFIG_ARGS = ("compute_kernel_config", "compute_config")  # ttnn's keyword names
MATRIX = ("matmul", "linear", "conv2d", "conv_transpose2d")


class ShapeOnly:
    """A constant's values with the weights dropped: what the cost model reads of them (shape, dtype)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype


def restore(cls, state):
    """An object rebuilt from its attributes without calling its methods (a gs.Graph's __getattr__ recurses
    while its attributes are missing)."""
    obj = object.__new__(cls)
    obj.__dict__.update(state)
    return obj


# pickled by that name whether this file runs as a script or is imported
ShapeOnly.__module__ = restore.__module__ = "bench_perf"
sys.modules.setdefault("bench_perf", sys.modules[__name__])


def worker(source: str, model: str, options: str, out: str) -> int:
    """Convert MODEL with the onnx2ttnn found in SOURCE and pickle the placed module (weights dropped)."""
    sys.path.insert(0, source)
    import onnx2ttnn
    import onnx_graphsurgeon as gs
    from onnx_graphsurgeon.util.misc import SynchronizedList

    if not os.path.abspath(onnx2ttnn.__file__).startswith(os.path.abspath(source)):
        raise SystemExit(f"error: onnx2ttnn imported from {onnx2ttnn.__file__}, not from {source}")
    module = onnx2ttnn.convert(model, **json.loads(options)).module
    for tensor in module.graph.tensors().values():  # graphsurgeon keeps a constant's values in `_values`
        if isinstance(tensor, gs.Constant):
            tensor._values = ShapeOnly(tensor.shape, tensor.dtype)
    module.regions = [b"" for _ in module.regions]
    module.dequantized = {}
    done: list = []

    def dump():  # the graph's links pickle depth-first: a deep stack for long programs
        with open(out, "wb") as f:
            pickle.dump(module, f, protocol=pickle.HIGHEST_PROTOCOL)
        done.append(True)

    # graphsurgeon's node and tensor link lists go as plain lists (measuring only reads them)
    copyreg.pickle(SynchronizedList, lambda links: (list, (list(links),)))
    copyreg.pickle(gs.Graph, lambda graph: (restore, (gs.Graph, graph.__dict__)))
    sys.setrecursionlimit(1_000_000)
    threading.stack_size(512 * 1024 * 1024)
    thread = threading.Thread(target=dump)
    thread.start()
    thread.join()
    return 0 if done else 1


def convert_in(source: str, model: str, options: dict, folder: str):
    """The placed module of MODEL converted by the onnx2ttnn in SOURCE (a subprocess), unpickled here."""
    out = os.path.join(folder, "module.pkl")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", source, model,
                           json.dumps(options), out], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["worker failed"])[-1])
    with open(out, "rb") as f:  # unpickling is iterative: no deep stack needed here
        module = pickle.load(f)
    os.remove(out)
    return module


def attention_layers(model: str) -> int:
    """Attention layers of the source model: its Softmax nodes (functions included)."""
    import onnx

    proto = onnx.load(model, load_external_data=False)
    graphs = [proto.graph.node] + [f.node for f in proto.functions]
    return sum(1 for nodes in graphs for node in nodes if node.op_type == "Softmax")


def measure(module, device: str, layers: int) -> dict:
    """The figures of one placed program, all from this checkout's cost model and the program's calls."""
    from onnx2ttnn.ir.cost import program_cost
    from onnx2ttnn.ir.weight_bytes import weight_formats
    from onnx2ttnn.ir.device import get_device

    graph = module.graph
    cost = program_cost(graph, get_device(device))
    calls = [graph.nodes[n.index] for n in cost.nodes if n.call]
    attention = sum(1 for node in calls if any(kind in node.op for kind in KIND_OF_ATTENTION))
    return {"dram": cost.dram_bytes, "floor": cost.floor_bytes, "calls": cost.calls, "device": cost.time_s,
            "eager": cost.eager_s, "traced": cost.traced_s, "host_ops": cost.host_ops,
            "mm": sum(1 for node in calls if node.op in MATRIX),
            "ckc": sum(1 for node in calls if _configured(node)),
            "mm_ckc": sum(1 for node in calls if node.op in MATRIX and _configured(node)),
            "pcfg": sum(1 for node in calls if node.attrs.get("program_config") is not None),
            "attn": attention / layers if layers else None, "layers": layers,
            "weights": weight_formats(graph)}


def _configured(node) -> bool:
    return any(node.attrs.get(k) is not None for k in KERNEL_CONFIG_ARGS)


def baseline_source(revision: str, folder: str) -> str:
    """A folder holding onnx2ttnn/ as of REVISION (git archive), or this checkout for "none"."""
    if revision in ("", "none"):
        return ROOT
    proc = subprocess.run(["git", "-C", ROOT, "archive", "--format=tar", revision, "onnx2ttnn"],
                          capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: cannot read revision {revision}: {proc.stderr.decode().strip()[:200]}")
    target = os.path.join(folder, "baseline")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(target, filter="data")
    return target


def model_paths(reduced: bool, names: list[str]) -> list[tuple[str, str]]:
    from models import export, zoo

    paths = []
    for name in names:
        if name.endswith(".onnx"):
            paths.append((os.path.splitext(os.path.basename(name))[0], name))
            continue
        entry = zoo.get(name)
        paths.append((name, entry.path or export.export(entry, "reduced" if reduced else "full", log=lambda *a: None)))
    return paths


def _formats(weights: dict) -> str:
    return ", ".join(f"{fmt} {nbytes / 1e6:.3g}" for fmt, nbytes in weights.items()) or "-"


def _ratio(a, b) -> str:
    return f"{a / b:.2f}" if a is not None and b else "-"


COLUMNS = ("dram", "calls", "eager", "traced", "device", "ckc", "pcfg", "attn")


def rows(name: str, base: dict, cand: dict) -> list[str]:
    """Three lines of the table: baseline, candidate, candidate / baseline."""
    def line(label, m):
        attn = "-" if m["attn"] is None else f"{m['attn']:.2f}"
        return (f"{label:22} {m['dram'] / 1e6:9.3f} {m['calls']:6d} {m['eager'] * 1e6:9.1f} {m['traced'] * 1e6:9.1f} "
                f"{m['device'] * 1e6:9.1f} {m['ckc']:4d} {m['mm_ckc']:4d}/{m['mm']:<4d} {m['pcfg']:4d} {attn:>10}  {_formats(m['weights'])}")
    ratio = [_ratio(cand[c], base[c]) for c in COLUMNS]
    return [line(f"{name} baseline", base), line(f"{name} candidate", cand),
            f"{name + ' ratio':22} {ratio[0]:>9} {ratio[1]:>6} {ratio[2]:>9} {ratio[3]:>9} {ratio[4]:>9} "
            f"{ratio[5]:>4} {'':9} {ratio[6]:>4} {ratio[7]:>10}"]


HEADER = (f"{'model':22} {'DRAM MB':>9} {'calls':>6} {'eager us':>9} {'traced us':>9} {'device us':>9} "
          f"{'ckc':>4} {'mm ckc/mm':>9} {'pcfg':>4} {'attn/layer':>10}  weights MB by format")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reduced", action="store_true", help="the zoo's CI sizes (default: full size)")
    parser.add_argument("--models", nargs="*", default=list(MODELS), help="zoo entry names or .onnx paths")
    parser.add_argument("--device", default="n150")
    parser.add_argument("--baseline-rev", default=BASELINE_REVISION,
                        help="commit whose converter makes the baseline; none: this checkout (default: "
                             "BASELINE_REVISION)")
    parser.add_argument("--baseline-options", default=json.dumps(BASELINE_OPTIONS), help="JSON option overrides")
    parser.add_argument("--candidate-options", default=json.dumps(CANDIDATE_OPTIONS), help="JSON option overrides")
    args = parser.parse_args(argv)
    sys.path.insert(0, ROOT)
    base_options = dict(json.loads(args.baseline_options), device=args.device)
    cand_options = dict(json.loads(args.candidate_options), device=args.device)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_perf_") as folder:
        source = baseline_source(args.baseline_rev, folder)
        print(f"baseline: {'this checkout' if source == ROOT else 'revision ' + args.baseline_rev[:12]} "
              f"options {json.dumps(base_options)}; candidate: this checkout options {json.dumps(cand_options)}")
        print(HEADER)
        print("-" * len(HEADER))
        for name, path in model_paths(args.reduced, args.models):
            try:
                layers = attention_layers(path)
                base = measure(convert_in(source, path, base_options, folder), args.device, layers)
                cand = measure(convert_in(ROOT, path, cand_options, folder), args.device, layers)
            except (RuntimeError, OSError) as error:
                print(f"{name:22} failed: {str(error)[:160]}")
                continue
            print("\n".join(rows(name, base, cand)), flush=True)
            for side, m in (("baseline", base), ("candidate", cand)):
                if m["host_ops"]:  # ir/cost.py: a forward with host computations cannot be traced whole
                    print(f"  {name} {side}: {m['host_ops']} host fallback or region calls; its traced figure "
                          f"leaves their cost out and assumes the device calls around them traced")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(worker(*sys.argv[2:6]))
    sys.exit(main())
