"""ONNX names are data, never code: quotes, newlines, code, unicode, keywords and colliding names.

The model: two inputs -> MatMul(W) -> Add(b) -> {Relu -> out 1, Add(input 2) -> Mul(c) -> out 2}; every
tensor, node, initializer, input and output has a name chosen to break a naive code generator.
"""
from __future__ import annotations

import ast
import io
import os
import tokenize
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn

PWN = "__import__('os').system('touch PWNED')"
NAMES = {
    # graph inputs
    "x0": "in'put\"\n名前",                 # quotes, a newline, unicode
    "x1": "params",                          # the name of forward()'s own parameter
    # initializers
    "w": PWN,                                # code
    "b": "ünï",                              # unicode that sanitises to almost nothing
    "c": "9名前",                            # a leading digit
    # intermediate tensors (a-b / a_b collide after sanitising)
    "t1": "a-b",
    "t2": "a_b",
    "t3": "lambda",                          # a keyword
    # graph outputs (x.y / x_y collide after sanitising)
    "o1": "x.y",
    "o2": "x_y",
    # nodes
    "n1": "class",
    "n2": "def",
    "n3": "None",
    "n4": "\"); " + PWN + " #",
    "n5": "'''\n" + PWN + "\n'''",
}
# names that must never appear in the program outside a string literal or a comment
DANGEROUS = [n for n in NAMES.values() if any(ch in n for ch in "'\"\n") or "PWNED" in n]


