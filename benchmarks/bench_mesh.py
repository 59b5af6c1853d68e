"""Per-chip figures of data-parallel programs as the chip count grows (issue #15).

For each model: converts it at one whole batch (default 32) on one chip (n150), on n300 (1x2), T3000 (2x4) and
Galaxy (4x8), and prints one chip's figures from the report (onnx2ttnn/report.py) and the capacity analysis
(onnx2ttnn/memory/capacity.py): parameters on the chip, DRAM reserved at the plan's peak, activations' DRAM
peak, peak L1 per core, the modelled eager time of one chip's forward (ir/cost.py: device time + dispatch),
and the modelled throughput of the mesh (whole batch / that time; the chips run in parallel and data parallel
moves nothing between them).  Last column: what tensor parallel would need per chip on the same mesh by the
capacity error's estimate (parameters / chips + the whole batch's activations), for comparison.
Usage: python benchmarks/bench_mesh.py [--models gpt2 bert vit cnn] [--batch 32] [--memory auto]
Models: the reduced zoo entries exported with a dynamic batch dim (tests/mesh/models.py; a model exported with
its batch fixed cannot be split).  Results of a run are kept in benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import onnx2ttnn  # noqa: E402
from onnx2ttnn.ir.device import get_device  # noqa: E402
from onnx2ttnn.memory.capacity import dram_use  # noqa: E402
from onnx2ttnn.report import placement_report  # noqa: E402

MESHES = (("n150", "1x1"), ("n300", "1x2"), ("t3k", "2x4"), ("galaxy", "4x8"))


def measure(path: str, batch: int, memory: str) -> list[dict]:
    """One row per mesh of MESHES: one chip's figures at the whole batch `batch`."""
    from tests.mesh.models import batch_shapes

    rows = []
    for device, mesh in MESHES:
        rows_, cols = map(int, mesh.split("x"))
        chips = rows_ * cols
        conversion = onnx2ttnn.convert(path, device=device, mesh=mesh, memory=memory,
                                       input_shapes=batch_shapes(path, batch))
        report, use = placement_report(conversion), dram_use(conversion.module.graph, get_device(device))
        rows.append({"mesh": f"{device} {mesh}", "chips": chips, "params": report.parameter_bytes,
                     "dram": use.peak_bytes, "activations": use.activation_bytes,
                     "l1": max(report.l1_per_core, default=0), "eager_us": report.eager_us,
                     "per_s": batch / (report.eager_us * 1e-6),
                     "tp": -(-use.parameter_bytes // chips) + use.activation_bytes * chips})
    return rows


def table(name: str, batch: int, rows: list[dict]) -> str:
    head = (f"{'model':6} {'mesh':12} {'chips':>5} {'batch/chip':>10} {'params B':>10} {'DRAM peak B':>11} "
            f"{'act. DRAM B':>11} {'L1/core B':>9} {'eager us':>9} {'mesh /s':>9} {'tp est. B':>10}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{name:6} {r['mesh']:12} {r['chips']:5d} {batch // r['chips']:10d} {r['params']:10d} "
                     f"{r['dram']:11d} {r['activations']:11d} {r['l1']:9d} {r['eager_us']:9.1f} {r['per_s']:9.0f} "
                     f"{r['tp']:10d}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["gpt2", "bert", "vit", "cnn"])
    parser.add_argument("--batch", type=int, default=32, help="the whole batch (divides by 1, 2, 8 and 32)")
    parser.add_argument("--memory", default="auto")
    args = parser.parse_args(argv)
    os.environ.setdefault("ONNX2TTNN_VERIFY_EACH", "0")
    from tests.mesh.models import dynamic_model

    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            print(table(name, args.batch, measure(dynamic_model(name, folder), args.batch, args.memory)))
            print()


if __name__ == "__main__":
    main()
