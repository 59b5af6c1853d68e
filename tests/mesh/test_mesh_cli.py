"""Bad multi-chip input on the command line: one `error:` line, exit 2, nothing written (in-process and as a
subprocess, as tests/test_cli.py runs every bad-input case)."""
from __future__ import annotations

import pytest

from tests.test_cli import CNN, MLP, RUNNERS, message_of

CASES = {
    "mesh larger than the device": (["--device", "n300", "--mesh", "1x4"], MLP,
                                    "--mesh 1x4 is larger than device n300 (2 chips, mesh 1x2)"),
    "mesh on a one-chip device": (["--device", "n150", "--mesh", "2x1"], MLP,
                                  "--mesh 2x1 is larger than device n150 (1 chip, mesh 1x1)"),
    "malformed mesh": (["--device", "t3k", "--mesh", "8"], MLP, "--mesh '8': expected RxC"),
    "batch not divisible": (["--device", "t3k", "--parallel", "dp"], MLP,
                            "data parallel: the batch (4, dim 0 of every input) does not divide by the mesh's 8 chips"),
    "tensor parallel without a pair to split": (["--device", "t3k", "--parallel", "tp"], CNN,
                                                "tensor parallel (--parallel tp): the model has no attention or "
                                                "feed-forward pair of linears to split over the chips"),
    "tensor parallel on one column": (["--device", "t3k", "--mesh", "2x1", "--parallel", "tp"], MLP,
                                      "--parallel tp needs a mesh with more than one column of chips (got 2x1)"),
    "batch baked into the model": (["--device", "n300", "--input-shape", "x=2,8"], None,
                                   "data parallel: the batch cannot be split over the chips: a Reshape node (unnamed) "
                                   "mixes the rows of the batch (a reduction, a contraction or a shape the model "
                                   "fixes): its output 'y' is [1, 2, 4] whatever the batch"),
}


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_multi_chip_input(case, runner, tmp_path):
    options, model, expected = CASES[case]
    if case == "batch baked into the model":
        model = _baked_batch_model(tmp_path)
    run = RUNNERS[runner](["convert", str(model), "-o", "out_ttnn.py", *options], tmp_path)
    message = message_of(run.stderr)
    assert run.code == 2, run.stderr
    assert message.startswith("error: ") and len(message.splitlines()) == 1 and expected in message, message
    assert "Traceback" not in run.stderr and sorted(p.name for p in tmp_path.iterdir()) == [
        p for p in ["baked.onnx"] if (tmp_path / p).exists()]


def _baked_batch_model(folder):
    """x [1, 8] -> Reshape to the constant [1, 2, 4]: its batch cannot change."""
    import onnx
    from onnx import parser

    model = parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[1, 8] x) => (float[1, 2, 4] y) {
            shape = Constant <value = int64[3] {1, 2, 4}> ()
            y = Reshape (x, shape)
        }""")
    path = folder / "baked.onnx"
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize("command", ["report", "verify"])
@pytest.mark.parametrize("case", ["mesh larger than the device", "batch not divisible"])
def test_report_and_verify_refuse_bad_multi_chip_input_alike(command, case, tmp_path):
    """The acceptance's bad meshes through the other commands that convert: the same one line, exit 2,
    nothing written."""
    options, model, expected = CASES[case]
    run = RUNNERS["inprocess"]([command, str(model), *options], tmp_path)
    message = message_of(run.stderr)
    assert run.code == 2 and message.startswith("error: ") and len(message.splitlines()) == 1, run.stderr
    assert expected in message and "Traceback" not in run.stderr and list(tmp_path.iterdir()) == []
