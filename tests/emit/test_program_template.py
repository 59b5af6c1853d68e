"""The generated program's main(): --outputs saves every output under its ONNX name, whatever the name (numpy.savez
takes the names as keywords, so outputs named `file` or `allow_pickle` crashed it or were dropped); bad input gives
one `error:` line and exit code 2, a --check mismatch exit code 1, a bug in the program the internal-error line and
exit code 3 (its traceback with ONNX2TTNN_DEBUG=1); never a traceback otherwise."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
import onnx2ttnn.sim
from onnx2ttnn.sim import runtime

# names that collide with numpy.savez's own parameters (file, *args, allow_pickle, **kwds) or look odd in a zip
NAMES = ["file", "allow_pickle", "args", "kwds", "a/b.npy"]


def _model(path: Path) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32])
    ops = ["Relu", "Neg", "Abs", "Sigmoid", "Exp"]
    nodes = [helper.make_node(op, ["x"], [name], name=f"n{i}") for i, (op, name) in enumerate(zip(ops, NAMES))]
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 32]) for name in NAMES]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], outputs), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def test_outputs_are_saved_under_every_name(tmp_path: Path):
    model = _model(tmp_path / "names.onnx")
    program_path = tmp_path / "names_ttnn.py"
    onnx2ttnn.convert(str(model), str(program_path), dtype="fp32").write(str(program_path))
    spec = importlib.util.spec_from_file_location("names_main", program_path)
    program = importlib.util.module_from_spec(spec)
    x = np.linspace(-2, 2, 64, dtype=np.float32).reshape(2, 32)
    np.savez(tmp_path / "in.npz", x=x)
    runtime.configure("n150")
    with runtime.install():
        spec.loader.exec_module(program)
        program.main(["--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "out.npz")])
    with np.load(tmp_path / "out.npz", allow_pickle=False) as saved:
        assert sorted(saved.files) == sorted(NAMES)
        want = {"file": np.maximum(x, 0), "allow_pickle": -x, "args": np.abs(x), "kwds": 1 / (1 + np.exp(-x)),
                "a/b.npy": np.exp(x)}
        for name in NAMES:
            np.testing.assert_allclose(saved[name], want[name], rtol=2e-2, atol=2e-2, err_msg=name)


# --- main()'s error boundary ----------------------------------------------------------------------------------
ANSI = "\x1b[2J"


@pytest.fixture
def gather_program(tmp_path: Path):
    """y = data[idx] with an input named with an ANSI escape, converted next to its model, and its main()."""
    data = numpy_helper.from_array(np.arange(32, dtype=np.float32).reshape(4, 8), "data")
    idx = "idx" + ANSI
    graph = helper.make_graph([helper.make_node("Gather", ["data", idx], ["y"], axis=0, name="g0")], "g",
                              [helper.make_tensor_value_info(idx, TensorProto.INT64, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8])], initializer=[data])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "g.onnx"))
    program_path = tmp_path / "g_ttnn.py"
    onnx2ttnn.convert(str(tmp_path / "g.onnx"), str(program_path)).write(str(program_path))
    spec = importlib.util.spec_from_file_location("gather_main", program_path)
    program = importlib.util.module_from_spec(spec)
    runtime.configure("n150")
    with runtime.install():
        spec.loader.exec_module(program)
    return program, idx


def _main(program, args, capsys) -> tuple[int, str, str]:
    """Run main(args) under the simulator: (exit code, stdout, stderr)."""
    code = 0
    with runtime.install():
        try:
            program.main(args)
        except SystemExit as exc:
            code = exc.code
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out, out.err
    return code, out.out, out.err


def _error(program, args, capsys) -> str:
    code, _, err = _main(program, args, capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert "\x1b" not in err, err
    return lines[0]


def test_main_bad_inputs_file(tmp_path, gather_program, capsys):
    """A missing input was a KeyError traceback, garbage bytes a numpy one; a wrong shape reached forward."""
    program, idx = gather_program
    path = str(tmp_path / "in.npz")
    np.savez(path, other=np.arange(3))
    assert _error(program, ["--inputs", path], capsys).endswith("has no input 'idx\\x1b[2J'")
    np.savez(path, **{idx: np.arange(2)})
    assert "is int64 (2,); the program takes int64 (3,)" in _error(program, ["--inputs", path], capsys)
    np.savez(path, **{idx: np.array(["a", "b", "c"])})
    assert "is <U1 (3,); the program takes int64 (3,)" in _error(program, ["--inputs", path], capsys)
    (tmp_path / "in.npz").write_bytes(b"\x00garbage" * 100)
    assert "is not an .npz of arrays" in _error(program, ["--inputs", path], capsys)
    assert "No such file or directory" in _error(program, ["--inputs", str(tmp_path / "none.npz")], capsys)


def test_main_missing_or_corrupt_weights(tmp_path, gather_program, capsys):
    program, _ = gather_program
    weights = tmp_path / "g_ttnn.npz"
    good = weights.read_bytes()
    weights.unlink()
    assert _error(program, [], capsys).startswith("error: cannot load the weights 'g_ttnn.npz' (next to this program): "
                                                  "FileNotFoundError")
    weights.write_bytes(b"junk")
    assert "not an .npz of arrays" in _error(program, [], capsys)
    np.savez(weights, other=np.zeros(3))
    assert "KeyError" in _error(program, [], capsys)
    weights.write_bytes(good)
    assert _main(program, [], capsys)[0] == 0


def test_main_unwritable_outputs(tmp_path, gather_program, capsys):
    program, _ = gather_program
    assert "cannot write" in _error(program, ["--outputs", str(tmp_path / "none" / "out.npz")], capsys)


def test_main_check(tmp_path, gather_program, capsys, monkeypatch):
    program, idx = gather_program
    code, out, _ = _main(program, ["--check"], capsys)
    assert code == 0 and "'y': PCC 1.000000 ok" in out
    np.savez(tmp_path / "in.npz", **{idx: np.array([0, 50, 1])})
    msg = _error(program, ["--check", "--inputs", str(tmp_path / "in.npz")], capsys)
    assert msg.startswith("error: --check: onnxruntime cannot run ")
    assert "idx=50 must be within the inclusive range" in msg
    assert "onnxruntime:" not in msg  # its log record is not printed
    monkeypatch.setattr(onnx2ttnn.sim, "embedding", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("planted")))
    code, out, err = _main(program, ["--check"], capsys)
    assert code == 3 and err.strip() == ("internal error: RuntimeError: planted (set ONNX2TTNN_DEBUG=1 for the "
                                         "traceback; please report it)")
    monkeypatch.undo()
    (tmp_path / "g.onnx").unlink()
    assert "--check: source model" in _error(program, ["--check"], capsys)


def test_main_check_mismatch_is_exit_1(tmp_path, gather_program, capsys, monkeypatch):
    program, _ = gather_program
    real = onnx2ttnn.sim.embedding
    monkeypatch.setattr(onnx2ttnn.sim, "embedding", lambda *a, **k: onnx2ttnn.sim.neg(real(*a, **k)))
    code, out, err = _main(program, ["--check"], capsys)
    assert code == 1 and "FAIL" in out and err == ""


def test_main_traceback_with_the_debug_variable(gather_program, capsys, monkeypatch):
    program, _ = gather_program
    monkeypatch.setattr(onnx2ttnn.sim, "embedding", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("planted")))
    monkeypatch.setenv("ONNX2TTNN_DEBUG", "1")
    with runtime.install(), pytest.raises(RuntimeError, match="planted"):
        program.main([])


def test_negative_gather_indices_read_rows_from_the_end_as_onnxruntime_does(tmp_path, gather_program, capsys):
    """The program refused them ("outside [0, 4294967295]"): the uint32 upload cannot hold them."""
    program, idx = gather_program
    np.savez(tmp_path / "in.npz", **{idx: np.array([-1, 0, -4])})
    code, out, _ = _main(program, ["--check", "--inputs", str(tmp_path / "in.npz"),
                                   "--outputs", str(tmp_path / "out.npz")], capsys)
    assert code == 0 and "'y': PCC 1.000000 ok" in out
    with np.load(tmp_path / "out.npz") as saved:
        np.testing.assert_array_equal(saved["y"], np.arange(32, dtype=np.float32).reshape(4, 8)[[3, 0, 0]])


def test_a_gather_index_outside_the_rows_is_one_error_line(tmp_path, gather_program, capsys):
    program, idx = gather_program
    for bad in (-5, 4):
        np.savez(tmp_path / "in.npz", **{idx: np.array([0, bad, 1])})
        assert _error(program, ["--inputs", str(tmp_path / "in.npz")], capsys) == (
            f"error: input 'idx\\x1b[2J' holds {bad}, outside [-4, 3], the rows it indexes")


def test_the_programs_check_judges_outputs_as_verify_does():
    """A generated program's --check and verify agree on what passes: a PCC, and closeness for a constant output
    or one of two values (the review found the program still calling two values 0.106 apart a PCC of 1.0)."""
    from onnx2ttnn.emit.program_main import MAIN
    from onnx2ttnn.verify import pcc as verify_pcc

    scope = {"numpy": np}
    start = MAIN.index("def pcc(a, b):")
    exec(MAIN[start:MAIN.index("\ndef ", start + 1)], scope)  # noqa: S102 - the program's own function
    cases = [([0.5703125, 0.4296875], [0.676273, 0.323727]), ([0.678, 0.3245], [0.676273, 0.323727]),
             ([2.0, 2.0, 2.0], [2.0, 2.0, 2.001]), ([1.0, 2.0, 3.1], [1.0, 2.0, 3.0]), ([0.0], [0.5])]
    for got, want in cases:
        assert scope["pcc"](got, want) == verify_pcc(np.array(got), np.array(want)), (got, want)
