"""Traced programs (--trace, --cqs 2) on the simulator: the same outputs as the eager run, PCC >= 0.99 against
onnxruntime, no leaks; a program with host steps refuses --trace with one error line (exit 2)."""
from __future__ import annotations

import contextlib
import importlib.util
import io
import os

import numpy as np
import onnxruntime
import pytest

import onnx2ttnn
from onnx2ttnn.ir.traceable import trace_plan
from onnx2ttnn.sim import runtime
from tests.emit import golden_cases
from tests.ttnn_api import check_source


def _write(model, folder) -> str:
    path = os.path.join(str(folder), "model_ttnn.py")
    onnx2ttnn.convert(model, path).write(path)
    return path


def _main(path: str, *argv: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the program's main(argv) on the simulator, in this process."""
    spec = importlib.util.spec_from_file_location("traced_program", path)
    program = importlib.util.module_from_spec(spec)
    out, err, code = io.StringIO(), io.StringIO(), 0
    runtime.configure("n150")
    with runtime.install(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        spec.loader.exec_module(program)
        try:
            program.main(list(argv))
        except SystemExit as exc:
            code = exc.code
    runtime.configure(None)
    return code, out.getvalue(), err.getvalue()


def _outputs(path: str) -> dict:
    with np.load(path) as data:
        return {name: data[name] for name in data.files}


def _pcc(a, b) -> float:
    return float(np.corrcoef(np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel())[0, 1])


@pytest.mark.parametrize("model", ["mlp_path", "cnn_path", "bert_path"])
def test_traced_runs_equal_the_eager_run_and_onnxruntime(model, request, tmp_path):
    source = request.getfixturevalue(model)
    program = _write(source, tmp_path)
    with open(program) as handle:
        text = handle.read()
    assert "# trace: traceable (--trace)" in text and "NOT_TRACEABLE = None" in text
    assert check_source(text) == []
    eager = tmp_path / "eager.npz"
    assert _main(program, "--outputs", str(eager))[0] == 0
    runs = {}
    for cqs in ("1", "2"):
        runs[cqs] = tmp_path / f"traced{cqs}.npz"
        code, out, err = _main(program, "--trace", "--cqs", cqs, "--iterations", "2", "--outputs", str(runs[cqs]))
        assert code == 0, err
        assert f"(traced, {cqs} command queue" in out
        assert runtime.leaks(runtime.last_closed_device()) == []
    expected = _outputs(str(eager))
    session = onnxruntime.InferenceSession(source, providers=["CPUExecutionProvider"])
    spec = importlib.util.spec_from_file_location("inputs_of", program)
    module = importlib.util.module_from_spec(spec)
    with runtime.install():
        spec.loader.exec_module(module)
        inputs = module.random_inputs()
    feeds = {onnx_name: inputs[ident].numpy() for ident, (onnx_name, _, _) in module.INPUTS.items()}
    reference = dict(zip(module.OUTPUTS, session.run(module.OUTPUTS, feeds)))
    for run in runs.values():
        traced = _outputs(str(run))
        assert traced.keys() == expected.keys()
        for name, value in traced.items():
            np.testing.assert_array_equal(value, expected[name])  # a replay computes what the eager run did
            assert _pcc(value, reference[name]) >= 0.99


@pytest.mark.parametrize("case", ["fallback", "region"])
def test_a_forward_with_host_steps_refuses_trace_with_one_line(case, tmp_path):
    model = next(c for c in golden_cases.CASES if c.name == case).model_path(str(tmp_path))
    program = _write(model, tmp_path)
    code, out, err = _main(program, "--trace")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --trace: this program cannot be traced: host ")
    assert _main(program)[0] == 0  # the eager run is unaffected


def test_the_plan_names_the_host_step_and_leaves_inputs_and_outputs_alive(mlp_path):
    plan = trace_plan(onnx2ttnn.convert(mlp_path, "m_ttnn.py").module.graph)
    assert plan.traceable and len(plan.uploads) == 1 and len(plan.downloads) == 1
    assert {n.op for n in plan.body} - {"deallocate"} and all(n.op == "deallocate" for n in plan.kept)
    assert not any(n.op in ("to_torch", "from_torch") for n in plan.body)
    kept = {id(n.inputs[0]) for n in plan.kept}
    assert id(plan.uploads[0].outputs[0]) in kept and id(plan.downloads[0].inputs[0]) in kept


def test_cqs_2_without_trace_is_bad_input(mlp_path, tmp_path):
    code, _, err = _main(_write(mlp_path, tmp_path), "--cqs", "2")
    assert code == 2 and err.startswith("error: --cqs 2 needs --trace")


def test_the_conversion_summary_says_whether_the_program_can_be_traced(mlp_path, tmp_path):
    from click.testing import CliRunner

    from onnx2ttnn.cli import main

    result = CliRunner().invoke(main, ["convert", mlp_path, "-o", str(tmp_path / "m_ttnn.py")])
    assert result.exit_code == 0, result.output
    assert "trace: traceable (--trace): " in result.output


@pytest.mark.parametrize("plant,message", [
    ("host_copy = ttnn.to_torch(a1)", "ttnn.to_torch inside a trace capture"),
    ("leaked = ttnn.exp(a1, memory_config=ttnn.L1_MEMORY_CONFIG)", "allocated inside the trace capture by ttnn.exp"),
    # freed by the warm-up already, so the capture's first read of it fails (the sim test checks the capture rule)
    ("ttnn.deallocate(x_dev)", "is not allocated: its buffer was freed by ttnn.deallocate"),
])
def test_violations_planted_in_a_generated_forward_device_are_caught(plant, message, mlp_path, tmp_path):
    program = _write(mlp_path, tmp_path)
    with open(program) as handle:
        text = handle.read()
    anchor = "    # 'fc2 + relu2'\n"  # (relu1 is fused into fc1: a1 is their result)
    body = text[text.index("def forward_device("):]
    assert anchor in body
    planted = text.replace(body, body.replace(anchor, f"    {plant}\n" + anchor, 1), 1)
    with open(program, "w") as handle:
        handle.write(planted)
    assert _main(program)[0] == 0  # eager runs never call forward_device
    code, _, err = _main(program, "--trace")
    assert code == 3 and message in err, err


def test_the_buffers_a_traced_run_holds_are_the_input_uploads_and_the_downloaded_outputs(mlp_path, tmp_path):
    from onnx2ttnn.ir.aliases import buffer_roots
    from onnx2ttnn.ir.traceable import persistent_buffers

    graph = onnx2ttnn.convert(mlp_path, "m_ttnn.py").module.graph
    plan = trace_plan(graph)
    roots = buffer_roots(graph)
    expected = {id(roots.get(id(t), t)) for t in [plan.uploads[0].outputs[0], plan.downloads[0].inputs[0]]}
    assert persistent_buffers(graph) == expected and len(expected) == 2
    model = next(c for c in golden_cases.CASES if c.name == "fallback").model_path(str(tmp_path))
    assert persistent_buffers(onnx2ttnn.convert(model, "f_ttnn.py").module.graph) == frozenset()  # not traceable
