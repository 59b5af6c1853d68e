"""The command line on bad input: exit code 2, one "error:" message, no traceback, nothing written.

Every bad-input case runs both in-process (click's CliRunner on onnx2ttnn.cli.main) and as a real
subprocess of the installed `onnx2ttnn` script, so a traceback printed by the interpreter is caught too.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.cli import main
from onnx2ttnn.passes.pipeline import IMPORT_STAGES, build_pipeline
from onnx2ttnn.support import support_rows

REPO = Path(__file__).resolve().parents[1]
MLP = REPO / "models" / "mlp.onnx"
CNN = REPO / "models" / "cnn.onnx"

# `convert` reports progress on stderr as "  <stage> ..."; everything else on stderr is the message.
PROGRESS = re.compile(r"^  [A-Za-z0-9_-]+ \.\.\.$")


# --- running the CLI ------------------------------------------------------------------------------
@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


def _script() -> list[str]:
    exe = shutil.which("onnx2ttnn")
    if exe:
        return [exe]
    # no console script on PATH: run the click group directly (cli.py has no __main__ guard)
    return [sys.executable, "-c", "import sys; from onnx2ttnn.cli import main; sys.exit(main())"]


def run_subprocess(args: list[str], cwd: Path) -> Run:
    # this checkout's package, not whichever one is installed (worktrees share one editable install)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    proc = subprocess.run(_script() + args, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def run_inprocess(args: list[str], cwd: Path) -> Run:
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = runner.invoke(main, args, catch_exceptions=True)
    finally:
        os.chdir(old)
    # an exception other than SystemExit escaping the command is a crash (a traceback for the user)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(*result.exc_info))
        return Run(result.exit_code, result.stdout, result.stderr + "\nTraceback (in-process):\n" + tb)
    return Run(result.exit_code, result.stdout, result.stderr)


RUNNERS = {"inprocess": run_inprocess, "subprocess": run_subprocess}


def message_of(stderr: str) -> str:
    """stderr without the progress lines."""
    return "\n".join(line for line in stderr.splitlines() if not PROGRESS.match(line)).strip()


def assert_clean_failure(run: Run) -> str:
    """Exit code 2, a single message that starts with 'error:', no traceback; returns the message."""
    assert "Traceback" not in run.stderr and "Traceback" not in run.stdout, run.stderr
    msg = message_of(run.stderr)
    assert run.code == 2, f"exit code {run.code}, stderr:\n{run.stderr}"
    assert msg.startswith("error:"), f"stderr does not start with 'error:':\n{run.stderr}"
    assert msg.count("error:") == 1, f"more than one error message:\n{run.stderr}"
    return msg


def listing(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (names and contents), to prove nothing was created or changed."""
    files = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            files[str(p.relative_to(folder))] = p.read_bytes()
        elif p.is_dir():
            files[str(p.relative_to(folder)) + "/"] = b""
    return files


# --- models ---------------------------------------------------------------------------------------
def _save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def unsupported_model(path: Path) -> Path:
    """Three op types onnx2ttnn neither lowers nor has a host fallback for (a custom domain): Foo x2,
    Bar x1, Baz x1."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu0"),
        helper.make_node("Foo", ["r"], ["f1"], name="foo0", domain="com.example"),
        helper.make_node("Bar", ["f1"], ["b"], name="bar0", domain="com.example"),
        helper.make_node("Foo", ["b"], ["f2"], name="foo1", domain="com.example"),
        helper.make_node("Baz", ["f2"], ["y"], name="baz0", domain="com.example"),
    ]
    shapes = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 8]) for n in ("f1", "b", "f2")]
    graph = helper.make_graph(nodes, "g", [x], [y], value_info=shapes)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.example", 1)])
    model.ir_version = 8
    return _save(model, path)


FALLBACK_OPS = ("Det", "Hardmax", "ReverseSequence")  # no ttnn op computes these (ttnn 0.81.1 manifest)


def fallback_model(path: Path) -> Path:
    """Three op types that only a host fallback computes: ReverseSequence x2, Det x1, Hardmax x1."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 3, 3])
    d = helper.make_tensor_value_info("d", TensorProto.FLOAT, [16])
    h = helper.make_tensor_value_info("h", TensorProto.FLOAT, [16, 3, 3])
    lens = numpy_helper.from_array(np.array([3, 2, 1, 3] * 4, np.int64), "lens")
    lens4 = numpy_helper.from_array(np.array([16, 1, 7], np.int64), "lens4")
    nodes = [
        helper.make_node("ReverseSequence", ["x", "lens"], ["r1"], name="rev0", batch_axis=0, time_axis=1),
        helper.make_node("Relu", ["r1"], ["a"], name="relu0"),
        helper.make_node("Add", ["a", "x"], ["s"], name="add0"),
        helper.make_node("ReverseSequence", ["s", "lens4"], ["r2"], name="rev1", batch_axis=1, time_axis=0),
        helper.make_node("Det", ["r2"], ["d"], name="det0"),
        helper.make_node("Hardmax", ["s"], ["h"], name="hardmax0"),
    ]
    return _save(_model(nodes, [x], [d, h], [lens, lens4]), path)