def build_model(path: Path) -> Path:
    rng = np.random.default_rng(0)
    n = NAMES
    w = numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), n["w"])
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), n["b"])
    c = numpy_helper.from_array((rng.standard_normal(8) + 2.0).astype(np.float32), n["c"])
    nodes = [
        helper.make_node("MatMul", [n["x0"], n["w"]], [n["t1"]], name=n["n1"]),
        helper.make_node("Add", [n["t1"], n["b"]], [n["t2"]], name=n["n2"]),
        helper.make_node("Relu", [n["t2"]], [n["o1"]], name=n["n3"]),
        helper.make_node("Add", [n["t2"], n["x1"]], [n["t3"]], name=n["n4"]),
        helper.make_node("Mul", [n["t3"], n["c"]], [n["o2"]], name=n["n5"]),
    ]
    graph = helper.make_graph(
        nodes, "g'\"\n" + PWN,
        [helper.make_tensor_value_info(n["x0"], TensorProto.FLOAT, [2, 8]),
         helper.make_tensor_value_info(n["x1"], TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info(n["o1"], TensorProto.FLOAT, [2, 8]),
         helper.make_tensor_value_info(n["o2"], TensorProto.FLOAT, [2, 8])],
        initializer=[w, b, c],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="p'\"\n" + PWN)
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


@pytest.fixture
def converted(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a PWNED file would land here
    model = build_model(tmp_path / "hostile.onnx")
    out = tmp_path / "hostile_ttnn.py"
    result = onnx2ttnn.convert(str(model), str(out))
    result.write(str(out))
    return model, out


REPO = Path(__file__).resolve().parents[1]


def _no_pwned(*folders: Path) -> None:
    assert not (REPO / "PWNED").exists() and not (REPO / "tests" / "PWNED").exists()
    for folder in folders:
        hits = list(Path(folder).rglob("PWNED"))
        assert not hits, f"a name was executed as code: {hits}"


def test_program_compiles_and_names_stay_literals(converted):
    model, out = converted
    src = out.read_text(encoding="utf-8")
    compile(src, str(out), "exec")
    tree = ast.parse(src)

    # every string constant that mentions a hostile name is exactly one of the names (or a node's
    # provenance comment, which is not a constant): nothing got spliced into a larger literal
    _check_module_structure(tree)
    docstring = tree.body[0].value
    constants = [node.value for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str) and node is not docstring]
    for value in constants:
        for name in DANGEROUS:
            if name in value and value != name:
                pytest.fail(f"hostile name {name!r} spliced into the literal {value!r}")
    for name in (NAMES["x0"], NAMES["x1"], NAMES["o1"], NAMES["o2"]):
        assert name in constants, f"graph input/output name {name!r} is not kept verbatim in the program"

    # at the token level, anything that mentions PWNED is a string or a comment, never code
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if "PWNED" in tok.string or "名前" in tok.string or "ünï" in tok.string:
            assert tok.type in (tokenize.STRING, tokenize.COMMENT), f"name leaked into code: {tok}"
        if tok.type == tokenize.COMMENT:
            body = tok.string[1:].strip()
            if body.startswith(("'", '"')):  # provenance comments are ascii() literals
                assert isinstance(ast.literal_eval(body), str), tok.string
    # the names reach the file only through ascii(): the program is pure ASCII
    assert src.isascii()
    # identifiers are ASCII, unique and no name became a call
    idents = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert "__import__" not in idents
    assert not any(isinstance(node, ast.Attribute) and node.attr == "system" for node in ast.walk(tree))
    forward = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    args = [a.arg for a in forward.args.args] + [a.arg for a in forward.args.kwonlyargs]
    assert args[:2] == ["device", "params"] and len(args) == len(set(args)) == 4
    # the two graph outputs stay two distinct values in forward()'s return
    ret = [n for n in ast.walk(forward) if isinstance(n, ast.Return)][-1].value
    assert isinstance(ret, ast.Dict)
    assert [k.value for k in ret.keys] == [NAMES["o1"], NAMES["o2"]]
    assert len({v.id for v in ret.values}) == 2
    # the weights sidecar has one array per initializer, under sanitised keys
    with np.load(out.with_suffix(".npz"), allow_pickle=False) as data:
        assert len(data.files) == 3
        assert all(k.isascii() and k.isidentifier() for k in data.files)
    _no_pwned(out.parent, Path.cwd())


def test_program_runs_on_simulator_like_onnxruntime(converted):
    model, out = converted
    report = onnx2ttnn.verify(str(model), memory="dram", dtype="fp32")
    assert [o.name for o in report.outputs] == [NAMES["o1"], NAMES["o2"]]
    assert report.passed, report.text()
    assert all(o.pcc > 0.9999 for o in report.outputs), report.text()

    # load the written program ourselves and feed it chosen inputs (exercises collisions: a-b/a_b, x.y/x_y)
    import importlib.util

    import torch
    from onnx2ttnn.sim import runtime

    rng = np.random.default_rng(7)
    feeds = {NAMES["x0"]: rng.standard_normal((2, 8)).astype(np.float32),
             NAMES["x1"]: rng.standard_normal((2, 8)).astype(np.float32)}
    session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    want = dict(zip([NAMES["o1"], NAMES["o2"]], session.run([NAMES["o1"], NAMES["o2"]], feeds)))
    assert not np.allclose(want[NAMES["o1"]], want[NAMES["o2"]])  # a mixed-up output would show

    fp32 = out.parent / "fp32" / "hostile_ttnn.py"
    fp32.parent.mkdir()
    onnx2ttnn.convert(str(model), str(fp32), dtype="fp32").write(str(fp32))
    spec = importlib.util.spec_from_file_location("hostile_program", fp32)
    program = importlib.util.module_from_spec(spec)
    runtime.configure("n150")
    with runtime.install():
        spec.loader.exec_module(program)
        import ttnn

        assert {onnx_name for onnx_name, _, _ in program.INPUTS.values()} == set(feeds)
        device = ttnn.open_device(device_id=0, l1_small_size=16384)
        try:
            params = program.load_parameters(device)
            got = program.forward(device, params, **{ident: torch.from_numpy(feeds[onnx_name])
                                                     for ident, (onnx_name, _, _) in program.INPUTS.items()})
        finally:
            ttnn.close_device(device)
    assert list(got) == [NAMES["o1"], NAMES["o2"]]
    for name in got:
        np.testing.assert_allclose(got[name].float().numpy(), want[name], rtol=1e-4, atol=1e-4, err_msg=repr(name))
    _no_pwned(out.parent, Path.cwd())


def test_program_main_runs_as_a_script(converted, capsys):
    """The program's own main() with --check (under the simulator) compares with onnxruntime and passes."""
    import importlib.util

    from onnx2ttnn.sim import runtime

    model, out = converted
    spec = importlib.util.spec_from_file_location("hostile_main", out)
    program = importlib.util.module_from_spec(spec)
    runtime.configure("n150")
    with runtime.install():
        spec.loader.exec_module(program)
        program.main(["--check"])
    printed = capsys.readouterr().out
    assert printed.count(" ok") == 2, printed
    assert ascii(NAMES["o1"]) in printed and ascii(NAMES["o2"]) in printed
    _no_pwned(out.parent, Path.cwd())


# Names that reach the module docstring: the producer, the model's file name, the program's file name.
BREAKOUT = '"""+str(__import__("os").system("touch PWNED"))+"""'


@pytest.mark.parametrize("vector", ["producer", "model-file-name", "output-file-name"])
def test_names_cannot_close_the_docstring(tmp_path: Path, monkeypatch, vector):
    """A triple quote in a name that the header prints must not end the docstring and run code."""
    import importlib.util

    from onnx2ttnn.sim import runtime

    monkeypatch.chdir(tmp_path)
    model = onnx.load(str(REPO / "models" / "mlp.onnx"))
    model_path = tmp_path / "mlp.onnx"
    out = tmp_path / "mlp_ttnn.py"
    if vector == "producer":
        model.producer_name = BREAKOUT
    elif vector == "model-file-name":
        model_path = tmp_path / (BREAKOUT + ".onnx")
    else:
        out = tmp_path / (BREAKOUT + ".py")
    onnx.save(model, str(model_path))
    onnx2ttnn.convert(str(model_path), str(out)).write(str(out))
    src = out.read_text(encoding="utf-8")
    compile(src, str(out), "exec")
    spec = importlib.util.spec_from_file_location("breakout_program", out)
    program = importlib.util.module_from_spec(spec)
    with runtime.install():
        spec.loader.exec_module(program)  # importing the program must not run anything from a name
    _no_pwned(tmp_path)
    _check_module_structure(ast.parse(src))
    assert program.__doc__.startswith("Generated by onnx2ttnn")


def _is_kernel_config(value: ast.expr) -> bool:
    """`ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.X, <flag>=True/False, ...)`: keyword
    arguments only, each a bool constant or a MathFidelity member."""
    def fidelity(node):
        return ast.unparse(node) in {f"ttnn.MathFidelity.{f}" for f in ("LoFi", "HiFi2", "HiFi3", "HiFi4")}

    return (isinstance(value, ast.Call) and ast.unparse(value.func) == "ttnn.WormholeComputeKernelConfig"
            and not value.args and all(
                fidelity(k.value) if k.arg == "math_fidelity" else
                isinstance(k.value, ast.Constant) and isinstance(k.value.value, bool) for k in value.keywords))


def _check_module_structure(tree: ast.Module) -> None:
    """Top level: the docstring, imports, constant assignments, the compute kernel configs (a ttnn constructor
    with literal arguments), defs, docstring-only classes and the __main__ guard - nothing else."""
    first = tree.body[0]
    assert isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
        and isinstance(first.value.value, str), f"the module does not start with a docstring: {ast.dump(first)[:200]}"
    for stmt in tree.body[1:]:
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef)):
            continue
        if isinstance(stmt, ast.ClassDef):  # main()'s InputError: a docstring, nothing that runs on import
            assert all(isinstance(b, ast.Name) for b in stmt.bases) and not stmt.decorator_list and not stmt.keywords
            assert len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Expr), ast.unparse(stmt)[:200]
            continue
        if isinstance(stmt, ast.Assign) and _is_kernel_config(stmt.value):
            continue
        if isinstance(stmt, ast.Assign):
            assert all(isinstance(n, (ast.Constant, ast.Dict, ast.List, ast.Tuple, ast.Load, ast.Name, ast.Store))
                       for n in ast.walk(stmt.value)) or isinstance(stmt.value, ast.Constant), ast.dump(stmt)[:200]
            continue
        assert isinstance(stmt, ast.If) and ast.unparse(stmt.test) == "__name__ == '__main__'", \
            f"unexpected top-level statement: {ast.unparse(stmt)[:200]}"
