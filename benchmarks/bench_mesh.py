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

With --full: issue #15's acceptance cells at full size (BERT-base, GPT-2 small, ViT-B/16, and GPT-2 with its LM
head, gpt2_lm, exported with a dynamic batch: `python -m models.export --full --dynamic-batch bert gpt2 vit
gpt2_lm`), one row per model and cell of FULL_CELLS
(or --cells): converted with default options, one chip's parameter bytes against the single-chip (n150)
program's at the batch one chip (dp) or one mesh row (dp x tp) runs, the simulator's PCC against onnxruntime
(`onnx2ttnn.verify` on seeded inputs whose samples all differ, full_inputs: its lowest over the outputs) and buffers left on any chip, and (unless --no-mock) the
program's own main() on the real ttnn 0.81.1 mock with the matching descriptor (tools/ttnn_mock/run_mesh.py):
its exit code and the bytes per bank left on a chip after clearing the program cache.  Column `program`: a
digest of the program text and its weights (program_digest): a cell whose digest is equal on two commits runs
the same program on both; `--full --digests` prints the digests alone (conversion only, a minute a cell).  A full-size cell at
batch 8 takes minutes.
    python benchmarks/bench_mesh.py --full [--models gpt2 vit bert] [--cells n300-1x2-dp t3k-1x8-dp n300-1x2-tp t3k-1x8-tp t3k-2x4-tp]
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

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


# (device, mesh, parallel, whole batch): dp on n300 and T3000 1x8 (one sample per chip), tp on n300 and T3000
# 1x8 (one sample, each layer split over every chip), dp x tp on T3000 2x4 (one sample per mesh row, each layer
# split over the row's 4 chips)
FULL_CELLS = (("n300", "1x2", "dp", 2), ("t3k", "1x8", "dp", 8), ("n300", "1x2", "tp", 1), ("t3k", "1x8", "tp", 1),
              ("t3k", "2x4", "tp", 2))


def full_inputs(name: str, batch: int) -> dict:
    """Seeded inputs of the zoo entry `name` (full size) at `batch`, every sample different: token ids drawn
    below the vocabulary size (the program's own random inputs give integer inputs as ones, the same ids in
    every sample, which would not show a chip computing another chip's sample), masks ones, floats N(0, 1)."""
    import numpy as np

    from models import zoo

    entry = zoo.get(name)
    rng = np.random.default_rng(zoo.SEED)
    feeds = {}
    for spec in entry.inputs(zoo.build_config(entry, "full"), "full"):
        shape = (batch,) + tuple(spec.shape[1:])
        feeds[spec.name] = (rng.integers(0, spec.high, shape, dtype=np.int64) if spec.kind == "ids" else
                            np.ones(shape, np.int64) if spec.kind == "mask" else
                            rng.standard_normal(shape, dtype=np.float32))
    return feeds


