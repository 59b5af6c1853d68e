"""One error boundary for every command (cli.py `boundary`): bad input -> one `error:` line, exit 2; a
verification mismatch -> the report, exit 1; a compiler bug -> the internal-error line, exit 3, its traceback
only with ONNX2TTNN_DEBUG=1.  Never a bare traceback, and model names never reach the terminal raw."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
import onnx2ttnn.sim
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.passes.fuse_patterns import FusePatterns
from tests.test_cli import MLP, REPO, assert_clean_failure, message_of, run_inprocess, run_subprocess

V = helper.make_tensor_value_info
F = TensorProto.FLOAT
ANSI = "\x1b[2J\x1b[31m"  # clear the screen, then red
INTERNAL = "(set ONNX2TTNN_DEBUG=1 for the traceback; please report it)"


def _save(path: Path, nodes, inputs, outputs, initializers=(), opsets=(("", 17),)) -> Path:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


@pytest.fixture
def gather(tmp_path: Path) -> Path:
    """y = data[idx] with idx a graph input: an index out of range is known only at run time."""
    data = numpy_helper.from_array(np.arange(32, dtype=np.float32).reshape(4, 8), "data")
    return _save(tmp_path / "gather.onnx", [helper.make_node("Gather", ["data", "idx"], ["y"], axis=0, name="g0")],
                 [V("idx", TensorProto.INT64, [3])], [V("y", F, [3, 8])], [data])


def _assert_internal(run, exception: str) -> str:
    assert "Traceback" not in run.stderr + run.stdout, run.stderr
    assert run.code == 3, f"exit code {run.code}:\n{run.stdout}\n{run.stderr}"
    msg = message_of(run.stderr)
    assert msg.startswith(f"internal error: {exception}") and msg.endswith(INTERNAL), msg
    assert "error:" not in msg.replace("internal error:", ""), msg
    return msg


# --- verify: bad inputs, onnxruntime's refusals --------------------------------------------------------------
def test_verify_gather_index_out_of_range_at_run_time(tmp_path, gather):
    """It printed the simulator's RuntimeError traceback and exited 1, as for a FAIL."""
    np.savez(tmp_path / "in.npz", idx=np.array([0, 50, 1], np.int64))
    msg = assert_clean_failure(run_inprocess(["verify", str(gather), "--inputs", "in.npz"], tmp_path))
    assert msg == ("error: onnxruntime cannot run the model on these inputs: Non-zero status code returned while "
                   "running Gather node. Name:'g0' Status Message: indices element out of data bounds, idx=50 must "
                   "be within the inclusive range [-4,3]")


def test_verify_a_model_onnxruntime_refuses(tmp_path):
    model = _save(tmp_path / "m.onnx", [helper.make_node("Relu", ["x"], ["y"])], [V("x", F, [2, 4])],
                  [V("y", TensorProto.INT64, [2, 4])])
    for mode in ("inprocess", "subprocess"):
        run = (run_inprocess if mode == "inprocess" else run_subprocess)(["verify", str(model)], tmp_path)
        msg = assert_clean_failure(run)
        # strict ONNX inference (frontend/validate.py) now refuses this before onnxruntime is asked
        assert msg in ("error: onnxruntime refuses the model: Type Error: Type (tensor(int64)) of output arg (y) "
                       "of node () does not match expected type (tensor(float)).",
                       "error: invalid model (ONNX shape and type inference): a Relu node (unnamed): Inferred elem "
                       "type differs from existing elem type: (1) vs (7)")
        assert "onnxruntime:" not in run.stderr  # no log record either


def _garbage(path):
    path.write_bytes(b"\x00garbage" * 100)


def _npy(path):
    with open(path, "wb") as f:
        np.save(f, np.array([0, 1, 2], np.int64))


INPUT_FILES = [  # (case, writes the file, words of the message)
    ("garbage-bytes", _garbage, ["cannot read the inputs file 'in.npz': it is not an .npz", "never unpickles"]),
    ("truncated-zip", lambda p: (np.savez(p, idx=np.arange(3)), p.write_bytes(p.read_bytes()[:40])),
     ["cannot read the inputs file 'in.npz'"]),
    ("object-array", lambda p: np.savez(p, idx=np.array([object(), 1, 2], dtype=object)),
     ["cannot read 'idx' from the inputs file 'in.npz': it is an array of Python objects"]),
    ("string-array", lambda p: np.savez(p, idx=np.array(["0", "1", "2"])),
     ["the inputs file 'in.npz': 'idx' is an array of <U1 values; the model takes int64"]),
    ("wrong-shape", lambda p: np.savez(p, idx=np.array([0, 1], np.int64)),
     ["'idx' has shape (2,), the model was converted for (3,)", "--input-shape"]),
    ("fractional-indices", lambda p: np.savez(p, idx=np.array([0.5, 1, 2])),
     ["'idx' holds non-integer values; the model takes int64"]),
    ("missing-input", lambda p: np.savez(p, other=np.array([0, 1, 2], np.int64)),
     ["the inputs file 'in.npz' has no 'idx' (the model's inputs: 'idx')"]),
    ("npy-not-npz", _npy, ["holds one array (.npy), not an .npz"]),
    ("missing-file", lambda p: None, ["inputs file not found: 'in.npz'"]),
]


