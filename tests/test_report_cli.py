"""`onnx2ttnn report`: the per-op placement table, the totals, and the memory timeline PNG."""
from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

import onnx2ttnn
from onnx2ttnn.cli import main
from onnx2ttnn.ir.cost import program_cost
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.report import placement_report

CNN = Path(__file__).resolve().parents[1] / "models" / "cnn.onnx"


def test_report_prints_the_placement_table_and_totals():
    result = CliRunner().invoke(main, ["report", str(CNN), "--memory", "auto"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:3] == ["#", "op", "output"]
    conv_rows = [line for line in lines if " conv2d " in line]
    assert conv_rows and all(" l1 " in row for row in conv_rows)  # the CNN's convs all write L1 under auto
    sharded = [line for line in lines if "height_sharded" in line]
    assert sharded and all("x" in line.split()[5] for line in sharded)  # grid column filled
    assert "memory policy: auto" in result.output
    assert "DRAM traffic:" in result.output and "floor" in result.output
    assert "estimated device time:" in result.output


def test_report_totals_are_the_cost_model_of_the_converted_program():
    conversion = onnx2ttnn.convert(str(CNN), memory="auto")
    report = placement_report(conversion)
    cost = program_cost(conversion.module.graph, get_device("n150"))
    assert (report.dram_bytes, report.floor_bytes) == (cost.dram_bytes, cost.floor_bytes)
    assert report.sharded == conversion.module.notes["place-memory"]["sharded_buffers"]
    assert max(report.l1_per_core) == conversion.module.notes["place-memory"]["l1_peak_per_core"]
    dram = placement_report(onnx2ttnn.convert(str(CNN), memory="dram"))
    assert max(dram.l1_per_core) == 0 and dram.dram_bytes > report.dram_bytes


def test_report_png_is_written(tmp_path):
    png = tmp_path / "mem.png"
    result = CliRunner().invoke(main, ["report", str(CNN), "--memory", "auto", "--png", str(png)])
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_png_without_matplotlib_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    png = tmp_path / "mem.png"
    result = CliRunner().invoke(main, ["report", str(CNN), "--png", str(png)])
    assert result.exit_code == 2
    assert "error: --png needs matplotlib" in result.output
    assert not png.exists()
