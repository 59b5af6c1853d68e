"""The planner's sharding facts (onnx2ttnn/ir/placements.py) against the real ttnn 0.81.1, and the auto
policy's sharded placements in a real program: the probe that maintains the table agrees on a sample, and the
BERT program planned with --memory auto contains height-sharded memory configs and runs on real ttnn."""
from __future__ import annotations

import onnx2ttnn


def test_sharding_facts_sample_holds_on_real_ttnn(ttnn_mock, tmp_path):
    proc = ttnn_mock._python("probes/probe_sharding.py", ["--sample"], str(tmp_path))
    lines = proc.stdout.splitlines()
    summary = [line for line in lines if line.startswith("facts:")]
    assert summary, proc.stdout[-2000:] + proc.stderr[-2000:]
    disagreements = [line for line in lines if line.startswith("DISAGREE")]
    assert disagreements == [], disagreements
    agreed = int(summary[0].split()[1])
    assert agreed >= 40, summary  # the sample covers 10 ops on 3 shapes
    assert [line for line in lines if line.startswith("AGREE") and "conv2d(DRAM) 3x3 -> HS" in line]
    assert proc.returncode == 0


def test_bert_auto_program_is_sharded_and_runs_on_real_ttnn(ttnn_mock, bert_path, tmp_path):
    program = str(tmp_path / "model_ttnn.py")
    conversion = onnx2ttnn.convert(bert_path, program, memory="auto")
    conversion.write(program)
    assert conversion.module.notes["place-memory"]["sharded_buffers"] > 0
    assert "ttnn.TensorMemoryLayout.HEIGHT_SHARDED" in conversion.source
    report = ttnn_mock.run_program(program)
    assert report["ok"], f"real ttnn refused the program: {report['error']}\nat {report.get('error_location')}"
    assert report["peak"]["l1_allocated_per_bank"] > 0


def test_moves_and_uneven_shards_hold_on_real_ttnn(ttnn_mock, tmp_path):
    # to_memory_config DRAM -> L1 / height-sharded on the planner's uneven grids, eltwise ops on them
    proc = ttnn_mock._python("probes/probe_moves.py", ["--sample"], str(tmp_path))
    lines = proc.stdout.splitlines()
    assert [line for line in lines if line.startswith("moves:")], proc.stdout[-2000:] + proc.stderr[-2000:]
    assert [line for line in lines if line.startswith("DISAGREE")] == []
    assert sum(line.startswith("AGREE") for line in lines) == 18 and proc.returncode == 0


def test_conv_reads_height_sharded_inputs_on_real_ttnn(ttnn_mock, tmp_path):
    proc = ttnn_mock._python("probes/probe_conv_sharded.py", ["--sample"], str(tmp_path))
    lines = proc.stdout.splitlines()
    assert sum(line.startswith("AGREE") for line in lines) == 2, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_width_sharding_facts_sample_holds_on_real_ttnn(ttnn_mock, tmp_path):
    proc = ttnn_mock._python("probes/probe_width.py", ["--sample"], str(tmp_path))
    lines = proc.stdout.splitlines()
    summary = [line for line in lines if line.startswith("width facts:")]
    assert summary and summary[0].endswith(" 0 disagree"), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert int(summary[0].split()[2]) >= 20 and proc.returncode == 0


def test_a_width_sharded_program_runs_on_real_ttnn(ttnn_mock, tmp_path):
    from tests.memory.memory_models import chain as _chain

    program = str(tmp_path / "model_ttnn.py")
    conversion = onnx2ttnn.convert(_chain((1, 1, 64, 2048)), program)
    conversion.write(program)
    assert "ttnn.TensorMemoryLayout.WIDTH_SHARDED" in conversion.source
    report = ttnn_mock.run_program(program)
    assert report["ok"], f"real ttnn refused the program: {report['error']}\nat {report.get('error_location')}"


def test_matmul_sharded_input_facts_hold_on_real_ttnn(ttnn_mock, tmp_path):
    # which shard grids a height-sharded input_tensor_a may have against weights and batched activations
    proc = ttnn_mock._python("probes/probe_matmul_sharded.py", [], str(tmp_path))
    lines = proc.stdout.splitlines()
    assert "matmul facts: 10 agree, 0 disagree" in lines, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert sum(line.startswith("AGREE    err") for line in lines) == 3  # the refusals are real refusals


def test_auto_program_with_a_move_runs_on_real_ttnn(ttnn_mock, tmp_path):
    import onnx

    from tests.memory.memory_models import conv_model as _conv_model

    model = tmp_path / "conv.onnx"
    onnx.save(_conv_model(True), str(model))
    program = str(tmp_path / "model_ttnn.py")
    conversion = onnx2ttnn.convert(str(model), program, memory="auto")
    conversion.write(program)
    assert "ttnn.to_memory_config(" in conversion.source
    report = ttnn_mock.run_program(program)
    assert report["ok"], f"real ttnn refused the program: {report['error']}\nat {report.get('error_location')}"
