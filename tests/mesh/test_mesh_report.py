"""`onnx2ttnn report` on a mesh: per-chip parameter, L1 and DRAM bytes, the whole mesh's, and the statement
that a data-parallel chip holds what the single-chip program holds, checked against the single-chip report
of the same model at batch / chips (both through the command line)."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from onnx2ttnn.cli import main
from tests.mesh.models import batch_shapes, dp_model  # noqa: F401 (dp_model is a fixture)

SINGLE = {"parameters": r"parameters on the device: (\d+) B", "l1": r"peak L1 per core: (\d+) B of (\d+) B"}
PER_CHIP = (r"  per chip: parameters (\d+) B, peak L1 per core (\d+) B of (\d+) B, DRAM reserved at the peak (\d+) B "
            r"of (\d+) B")
WHOLE = r"  whole mesh: parameters (\d+) B \((\d+) copies\), DRAM reserved at the peak (\d+) B"


def _report(model: str, batch: int, *options: str) -> str:
    shapes = [a for name, shape in batch_shapes(model, batch).items()
              for a in ("--input-shape", f"{name}={','.join(map(str, shape))}")]
    result = CliRunner().invoke(main, ["report", model, *shapes, "--memory", "dram", *options])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("name,device,mesh,chips", [("gpt2", "n300", "1x2", 2), ("cnn", "t3k", "2x4", 8)])
def test_report_on_a_mesh_gives_per_chip_figures_equal_to_the_single_chip_programs(dp_model, name, device, mesh,
                                                                                   chips):
    model = dp_model(name)
    single = _report(model, 1, "--device", "n150")
    multi = _report(model, chips, "--device", device, "--mesh", mesh)
    assert "mesh:" not in single and "per chip:" not in single
    params, l1, l1_budget, dram, dram_budget = map(int, re.search(PER_CHIP, multi).groups())
    assert params == int(re.search(SINGLE["parameters"], single).group(1)) > 0
    assert (l1, l1_budget) == tuple(map(int, re.search(SINGLE["l1"], single).groups()))
    assert 0 < dram < dram_budget == 12 * 1_072_693_184
    assert tuple(map(int, re.search(WHOLE, multi).groups())) == (params * chips, chips, dram * chips)
    assert (f"mesh: {mesh}, {chips} chips, data parallel" in multi and "data parallel: each chip's parameters equal "
            f"the single-chip program's (every chip runs the one-chip program at batch / {chips})" in multi)
    # every per-op row of the table is the single-chip program's (the per-chip program is that program)
    assert _table(multi) == _table(single)


def _table(text: str) -> list[str]:
    return text.split("\n\n")[0].splitlines()


def test_report_on_a_tensor_parallel_mesh_says_so_and_splits_the_parameters(dp_model):
    """`report --parallel tp` on T3000 1x8: the mesh line names tensor parallel, and each chip holds well under
    the single-chip program's parameters (the split weights are 1/8 each; norms, biases and what does not split
    stay whole: the reduced BERT's narrow widths pad to whole tiles per chip, so it lands near 0.54x, where the
    full-size BERT-base lands at 0.155x, benchmarks/README.md)."""
    model = dp_model("bert")
    single = _report(model, 1, "--device", "n150")
    multi = _report(model, 1, "--device", "t3k", "--mesh", "1x8", "--parallel", "tp")
    assert "mesh: 1x8, 8 chips, tensor parallel over 8 chips per layer" in multi, multi
    assert "data parallel:" not in multi
    params = int(re.search(PER_CHIP, multi).group(1))
    assert 0 < params < 0.6 * int(re.search(SINGLE["parameters"], single).group(1))
