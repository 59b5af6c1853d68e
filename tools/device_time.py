"""Where a program's modelled device time goes: per ttnn op, and its slowest calls.

    python tools/device_time.py MODEL.onnx|ZOO_NAME [--reduced] [--top N] [-- OPTION=VALUE ...]

Converts the model (a zoo name takes its full-size export, cached by models/export.py; --reduced its CI size)
with the default options plus any OPTION=VALUE overrides (onnx2ttnn.options.Options fields), measures it with
the cost model (onnx2ttnn/ir/cost.py, the figures benchmarks/bench_perf.py reports) and prints, per ttnn op,
the calls, the device time and its share, split by what bounds each call (compute, dram, l1); then the N
slowest calls with their operands' shapes and layouts.  Conversion only: no simulator or device run.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model_path(name: str, reduced: bool) -> str:
    if name.endswith(".onnx"):
        return name
    from models import export, zoo

    entry = zoo.get(name)
    return entry.path or export.export(entry, "reduced" if reduced else "full", log=lambda *a: None)


def breakdown(graph, cost) -> list[tuple[str, int, float, Counter]]:
    """(op, calls, seconds, seconds by bound) per ttnn op, slowest first."""
    by_op: dict[str, list] = defaultdict(lambda: [0, 0.0, Counter()])
    for node_cost in cost.nodes:
        entry = by_op[graph.nodes[node_cost.index].op]
        entry[0] += 1
        entry[1] += node_cost.time_s
        entry[2][node_cost.bound or "-"] += node_cost.time_s
    return sorted(((op, n, t, bounds) for op, (n, t, bounds) in by_op.items()), key=lambda row: -row[2])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--reduced", action="store_true")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("options", nargs="*", help="OPTION=VALUE overrides (after --)")
    args = parser.parse_args(argv)
    sys.path.insert(0, ROOT)
    import onnx2ttnn
    from onnx2ttnn.ir.cost import program_cost
    from onnx2ttnn.ir.device import get_device
    from onnx2ttnn.ir.graph import layout_of

    options = dict(option.split("=", 1) for option in args.options)
    conversion = onnx2ttnn.convert(model_path(args.model, args.reduced), **options)
    graph = conversion.module.graph
    cost = program_cost(graph, get_device(options.get("device", "n150")))
    total = cost.time_s or 1.0
    print(f"{args.model}: device {cost.time_s * 1e6:.1f} us, {cost.launches} launches, {cost.calls} calls")
    for op, calls, seconds, bounds in breakdown(graph, cost):
        split = ", ".join(f"{bound} {t * 1e6:.1f}" for bound, t in bounds.most_common())
        print(f"  {op:50} {calls:4d} {seconds * 1e6:9.1f} us {100 * seconds / total:5.1f}%  ({split})")
    print(f"slowest {args.top} calls:")
    for node_cost in sorted(cost.nodes, key=lambda c: -c.time_s)[:args.top]:
        node = graph.nodes[node_cost.index]
        operands = "; ".join(f"{list(t.shape)} {layout_of(t)}" for t in node.inputs[:2] if t.shape is not None)
        print(f"  #{node_cost.index} {node.op} {node_cost.time_s * 1e6:.1f} us {node_cost.bound} on "
              f"{node_cost.cores} cores: {operands}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