@pytest.mark.parametrize("case,write,words", INPUT_FILES, ids=[c[0] for c in INPUT_FILES])
def test_verify_malformed_inputs_file(tmp_path, gather, case, write, words):
    """Each printed a numpy traceback (ValueError, TypeError, BadZipFile) and exited 1."""
    write(tmp_path / "in.npz")
    modes = ("inprocess", "subprocess") if case in ("garbage-bytes", "object-array") else ("inprocess",)
    for mode in modes:
        run = (run_inprocess if mode == "inprocess" else run_subprocess)(
            ["verify", str(gather), "--inputs", "in.npz"], tmp_path)
        msg = assert_clean_failure(run)
        for word in words:
            assert word in msg, msg


def test_verify_good_inputs_file_passes(tmp_path, gather):
    np.savez(tmp_path / "in.npz", idx=np.array([3, 0, 1], np.int32))  # any integer dtype is cast
    run = run_inprocess(["verify", str(gather), "--inputs", "in.npz"], tmp_path)
    assert run.code == 0 and run.stdout.rstrip().endswith("PASS"), run.stdout + run.stderr


def test_verify_mismatch_is_exit_1_with_the_report(tmp_path, monkeypatch):
    neg = onnx2ttnn.sim.neg  # the simulated program computes -x, not the softmax
    monkeypatch.setattr(onnx2ttnn.sim, "softmax", lambda x, **kwargs: neg(x, memory_config=kwargs["memory_config"]))
    run = run_inprocess(["verify", str(MLP)], tmp_path)
    assert run.code == 1, run.stdout + run.stderr
    assert run.stdout.rstrip().endswith("FAIL") and "error" not in run.stderr, run.stderr


def test_verify_program_failing_on_the_simulator_is_an_internal_error(tmp_path, monkeypatch):
    """onnxruntime runs the model on these inputs, the generated program does not: the converter's bug."""
    def broken(*args, **kwargs):
        raise RuntimeError("TT_FATAL: planted")

    monkeypatch.setattr(onnx2ttnn.sim, "softmax", broken)
    msg = _assert_internal(run_inprocess(["verify", str(MLP)], tmp_path), "VerificationError")
    assert "the generated program fails on the simulator, where onnxruntime runs the model: RuntimeError: " \
           "TT_FATAL: planted (program line " in msg


# --- compiler bugs and host memory, in every command ------------------------------------------------------------
def _planted(exc):
    def run(self, module, ctx):
        raise exc
    return run


@pytest.mark.parametrize("command", ["convert", "verify", "report"])
def test_a_compiler_bug_is_the_internal_error_line(tmp_path, monkeypatch, command):
    """verify and report printed the traceback of every model that makes convert exit 3, and exited 1."""
    monkeypatch.setattr(FusePatterns, "run", _planted(KeyError("planted " + ANSI)))
    args = [command, str(MLP)] + (["-o", str(tmp_path / "m.py")] if command == "convert" else [])
    msg = _assert_internal(run_inprocess(args, tmp_path), "KeyError: ")
    assert "\x1b" not in msg and "planted \\x1b[2J\\x1b[31m" in msg
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["convert", "verify", "report"])
def test_host_memory_exhausted_is_an_error(tmp_path, monkeypatch, command):
    monkeypatch.setattr(FusePatterns, "run", _planted(MemoryError()))
    args = [command, str(MLP)] + (["-o", str(tmp_path / "m.py")] if command == "convert" else [])
    msg = assert_clean_failure(run_inprocess(args, tmp_path))
    assert msg.startswith(f"error: the host ran out of memory running `onnx2ttnn {command}`")


def test_ops_is_inside_the_boundary(monkeypatch):
    import onnx2ttnn.support

    monkeypatch.setattr(onnx2ttnn.support, "support_table", lambda: {}["planted"])
    _assert_internal(run_inprocess(["ops"], Path.cwd()), "KeyError: 'planted'")


PLANT = ("import sys; from onnx2ttnn.passes.fuse_patterns import FusePatterns\n"
         "def run(self, module, ctx): raise KeyError('planted')\n"
         "FusePatterns.run = run\n"
         "from onnx2ttnn.cli import main; sys.exit(main())")