def program_digest(conversion) -> str:
    """A digest of the program text and its weights (names, dtypes, shapes, bytes): equal digests on two commits
    mean the same program runs, so a cell measured on one holds on the other."""
    digest = hashlib.sha256(conversion.program.source.encode())
    for name in sorted(conversion.program.weights):
        array = np.ascontiguousarray(conversion.program.weights[name])
        digest.update(f"{name}:{array.dtype}:{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()[:12]


def full_cell(name: str, path: str, device: str, mesh: str, parallel: str, batch: int, single: dict, folder: str,
              mock) -> dict:
    """One acceptance cell of the full-size model at `path` (see the module's docstring); `single` caches the
    single-chip programs' parameter bytes by batch."""
    import time

    from onnx2ttnn.verify import verify
    from tests.mesh.models import batch_shapes

    rows_, cols = map(int, mesh.split("x"))
    per_program = batch // (rows_ if parallel == "tp" else rows_ * cols)  # the batch one chip's program runs
    if per_program not in single:
        one = onnx2ttnn.convert(path, device="n150", input_shapes=batch_shapes(path, per_program))
        single[per_program] = placement_report(one).parameter_bytes
    start = time.time()
    program = os.path.join(folder, f"{device}_{mesh}_{parallel}_ttnn.py")
    conversion = onnx2ttnn.convert(path, program, device=device, mesh=mesh, parallel=parallel,
                                   input_shapes=batch_shapes(path, batch))
    params = placement_report(conversion).parameter_bytes
    digest = program_digest(conversion)
    result = verify(path, device=device, conversion=conversion, inputs=full_inputs(name, batch))
    row = {"cell": f"{device} {mesh} {parallel}", "batch": batch, "params": params, "single": single[per_program],
           "pcc": min(o.pcc for o in result.outputs), "leaks": len(result.leaks), "passed": result.passed,
           "sim_s": time.time() - start, "mock": "not run", "program": digest}
    if mock is not None:
        from tests.real_ttnn.mock import run_mesh_program

        conversion.write(program)
        start = time.time()
        report = run_mesh_program(mock, program, device, "--iterations", "1")
        left = report.get("memory_after_clearing_program_cache") or {}
        row["mock"] = (f"exit {report['exit']}, {report.get('chips')} chips, L1 {left.get('L1')} B / DRAM "
                       f"{left.get('DRAM')} B left" if report["exit"] == 0 else
                       f"exit {report['exit']}: {str(report.get('error', ''))[:300]}")
        row["mock_s"] = time.time() - start
    return row


def full_table(name: str, rows: list[dict]) -> str:
    head = (f"{'model':6} {'cell':16} {'batch':>5} {'params/chip B':>13} {'one chip B':>11} {'ratio':>6} "
            f"{'sim PCC min':>11} {'leaks':>5} {'sim s':>6} {'program':12}  mock")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{name:6} {r['cell']:16} {r['batch']:5d} {r['params']:13d} {r['single']:11d} "
                     f"{r['params'] / r['single']:6.3f} {r['pcc']:11.6f} {r['leaks']:5d} {r['sim_s']:6.0f} {r['program']:12}  "
                     f"{r['mock']}" + (f" ({r['mock_s']:.0f} s)" if "mock_s" in r else ""))
    return "\n".join(lines)


def main_full(args) -> None:
    from tests.mesh.models import export_dynamic_batch

    cells = [c for c in FULL_CELLS if not args.cells or f"{c[0]}-{c[1]}-{c[2]}" in args.cells]
    if args.digests:
        return print_digests(args.models, cells)
    mock = None
    if not args.no_mock:
        from tests.real_ttnn.mock import TTNNMock

        mock = TTNNMock.prepare()
    for name in args.models:
        path, single = export_dynamic_batch(name, "full"), {}
        with tempfile.TemporaryDirectory() as folder:
            rows = []
            for cell in cells:
                rows.append(full_cell(name, path, *cell, single, folder, mock))
                print(full_table(name, rows[-1:]).splitlines()[-1], flush=True)
        print(full_table(name, rows))
        print()


def print_digests(models: list[str], cells: list[tuple]) -> None:
    """Each cell's program digest only (converted, not run): which cells a commit changed."""
    from tests.mesh.models import batch_shapes, export_dynamic_batch

    for name in models:
        path = export_dynamic_batch(name, "full")
        for device, mesh, parallel, batch in cells:
            conversion = onnx2ttnn.convert(path, device=device, mesh=mesh, parallel=parallel,
                                           input_shapes=batch_shapes(path, batch))
            print(f"{name:8} {device} {mesh} {parallel} {batch}  {program_digest(conversion)}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=None,
                        help="default: gpt2 bert vit cnn (with --full: gpt2 bert vit gpt2_lm)")
    parser.add_argument("--batch", type=int, default=32, help="the whole batch (divides by 1, 2, 8 and 32)")
    parser.add_argument("--memory", default="auto")
    parser.add_argument("--full", action="store_true", help="issue #15's acceptance cells at full size")
    parser.add_argument("--cells", nargs="+", help="with --full: a subset of FULL_CELLS, as n300-1x2-dp ...")
    parser.add_argument("--no-mock", action="store_true", help="with --full: the simulator only")
    parser.add_argument("--digests", action="store_true",
                        help="with --full: only convert each cell and print its program digest")
    args = parser.parse_args(argv)
    os.environ.setdefault("ONNX2TTNN_VERIFY_EACH", "0")
    if args.full:
        args.models = args.models or ["gpt2", "bert", "vit", "gpt2_lm"]
        return main_full(args)
    args.models = args.models or ["gpt2", "bert", "vit", "cnn"]
    from tests.mesh.models import dynamic_model

    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            print(table(name, args.batch, measure(dynamic_model(name, folder), args.batch, args.memory)))
            print()


if __name__ == "__main__":
    main()