def symbolic_model(path: Path) -> Path:
    """x: [N, 64] -> MatMul(64x16) -> Relu -> y: [N, 16]."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((64, 16)).astype(np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 16])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
             helper.make_node("Relu", ["m"], ["y"], name="relu")]
    return _save(_model(nodes, [x], [y], [w]), path)


def recursive_function_model(path: Path) -> Path:
    """Node 'r0' calls the model-local function local.Rec, whose body calls local.Rec (the checker refuses it)."""
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    rec = helper.make_function("local", "Rec", ["a"], ["b"],
                               [helper.make_node("Rec", ["a"], ["b"], name="again", domain="local")], opsets)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])
    graph = helper.make_graph([helper.make_node("Rec", ["x"], ["y"], name="r0", domain="local")], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=opsets, functions=[rec]), str(path))
    return path


def malformed_loop_model(path: Path) -> Path:
    """Loop 'the_loop' whose body returns its condition as a float (the checker lets it pass)."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["c"], ["c_out"], to=TensorProto.FLOAT), helper.make_node("Neg", ["v"], ["w"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("c_out", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 8])])
    m = numpy_helper.from_array(np.array(3, np.int64), "m")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])
    return _save(_model([helper.make_node("Loop", ["m", "", "x"], ["y"], name="the_loop", body=body)], [x], [y], [m]),
                 path)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder with every bad model, a good model and a sub-folder `out` for outputs."""
    rng = np.random.default_rng(1234)
    (tmp_path / "random.onnx").write_bytes(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    (tmp_path / "text.onnx").write_text("this is not an ONNX model\n" * 20)
    data = MLP.read_bytes()
    (tmp_path / "truncated.onnx").write_bytes(data[: len(data) // 2])
    ext_dir = tmp_path / "ext"
    ext_dir.mkdir()
    onnx.save(onnx.load(str(MLP)), str(ext_dir / "ext.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="w.data", size_threshold=0)
    assert (ext_dir / "w.data").is_file()
    (ext_dir / "w.data").unlink()
    unsupported_model(tmp_path / "unsupported.onnx")
    fallback_model(tmp_path / "fallback.onnx")
    symbolic_model(tmp_path / "symbolic.onnx")
    recursive_function_model(tmp_path / "recursive.onnx")
    malformed_loop_model(tmp_path / "bad_loop.onnx")
    (tmp_path / "a_file").write_text("a file, not a folder\n")
    (tmp_path / "out").mkdir()
    same = tmp_path / "same"  # models an output could land on
    same.mkdir()
    for name in ("model.py", "model.npz", "m.onnx", "ir_after_fuse-patterns.onnx"):
        (same / name).write_bytes(data)
    os.link(same / "m.onnx", same / "hard.py")
    os.symlink("m.onnx", same / "link.py")
    extw = tmp_path / "extw"  # fc1.weight (8192 elements) stays in e.npz until a pass reads it
    extw.mkdir()
    onnx.save(onnx.load(str(MLP)), str(extw / "e.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="e.npz", size_threshold=4096)
    return tmp_path


# --- bad inputs -----------------------------------------------------------------------------------
# (case id, model (relative to the work folder), output (relative), extra args, words the message must hold)
BAD = [
    ("missing-file", "does_not_exist.onnx", "out/m.py", [], ["does_not_exist.onnx", "not found"]),
    ("random-bytes", "random.onnx", "out/m.py", [], ["random.onnx", "not a valid ONNX model"]),
    ("text-file", "text.onnx", "out/m.py", [], ["text.onnx", "not a valid ONNX model"]),
    ("truncated-protobuf", "truncated.onnx", "out/m.py", [], ["truncated.onnx"]),
    ("missing-external-data", "ext/ext.onnx", "out/m.py", [], ["w.data", "not found"]),
    ("unsupported-ops", "unsupported.onnx", "out/m.py", [],
     ["error: 3 ONNX op types have no ttnn lowering: com.example::Bar (1 node), com.example::Baz (1 node), "
      "com.example::Foo (2 nodes)", "'foo0', 'foo1'"]),
    ("no-fallback", "fallback.onnx", "out/m.py", ["--no-fallback"],
     ["error: 3 ONNX op types have no ttnn lowering: Det (1 node), Hardmax (1 node), ReverseSequence (2 nodes)",
      "ReverseSequence (opset 17 schema 10): 'rev0', 'rev1'",
      "host fallbacks exist for Det (schema 11), Hardmax (schema 13), ReverseSequence (schema 10)"]),
    ("symbolic-dims", "symbolic.onnx", "out/m.py", [], ["'x'", "N", "--input-shape"]),
    ("recursive-function", "recursive.onnx", "out/m.py", [],
     ["node 'r0' (local::Rec) calls a model-local function that calls itself (local::Rec -> local::Rec)"]),
    ("malformed-loop-body", "bad_loop.onnx", "out/m.py", [],
     ["node 'the_loop' (Loop): its body's condition output 'c_out' is float, not bool"]),
    ("output-folder-missing", str(MLP), "no_such_folder/m.py", [], ["no_such_folder", "does not exist"]),
    ("output-parent-is-a-file", str(MLP), "a_file/m.py", [], ["a_file"]),
    ("output-is-a-folder", str(MLP), "out/dir.py", [], ["dir.py"]),
    ("output-not-py", str(MLP), "out/m.txt", [], ["m.txt", ".py"]),
    ("missing-output-option", str(MLP), None, [], ["-o"]),
    ("bad-input-shape-no-equals", "symbolic.onnx", "out/m.py", ["--input-shape", "x4,64"], ["x4,64"]),
    ("bad-input-shape-not-int", "symbolic.onnx", "out/m.py", ["--input-shape", "x=four,64"], ["x=four,64"]),
    ("bad-input-shape-negative", "symbolic.onnx", "out/m.py", ["--input-shape", "x=-1,64"], ["x=-1,64"]),
    ("bad-input-shape-wrong-rank", "symbolic.onnx", "out/m.py", ["--input-shape", "x=4,64,2"], ["rank"]),
    ("unknown-input-name", "symbolic.onnx", "out/m.py", ["--input-shape", "nope=4,64"], ["'nope'", "'x'"]),
    ("emit-ir-folder-missing", str(MLP), "out/m.py", ["--emit-ir", "no_such_folder/ir.onnx"], ["ir.onnx"]),
    ("unknown-dump-pass", str(MLP), "out/m.py", ["--dump-ir-after", "no-such-pass"], ["no-such-pass"]),
    # no output may be the input or another output (same path, a symlink or a hard link)
    ("output-is-the-model", "same/model.py", "same/model.py", [],
     ["the program 'same/model.py' is the same file as the model 'same/model.py'"]),
    ("weights-are-the-model", "same/model.npz", "same/model.py", [],
     ["the weights 'same/model.npz' is the same file as the model 'same/model.npz'"]),
    ("emit-ir-is-the-model", "same/m.onnx", "out/m.py", ["--emit-ir", "same/m.onnx"],
     ["the IR 'same/m.onnx' is the same file as the model 'same/m.onnx'"]),
    ("output-hard-link-to-model", "same/m.onnx", "same/hard.py", [],
     ["the program 'same/hard.py' is the same file as the model 'same/m.onnx'"]),
    ("output-symlink-to-model", "same/m.onnx", "same/link.py", [],
     ["the program 'same/link.py' is the same file as the model 'same/m.onnx'"]),
    ("emit-ir-is-the-output", str(MLP), "out/m.py", ["--emit-ir", "out/m.py"],
     ["the IR 'out/m.py' is the same file as the program 'out/m.py'"]),
    ("emit-ir-is-the-weights", str(MLP), "out/m.py", ["--emit-ir", "out/./m.npz"],
     ["the IR 'out/./m.npz' is the same file as the weights 'out/m.npz'"]),
    ("dump-is-the-model", "same/ir_after_fuse-patterns.onnx", "same/x.py", ["--dump-ir-after", "fuse-patterns"],
     ["the IR dump after fuse-patterns", "is the same file as the model 'same/ir_after_fuse-patterns.onnx'"]),
    ("emit-ir-is-a-dump", str(MLP), "out/m.py",
     ["--emit-ir", "out/ir_after_fuse-patterns.onnx", "--dump-ir-after", "fuse-patterns"],
     ["the IR dump after fuse-patterns", "is the same file as the IR 'out/ir_after_fuse-patterns.onnx'"]),
    ("weights-are-external-data", "extw/e.onnx", "extw/e.py", [],
     ["is the same file as the model's external data", "e.npz"]),
    # a failed conversion leaves no debug dump and no IR behind
    ("failed-conversion-dumps", "unsupported.onnx", "out/m.py",
     ["--dump-ir-after", "fold-constants", "--dump-ir-after", "remove-identities", "--emit-ir", "out/ir.onnx"],
     ["no ttnn lowering"]),
]
# the cases also run as a real subprocess (each costs ~0.5 s of interpreter start-up)
SUBPROCESS_CASES = {"missing-file", "random-bytes", "truncated-protobuf", "missing-external-data",
                    "unsupported-ops", "no-fallback", "symbolic-dims", "recursive-function", "malformed-loop-body", "output-parent-is-a-file", "output-is-a-folder",
                    "bad-input-shape-no-equals", "unknown-input-name", "output-is-the-model", "emit-ir-is-the-model",
                    "weights-are-external-data", "failed-conversion-dumps"}
BAD_RUNS = [pytest.param(mode, *case, id=f"{case[0]}-{mode}") for case in BAD
            for mode in ("inprocess", "subprocess") if mode == "inprocess" or case[0] in SUBPROCESS_CASES]


@pytest.mark.parametrize("mode,case,model,output,extra,words", BAD_RUNS)
def test_bad_input(work: Path, mode, case, model, output, extra, words):
    if case == "output-is-a-folder":
        (work / "out" / "dir.py").mkdir()
    before = listing(work)
    args = ["convert", model] + (["-o", output] if output else []) + extra
    run = RUNNERS[mode](args, work)
    after = listing(work)
    problems = []
    created = sorted(set(after) - set(before))
    changed = sorted(k for k in before if k in after and before[k] != after[k])
    if created:
        problems.append(f"files created by a failed conversion: {created}")
    if changed:
        problems.append(f"files changed by a failed conversion: {changed}")
    try:
        msg = assert_clean_failure(run)
    except AssertionError as exc:
        problems.append(str(exc))
    else:
        problems += [f"{word!r} not in the message:\n{msg}" for word in words if word not in msg]
    assert not problems, "\n".join(problems)
    assert not (work / "no_such_folder").exists()


def test_fallback_model_converts_with_host_fallbacks(work: Path):
    from tests.ttnn_api import check_source

    out = work / "out" / "fb_ttnn.py"
    run = run_inprocess(["convert", "fallback.onnx", "-o", str(out)], work)
    assert run.code == 0, run.stderr
    assert "host fallback nodes: 4 (ReverseSequence 2, Det 1, Hardmax 1)" in run.stdout
    src = out.read_text()
    for op, name in (("ReverseSequence", "rev0"), ("ReverseSequence", "rev1"), ("Det", "det0"),
                     ("Hardmax", "hardmax0")):
        assert f"# host fallback: ONNX {op} '{name}'" in src
    assert check_source(src) == []
    assert "import torch" in src and "import onnx2ttnn" not in src and "from onnx2ttnn" not in src  # standalone


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_fallback_model_verifies(work: Path, dtype):
    run = run_inprocess(["verify", "fallback.onnx", "--dtype", dtype], work)
    assert run.code == 0, run.stdout + run.stderr
    assert run.stdout.rstrip().endswith("PASS")


def test_verify_no_fallback_refuses(work: Path):
    before = listing(work)
    run = run_inprocess(["verify", "fallback.onnx", "--no-fallback"], work)
    msg = assert_clean_failure(run)
    assert "3 ONNX op types have no ttnn lowering: Det (1 node), Hardmax (1 node), ReverseSequence (2 nodes)" in msg
    assert listing(work) == before


def test_symbolic_dims_convert_with_override(work: Path):
    out = work / "out" / "sym_ttnn.py"
    run = run_subprocess(["convert", "symbolic.onnx", "-o", str(out), "--input-shape", "x=4,64"], work)
    assert run.code == 0, run.stderr
    assert "error:" not in run.stderr and "Traceback" not in run.stderr
    assert out.is_file() and out.with_suffix(".npz").is_file()
    src = out.read_text()
    compile(src, str(out), "exec")
    assert "(4, 64)" in src  # the pinned input shape is in INPUTS
    assert f"wrote {out}" in run.stdout


def test_readonly_output_folder(work: Path):
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("running as root: permission bits do not stop writes")
    ro = work / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        run = run_inprocess(["convert", str(MLP), "-o", str(ro / "m.py")], work)
        msg = assert_clean_failure(run)
        assert "permission" in msg.lower()
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o700)


# --- replacing an existing output -----------------------------------------------------------------
SENTINEL_PY = "# sentinel program - must survive a failed conversion\n"
SENTINEL_NPZ = b"sentinel weights"


def _temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in {"m.py", "m.npz"})


@pytest.mark.parametrize("mode,bad_models", [("inprocess", ("unsupported.onnx", "truncated.onnx", "symbolic.onnx")),
                                             ("subprocess", ("unsupported.onnx",))])
def test_existing_output_replaced_only_on_success(work: Path, mode, bad_models):
    out_dir = work / "out"
    program, weights = out_dir / "m.py", out_dir / "m.npz"
    program.write_text(SENTINEL_PY)
    weights.write_bytes(SENTINEL_NPZ)

    for bad in bad_models:
        run = RUNNERS[mode](["convert", bad, "-o", str(program)], work)
        assert_clean_failure(run)
        assert program.read_text() == SENTINEL_PY, f"{bad}: the existing program was touched"
        assert weights.read_bytes() == SENTINEL_NPZ, f"{bad}: the existing weights were touched"
        assert _temp_files(out_dir) == [], f"{bad}: files left behind: {_temp_files(out_dir)}"

    run = RUNNERS[mode](["convert", str(MLP), "-o", str(program)], work)
    assert run.code == 0, run.stderr
    src = program.read_text()
    assert src != SENTINEL_PY and src.startswith('"""Generated by onnx2ttnn')
    compile(src, str(program), "exec")
    assert weights.read_bytes() != SENTINEL_NPZ
    with np.load(weights, allow_pickle=False) as data:
        assert len(data.files) > 0
    assert _temp_files(out_dir) == [], f"files left behind: {_temp_files(out_dir)}"


