"""benchmarks/bench_perf.py: a smoke run on one tiny model (it prints the table; nothing is timed)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_perf  # noqa: E402


def _run(*args: str) -> list[str]:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_perf.py"), "--reduced", *args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_bench_perf_measures_the_baseline_revision_against_the_candidates_options():
    pinned = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", bench_perf.BASELINE_REVISION + "^{commit}"])
    if pinned.returncode != 0:
        pytest.skip("the pinned baseline revision is not in this clone")
    lines = _run("--models", str(ROOT / "models" / "mlp.onnx"), "--candidate-options",
                 json.dumps({"memory": "dram", "weights": "bf16"}))
    assert lines[0].startswith(f"baseline: revision {bench_perf.BASELINE_REVISION[:12]} ")
    assert lines[1].split()[:4] == ["model", "DRAM", "MB", "calls"]
    rows = {line.split()[1]: line.split() for line in lines[3:6]}
    assert [line.split()[0] for line in lines[3:6]] == ["mlp"] * 3
    base, cand, ratio = rows["baseline"], rows["candidate"], rows["ratio"]
    # the dram policy moves every activation through DRAM: more traffic (by less than it was: the baseline's
    # unconfigured linears add their biases in a second pass, the candidate's name the core grid and do not,
    # docs/ttnn-facts.md §31); the relus fused into their linears (fuse-epilogues, after the pinned revision):
    # two calls fewer
    assert float(cand[2]) > float(base[2]) and float(ratio[2]) > 1.2
    assert int(cand[3]) == int(base[3]) - 2 and ratio[3] == f"{int(cand[3]) / int(base[3]):.2f}"
    assert cand[-2:] == ["bf16", "0.0758"]  # weights MB by format
    assert lines[-1].startswith("(") and lines[-1].endswith(" s)")


def test_measure_counts_the_programs_calls_and_configs():
    import onnx2ttnn

    module = onnx2ttnn.convert(str(ROOT / "models" / "mlp.onnx")).module
    figures = bench_perf.measure(module, "n150", layers=bench_perf.attention_layers(str(ROOT / "models" / "mlp.onnx")))
    ops = [n.op for n in module.graph.nodes if n.op != "deallocate" and not n.attrs.get("_param")]
    assert figures["calls"] == len(ops)
    assert figures["mm"] == sum(op in bench_perf.MATRIX for op in ops) == figures["mm_ckc"]
    assert figures["attn"] == 0.0 and figures["layers"] == 1  # its one Softmax, not fused
    assert figures["eager"] > figures["traced"] > figures["device"] > 0


def test_a_module_measured_through_the_worker_is_measured_as_in_process(tmp_path):
    import onnx2ttnn

    path = str(ROOT / "models" / "cnn.onnx")
    shipped = bench_perf.convert_in(str(ROOT), path, {"memory": "auto"}, str(tmp_path))
    assert not list(tmp_path.iterdir())  # the pickle is removed once read
    here = onnx2ttnn.convert(path, memory="auto").module
    assert bench_perf.measure(shipped, "n150", 0) == bench_perf.measure(here, "n150", 0)
    assert [n.op for n in shipped.graph.nodes] == [n.op for n in here.graph.nodes]
