"""kill -9 during `convert`'s write, at 20 (or more) random points: the folder holds the old set of files or the
new one, never a mix, and the next run leaves no stale temporary file (issue #16, Files).

Two models of the same graph (one MatMul whose weight is a large initializer) and different weights are
converted once; their program, weights and IR (A and B) are then written over each other by
tests/emit/kill_writes.py, each write killed with SIGKILL after a delay drawn with a fixed seed. The default
size (32 MB of weights: a write takes 0.2-0.7 s here) keeps the test to 10-20 s on a shared 2-core machine,
and the write is long enough to be cut at every stage (building the .npz, writing and syncing the temporary
files, committing, the next run's clean-up): about 12 of the 20 kills leave temporary files. The issue's
acceptance size, a 200 MB model (64 s here):

    ONNX2TTNN_KILL_TEST_MB=200 python -m pytest -q tests/emit/test_publish_kill.py
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[2]
MEGABYTES = int(os.environ.get("ONNX2TTNN_KILL_TEST_MB", "32"))
KILLS, SEED = 20, 16  # the 20 kill points; the seed is the number


def big_model(path: Path, megabytes: int, salt: float) -> Path:
    """x[1, 1024] @ W[1024, k] with W of `megabytes` MB (float32 arithmetic values, fast to build); `salt` changes
    the weights and the graph name (so the IR differs too)."""
    rows = 1024
    cols = megabytes * 2**20 // 4 // rows
    w = (np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) % 251) / 251 + np.float32(salt)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], f"big{salt:g}",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cols])],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_kill_9_during_write_leaves_the_old_set_or_the_new_one(tmp_path: Path):
    a, b = big_model(tmp_path / "a.onnx", MEGABYTES, 0.0), big_model(tmp_path / "b.onnx", MEGABYTES, 1.0)
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    proc = subprocess.run([sys.executable, "-m", "tests.emit.kill_writes", str(out), str(a), str(b), str(KILLS),
                           str(SEED)], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    sets = report["sets"]
    assert sets["A"] != sets["B"] and sorted(sets["A"]) == ["m.npz", "m.py", "m_ir.onnx"]
    for name in sets["A"]:  # every file differs between the sets, so a mix shows in any of them
        assert sets["A"][name] != sets["B"][name], name

    problems, cut_mid_write = [], 0
    for index, kill in enumerate(report["kills"]):
        visible = {k: v for k, v in kill["files"].items() if not k.startswith(".")}
        hidden = sorted(k for k in kill["files"] if k.startswith("."))
        cut_mid_write += bool(hidden)
        if visible not in (sets[kill["from"]], sets[kill["to"]]):
            problems.append(f"kill {index} after {kill['delay'] * 1000:.1f} ms writing {kill['to']} over "
                            f"{kill['from']}: a mix of the two sets {sorted(visible)} (hidden: {hidden})")
    assert not problems, "\n".join(problems)
    assert len(report["kills"]) >= KILLS  # more when too few of the first KILLS landed inside a write
    # the kills cut writes in the middle (they left temporary files) and not only before or after them
    assert cut_mid_write >= 3, f"only {cut_mid_write} kills left temporary files: durations {report['durations']}"
    final = report["final"]
    assert final["ok"]
    stale = sorted(k for k in final["files"] if k.startswith("."))
    assert stale == [], f"the next run left stale temporary files: {stale}"
    assert final["files"] in (sets["A"], sets["B"])
