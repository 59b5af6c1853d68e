"""`onnx2ttnn report`: the per-op placement table, the totals, and the memory timeline PNG."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
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


def test_every_buffer_row_says_why_it_is_placed_there():
    result = CliRunner().invoke(main, ["report", str(CNN), "--memory", "auto"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[-1] == "reason"
    report = placement_report(onnx2ttnn.convert(str(CNN), memory="auto"))
    buffer_rows = [r for r in report.rows if r.buffer in ("l1", "dram")]
    assert buffer_rows and all(r.reason for r in buffer_rows)
    host_rows = [r for r in report.rows if r.buffer == "host"]
    assert host_rows and all(r.reason.startswith("host: ") for r in host_rows)
    # a conv weight's row also says where the plan keeps its prepared copy (memory/conv_resident.py)
    assert all(r.reason.startswith("host: a conv weight; ttnn prepares it on the device at the conv's first call; "
                                   "prepared: L1 interleaved, resident: ") for r in host_rows if r.op == "from_torch")
    for row in buffer_rows:  # the text shows each row's reason at the end of its line
        assert any(line.split()[:3] == [str(row.index), row.op, row.tensor] and line.endswith(row.reason)
                   for line in lines)


def _rows(model, memory="auto", **options):
    """Device rows by tensor name (a host row may repeat its device tensor's name: a graph output read back)."""
    report = placement_report(onnx2ttnn.convert(model, memory=memory, **options))
    return {r.tensor: r for r in report.rows if r.buffer != "host"}


def test_the_reason_of_a_resident_weight_a_dram_path_conv_and_a_sharded_chain():
    from tests.memory.memory_models import chain, conv_model, shared_weight_model

    weight = _rows(shared_weight_model(512), weights="bf16")["w"]
    assert (weight.op, weight.buffer) == ("from_torch", "l1")
    assert weight.reason == "L1 interleaved, resident: read 2 times per forward, saves 1048576 DRAM bytes per forward"
    assert _rows(shared_weight_model(512), memory="dram", weights="bf16")["w"].buffer == "dram"
    conv = next(r for r in _rows(conv_model(False, kernel=9)).values() if r.op == "conv2d")
    assert conv.buffer == "dram" and conv.reason == "DRAM: producer conv2d writes DRAM only (conv on its DRAM path)"
    chained = [r for r in _rows(chain((1, 1, 2048, 64))).values() if r.op in ("relu", "exp", "sigmoid")]
    assert len(chained) == 3
    assert all(r.memory_layout == "height_sharded" and r.reason.startswith("height-sharded 8x8: modelled time -")
               for r in chained)
    assert {r.reason for r in _rows(chain((1, 1, 2048, 64)), memory="dram").values() if r.buffer != "host"} == {
        "DRAM: --memory dram"}


def test_two_tensors_of_one_name_each_show_their_own_reason():
    from tests.memory.memory_models import conv_model

    # the ONNX output `y` names both the Add's result and its NCHW copy the program returns
    report = placement_report(onnx2ttnn.convert(conv_model(True), memory="auto"))
    add, permute = (next(r for r in report.rows if r.tensor == "y" and r.op == op) for op in ("add", "permute"))
    assert add.reason != permute.reason
    assert "producer permute" not in add.reason and "producer permute" in permute.reason


def test_report_prints_calls_modelled_time_and_weight_formats():
    conversion = onnx2ttnn.convert(str(CNN), memory="auto", weights="bf16")
    cost = program_cost(conversion.module.graph, get_device("n150"))
    text = placement_report(conversion).text()
    assert f"ttnn calls per forward: {cost.calls} ({cost.launches} run a device program;" in text
    assert f"modelled time per forward: eager {cost.eager_s * 1e6:.1f} us, traced {cost.traced_s * 1e6:.1f} us" in text
    assert cost.traced_s < cost.eager_s
    # with --weights bf16 the CNN's conv weights are prepared in float32 on the device, its fc weight is bf16
    line = next(line for line in text.splitlines() if line.startswith("weights read per forward: "))
    assert line.split(": ")[1].split(", ")[0].startswith("f32 ") and "bf16 " in line


def test_report_lists_each_weight_not_in_a_block_float_format_with_why():
    text = CliRunner().invoke(main, ["report", str(CNN), "--weights", "bf16"]).output
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("matmul, linear, conv and embedding weights "
                                                                      "not in a block-float format: "))
    kept = lines[head + 1:head + 1 + int(lines[head].split(": ")[1])]
    assert len(kept) == 5 and all(line.startswith("  '") for line in kept)  # 4 convs and the fc; no biases
    assert "  'fc_w_t' ('fc') bf16: no format chosen for it: the compute dtype" in kept
    assert any(line.startswith("  'stem_w_bn' ('stem.conv') f32: a conv's host weight") for line in kept)