@pytest.mark.parametrize("debug", ["", "1"])
def test_the_traceback_only_with_the_debug_variable(tmp_path, debug):
    env = dict(os.environ, PYTHONPATH=str(REPO), ONNX2TTNN_DEBUG=debug)
    proc = subprocess.run([sys.executable, "-c", PLANT, "verify", str(MLP)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env=env)
    if debug:
        assert proc.returncode == 1 and "Traceback" in proc.stderr and "KeyError: 'planted'" in proc.stderr
    else:
        assert proc.returncode == 3 and "Traceback" not in proc.stderr
        assert proc.stderr.strip().splitlines()[-1] == f"internal error: KeyError: 'planted' {INTERNAL}"


# --- report's own inputs -----------------------------------------------------------------------------------------
def test_report_png_that_cannot_be_written(tmp_path):
    for png, words in (("no_such_folder/m.png", "does not exist"), ("m.txt", "must name a .png file")):
        msg = assert_clean_failure(run_inprocess(["report", str(MLP), "--png", png], tmp_path))
        assert words in msg, msg
    assert list(tmp_path.iterdir()) == []


# --- names in messages ---------------------------------------------------------------------------------------------
def test_ansi_escapes_in_names_never_reach_the_terminal(tmp_path):
    """A tensor, node, op or domain name with ANSI escapes is shown as escapes in every message and table."""
    domain = "com.ex" + ANSI
    nodes = [helper.make_node("Relu", ["x"], ["r" + ANSI], name="relu" + ANSI),
             helper.make_node("Foo" + ANSI, ["r" + ANSI], ["y"], name="foo" + ANSI, domain=domain)]
    bad = _save(tmp_path / "bad.onnx", nodes, [V("x", F, [2, 4])], [V("y", F, [2, 4])],
                opsets=(("", 17), (domain, 1)))
    good = _save(tmp_path / "good.onnx", [helper.make_node("Relu", ["x" + ANSI], ["y" + ANSI], name="n" + ANSI)],
                 [V("x" + ANSI, F, [2, 4])], [V("y" + ANSI, F, [2, 4])])
    runs = [run_inprocess(["convert", "bad.onnx", "-o", "b.py"], tmp_path),
            run_inprocess(["verify", "bad.onnx"], tmp_path),
            run_inprocess(["convert", "good.onnx", "-o", "g.py", "--input-shape", "nope" + ANSI + "=1"], tmp_path),
            run_subprocess(["convert", "bad.onnx", "-o", "b.py"], tmp_path)]
    for run in runs:
        msg = assert_clean_failure(run)
        assert "\x1b" not in run.stderr + run.stdout and "\\x1b[2J" in msg, msg
    with pytest.raises(ConversionError) as info:  # the Python API's message is escaped too
        onnx2ttnn.convert(str(bad))
    assert "\x1b" not in str(info.value) and "Foo\\x1b[2J" in str(info.value), str(info.value)
    for args in (["report", "good.onnx"], ["verify", "good.onnx"]):
        run = run_inprocess(args, tmp_path)
        assert run.code == 0, run.stderr
        assert "\x1b" not in run.stdout + run.stderr and "\\x1b[2J" in run.stdout, run.stdout


# --- messages of the frontend -------------------------------------------------------------------------------------
def test_the_onnx_checker_message_is_kept_whole(tmp_path):
    """It was cut at its first line: "however input 'ghost' of node: " lost the node."""
    model = _save(tmp_path / "ghost.onnx", [helper.make_node("Relu", ["ghost"], ["y"], name="r0")],
                  [V("x", F, [2, 4])], [V("y", F, [2, 4])])
    msg = assert_clean_failure(run_inprocess(["convert", str(model), "-o", "m.py"], tmp_path))
    assert msg.endswith("fails the ONNX checker: Nodes in a graph must be topologically sorted, however input 'ghost' "
                        "of node: name: r0 OpType: Relu is not output of any previous nodes.")


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_an_identity_graph_converts_and_verifies(tmp_path, dtype):
    """Output = input, which onnxruntime runs, was refused: "input 'x' has no value (graph not in topological
    order?)"; so was a graph output that is an initializer next to it."""
    c = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(2, 4), "c")
    model = _save(tmp_path / "id.onnx", [helper.make_node("Relu", ["x"], ["y"])], [V("x", F, [2, 4])],
                  [V("x", F, [2, 4]), V("y", F, [2, 4]), V("c", F, [2, 4])], [c])
    run = run_inprocess(["verify", str(model), "--dtype", dtype], tmp_path)
    assert run.code == 0 and run.stdout.rstrip().endswith("PASS"), run.stdout + run.stderr
    only = _save(tmp_path / "only.onnx", [], [V("x", F, [2, 4])], [V("x", F, [2, 4])])
    run = run_inprocess(["convert", str(only), "-o", str(tmp_path / "only.py")], tmp_path)
    assert run.code == 0, run.stderr
    assert run_inprocess(["verify", str(only), "--dtype", dtype], tmp_path).code == 0


def test_readme_links_the_error_catalogue():
    assert "[docs/errors.md](docs/errors.md)" in (REPO / "README.md").read_text()
    catalogue = (REPO / "docs" / "errors.md").read_text()
    for message in ("onnxruntime refuses the model:", "onnxruntime cannot run the model on these inputs:",
                    "fails the ONNX checker:", "the host ran out of memory running", INTERNAL,
                    "the generated program fails on the simulator, where onnxruntime runs the model:"):
        assert message in catalogue, message