def test_failed_write_leaves_the_old_set(work: Path, monkeypatch):
    """The program, its weights and the IR are one set: when the last rename fails, none of the new files stays
    and the old ones are untouched."""
    out_dir = work / "out"
    program, weights, ir = out_dir / "m.py", out_dir / "m.npz", out_dir / "m_ir.onnx"
    program.write_text(SENTINEL_PY)
    weights.write_bytes(SENTINEL_NPZ)
    real_replace = os.replace

    def replace(src, dst):
        if os.path.basename(dst) == "m.py":
            raise OSError(28, "No space left on device", str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    run = run_inprocess(["convert", str(MLP), "-o", str(program), "--emit-ir", str(ir),
                         "--dump-ir-after", "fuse-patterns"], work)
    msg = assert_clean_failure(run)
    assert "m.py" in msg and "No space left on device" in msg
    assert program.read_text() == SENTINEL_PY and weights.read_bytes() == SENTINEL_NPZ
    assert sorted(p.name for p in out_dir.iterdir()) == ["m.npz", "m.py"]


def test_keep_failed_dumps(work: Path):
    """--keep-failed-dumps keeps the IR dumps of the passes that ran before the failure (and only those)."""
    out_dir = work / "out"
    run = run_inprocess(["convert", "unsupported.onnx", "-o", str(out_dir / "m.py"), "--keep-failed-dumps",
                         "--dump-ir-after", "fold-constants", "--dump-ir-after", "assign-memory-configs",
                         "--emit-ir", str(out_dir / "ir.onnx")], work)
    assert "no ttnn lowering" in assert_clean_failure(run)
    assert sorted(p.name for p in out_dir.iterdir()) == ["ir_after_fold-constants.onnx"]
    assert {n.op_type for n in onnx.load(str(out_dir / "ir_after_fold-constants.onnx")).graph.node} >= {"Foo", "Relu"}


# --- informational commands -----------------------------------------------------------------------
def test_print_pipeline_lists_every_pass_in_order(tmp_path: Path):
    run = run_subprocess(["convert", "--print-pipeline"], tmp_path)
    assert run.code == 0, run.stderr
    printed = [line.split()[0] for line in run.stdout.splitlines() if line.strip()]
    expected = [name for name, _ in IMPORT_STAGES] + [p.name for p in build_pipeline()]
    assert printed == expected
    for must in ("load", "fold-constants", "lower-to-ttnn", "insert-deallocs", "assign-memory-configs"):
        assert must in printed
    assert printed[-1] == "assign-memory-configs"  # documented as the last pass
    assert printed.index("lower-to-ttnn") < printed.index("assign-layouts") < printed.index("insert-deallocs")
    # every line explains its stage
    assert all(len(line.split(None, 1)) == 2 for line in run.stdout.splitlines() if line.strip())
    assert list(tmp_path.iterdir()) == []  # --print-pipeline writes nothing

    # the order printed is the order a real conversion runs them in (progress lines on stderr)
    conv = run_inprocess(["convert", str(MLP), "-o", str(tmp_path / "m.py")], tmp_path)
    assert conv.code == 0, conv.stderr
    ran = [line.strip()[:-len(" ...")] for line in conv.stderr.splitlines() if PROGRESS.match(line)]
    assert ran[0] == "import"
    assert ran[1:] == [p.name for p in build_pipeline()]
    assert printed[len(IMPORT_STAGES):] == ran[1:]


def test_ops_table():
    result = CliRunner().invoke(main, ["ops"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["op", "opsets", "schema", "versions", "ttnn", "ops", "constraints", "fallback"]
    ops = {line.split()[0] for line in lines[2:-1]}
    for op in ("Conv", "MatMul", "Relu", "Add", "Softmax"):
        assert op in ops, op
    # the op types the unsupported-ops and no-fallback cases rely on: no rule; the latter have a fallback only
    rows = {row.op: row for row in support_rows()}
    for op in ("Foo", "Bar", "Baz"):
        assert op not in ops, op
    for op in FALLBACK_OPS:
        assert rows[op].ttnn_ops == () and rows[op].fallback, op
    assert lines[-1] == f"{len(ops)} ONNX op types"


def test_ops_markdown_is_the_docs_page():
    result = CliRunner().invoke(main, ["ops", "--markdown"])
    assert result.exit_code == 0, result.output
    assert result.stdout == (REPO / "docs" / "ops.md").read_text()


def test_cnn_converts_from_cli(tmp_path: Path):
    run = run_inprocess(["convert", str(CNN), "-o", str(tmp_path / "cnn_ttnn.py"), "--memory", "l1"], tmp_path)
    assert run.code == 0, run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn_ttnn.npz", "cnn_ttnn.py"]
    assert "conv2d" in run.stdout