def test_report_gives_the_reason_a_dequantized_weight_stayed_bf16(tmp_path):
    from tests.lowering.test_quantize import qdq_linear

    scales = [1.0 if i % 2 == 0 else 1e-3 for i in range(32)]  # bfloat8_b would flush the small columns
    blurred = tmp_path / "blurred.onnx"
    onnx.save(qdq_linear(w_scale=np.asarray(scales, np.float32)), blurred)
    text = CliRunner().invoke(main, ["report", str(blurred)]).output
    assert "weights not in a block-float format: 1\n" in text
    assert "  'wd' ('mm') bf16: bfloat8_b would move it by" in text
    sharp = tmp_path / "sharp.onnx"
    onnx.save(qdq_linear(), sharp)
    text = CliRunner().invoke(main, ["report", str(sharp)]).output
    assert "weights not in a block-float format: 0\n" in text and "weights read per forward: bfp8 " in text


def test_report_gives_auto_s_reason_for_a_float_weight_it_kept_in_bf16(tmp_path):
    from tests.lowering.test_weight_formats import _gaussian, _mlp, _worst_for_bfp8

    path = tmp_path / "mlp.onnx"
    onnx.save(_mlp([_worst_for_bfp8(64, 64)] + [_gaussian(64, 64) for _ in range(7)]), path)
    text = CliRunner().invoke(main, ["report", str(path)]).output
    assert "weights not in a block-float format: 1\n" in text
    assert ("  'w0' ('mm0 + relu0') bf16: bfloat8_b would add a relative error of 0.0302, over its share 0.0250 "
            "of the model's budget\n") in text


_LOOP_OF_UNKNOWN_LENGTH = """
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[1,4] x, int64 m) => (float[1,4] r, float[?,1,4] y) {
  r = Relu(x)
  go = Constant<value = bool {1}>()
  y = Loop(m, go) <body = body (int64 i, bool c) => (bool c_out, float[1,4] s) {
      c_out = Identity(c)
      s = Add(x, x)
  }>
}
"""


def test_report_names_a_loop_output_of_unknown_size_and_counts_the_rest(tmp_path):
    """A host region's Loop output whose length only running it tells (SLANet's decoder): no byte count, no
    traceback; the report counts what is known and names the value it could not."""
    import onnx.parser

    path = tmp_path / "loop.onnx"
    onnx.save(onnx.parser.parse_model(_LOOP_OF_UNKNOWN_LENGTH), path)
    result = CliRunner().invoke(main, ["report", str(path)])
    assert result.exit_code == 0, result.output
    assert ("values of unknown size: 1 (not counted in the DRAM and time figures above: their size is known only "
            "when the program runs): 'y'") in result.output
    cost = program_cost(onnx2ttnn.convert(str(path)).module.graph, get_device("n150"))
    assert cost.unknown == ["y"]
    assert cost.floor_bytes == 2 * 2048  # x and r, one bfloat16 tile each: the known values still counted
