"""Converting the same model twice gives byte-identical programs and weights.

Both in one process and in two processes with different hash seeds (set/dict iteration over strings
differs between them, so any order that leaks from a set shows up as a diff).
"""
from __future__ import annotations

import difflib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import onnx2ttnn
from onnx2ttnn.cli import main

REPO = Path(__file__).resolve().parents[1]
MODELS = {"mlp": REPO / "models" / "mlp.onnx", "cnn": REPO / "models" / "cnn.onnx"}
CASES = [(model, memory) for model in MODELS for memory in ("dram", "l1")]


def _assert_same(a: Path, b: Path) -> None:
    pa, pb = a / "model_ttnn.py", b / "model_ttnn.py"
    wa, wb = a / "model_ttnn.npz", b / "model_ttnn.npz"
    ta, tb = pa.read_text(), pb.read_text()
    if ta != tb:
        diff = "".join(difflib.unified_diff(ta.splitlines(True), tb.splitlines(True), str(pa), str(pb), n=1))
        pytest.fail(f"programs differ:\n{diff[:4000]}")
    assert pa.read_bytes() == pb.read_bytes()
    if wa.read_bytes() != wb.read_bytes():
        with zipfile.ZipFile(wa) as za, zipfile.ZipFile(wb) as zb:
            ia = [(i.filename, i.CRC, i.date_time) for i in za.infolist()]
            ib = [(i.filename, i.CRC, i.date_time) for i in zb.infolist()]
        pytest.fail(f"weights differ:\n{ia}\n{ib}")
    # the files are real: a program that compiles, weights that are a non-empty npz
    compile(ta, str(pa), "exec")
    with zipfile.ZipFile(wa) as za:
        assert za.namelist() and all(n.endswith(".npy") for n in za.namelist())


@pytest.mark.parametrize("model,memory", CASES, ids=[f"{m}-{mem}" for m, mem in CASES])
def test_same_process(tmp_path: Path, model, memory):
    """Through the CLI (click runner), `convert MODEL -o a/model_ttnn.py --memory M` twice."""
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
        out = folder / "model_ttnn.py"
        result = CliRunner().invoke(main, ["convert", str(MODELS[model]), "-o", str(out), "--memory", memory])
        assert result.exit_code == 0, result.output
    _assert_same(*folders)


_DRIVER = """
import sys
import onnx2ttnn
out = sys.argv[2]
for memory in ("dram", "l1"):
    path = out.replace("MEM", memory)
    onnx2ttnn.convert(sys.argv[1], path, memory=memory).write(path)
"""


@pytest.mark.parametrize("model", sorted(MODELS))
def test_separate_processes_with_different_hash_seeds(tmp_path: Path, model):
    """Also through the CLI's code path (memory option) in fresh interpreters."""
    roots = []
    for seed in ("0", "4242"):
        root = tmp_path / f"seed{seed}"
        for memory in ("dram", "l1"):
            (root / memory).mkdir(parents=True)
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", _DRIVER, str(MODELS[model]), str(root / "MEM" / "model_ttnn.py")],
                              env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        roots.append(root)
    for memory in ("dram", "l1"):
        _assert_same(roots[0] / memory, roots[1] / memory)


def test_memory_policy_changes_the_program(tmp_path: Path):
    """Sanity check that the comparison above can fail: dram and l1 programs are not the same bytes."""
    texts = []
    for memory in ("dram", "l1"):
        out = tmp_path / memory / "model_ttnn.py"
        out.parent.mkdir()
        onnx2ttnn.convert(str(MODELS["cnn"]), str(out), memory=memory).write(str(out))
        texts.append(out.read_text())
    assert texts[0] != texts[1]
    assert "L1_MEMORY_CONFIG" in texts[1] or "BufferType.L1" in texts[1]
