"""Data-parallel programs on the real ttnn 0.81.1 (mock mode) with the n300 and T3000 descriptors setup.sh
writes: the program's own main() opens the mesh, uploads with its mesh mappers, runs (a warm-up and one timed
iteration), reads back with its composers and closes the mesh; nothing the program allocated is left on the chips
when it closes (the program cache's own config tensors aside, docs/ttnn-facts.md §12).  Mock devices compute
zeros: numerics are the simulator's (tests/mesh/test_data_parallel.py)."""
from __future__ import annotations

import re

import pytest

import onnx2ttnn
from tests.mesh.models import HOST_MODELS, batch_shapes, dp_model, host_model  # noqa: F401 (dp_model is a fixture)
from tests.real_ttnn.mock import run_mesh_program

# the same cases as the simulator's: every model on n300 (batch 2) and on T3000 (batch 8, 1x8 and 2x4)
CASES = [(name, "n300", "", 2) for name in ("bert", "vit", "gpt2", "cnn")] + [
    ("bert", "t3k", "1x8", 8), ("gpt2", "t3k", "1x8", 8), ("vit", "t3k", "2x4", 8), ("cnn", "t3k", "2x4", 8)]


@pytest.mark.parametrize("name,device,mesh,batch", CASES, ids=[f"{c[0]}-{c[1]}{c[2] and '-' + c[2]}" for c in CASES])
def test_data_parallel_program_runs_on_the_mock_mesh(ttnn_mock, dp_model, name, device, mesh, batch, tmp_path):
    model = dp_model(name)
    program = str(tmp_path / "dp_ttnn.py")
    onnx2ttnn.convert(model, program, device=device, mesh=mesh, input_shapes=batch_shapes(model, batch)).write(program)
    report = run_mesh_program(ttnn_mock, program, device, "--iterations", "1")
    assert report["exit"] == 0, report
    assert report["chips"] == batch
    assert report["memory_after_clearing_program_cache"] == {"L1": 0, "DRAM": 0}, report
    assert_uploads_allocate_only_the_parameters(report)
    shapes = re.findall(r": shape \((\d+),", report["stdout"])
    assert shapes and all(int(s) == batch for s in shapes), report["stdout"]
    assert "1 iterations:" in report["stdout"]


HOST_CASES = [(name, "n300", "", 4) for name in sorted(HOST_MODELS)] + [("det", "t3k", "2x4", 8)]


@pytest.mark.parametrize("name,device,mesh,batch", HOST_CASES,
                         ids=[f"{c[0]}-{c[1]}{c[2] and '-' + c[2]}" for c in HOST_CASES])
def test_host_steps_of_a_data_parallel_program_run_on_the_mock_mesh(ttnn_mock, name, device, mesh, batch, tmp_path):
    """Host fallbacks and host regions per chip (fallback/per_chip.py): the composer's joined download, the
    per-piece host step and the sharded upload of the joined pieces run on the real ttnn; nothing is left."""
    model = host_model(name, tmp_path)
    program = str(tmp_path / "host_ttnn.py")
    onnx2ttnn.convert(model, program, device=device, mesh=mesh, input_shapes=batch_shapes(model, batch)).write(program)
    report = run_mesh_program(ttnn_mock, program, device, "--iterations", "1")
    assert report["exit"] == 0, report
    assert report["chips"] == {"n300": 2, "t3k": 8}[device]
    assert report["memory_after_clearing_program_cache"] == {"L1": 0, "DRAM": 0}, report
    shapes = re.findall(r": shape \((\d+),", report["stdout"])
    assert shapes and all(int(s) == batch for s in shapes), report["stdout"]


# tensor parallel (docs/design.md §6.21): over one row (n300 1x2, T3000 1x8) and dp x tp on T3000 2x4
# (gpt2_lm: GPT-2 with its LM head, the head split over the vocab and its logits gathered)
TP_CASES = [("bert", "n300", "", 1), ("gpt2", "n300", "", 1), ("gpt2", "t3k", "1x8", 1), ("vit", "t3k", "2x4", 2),
            ("gpt2_lm", "t3k", "1x8", 1)]


def assert_uploads_allocate_only_the_parameters(report: dict) -> None:
    """load_parameters (under ttnn.graph capture, run_mesh.py) allocated one buffer per parameter, freed none and
    ran no device program: its uploads through mesh mappers are converted on the host.  Given the device, ttnn
    converts a float tensor on the chips with float32 copies beside it (docs/ttnn-facts.md §36), which is how
    GPT-2's split token table ran out of L1 on n300."""
    load = report["load_parameters"]
    assert load["device_operations"] == [] and load["freed"] == [], load
    assert len(load["buffers"]) == report["parameters"] > 0, load


@pytest.mark.parametrize("name,device,mesh,batch", TP_CASES,
                         ids=[f"{c[0]}-{c[1]}{c[2] and '-' + c[2]}" for c in TP_CASES])
def test_tensor_parallel_program_runs_on_the_mock_mesh(ttnn_mock, dp_model, name, device, mesh, batch, tmp_path):
    """The program sets the 1-D fabric, opens the mesh, uploads split weights, runs its all_reduces over the
    fabric and reads one replica per row back; nothing it allocated is left on the chips."""
    model = dp_model(name)
    program = str(tmp_path / "tp_ttnn.py")
    onnx2ttnn.convert(model, program, device=device, mesh=mesh, parallel="tp",
                      input_shapes=batch_shapes(model, batch)).write(program)
    report = run_mesh_program(ttnn_mock, program, device, "--iterations", "1")
    assert report["exit"] == 0, report
    assert report["chips"] == (2 if device == "n300" else 8)
    assert report["memory_after_clearing_program_cache"] == {"L1": 0, "DRAM": 0}, report
    assert_uploads_allocate_only_the_parameters(report)
    shapes = re.findall(r": shape \((\d+),", report["stdout"])
    assert shapes and all(int(s) == batch for s in shapes), report["stdout"]


def test_a_padded_vocab_projection_runs_on_the_mock_mesh(ttnn_mock, tmp_path):
    """A head [64, 500] over n300's 2 chips: its columns padded to 512, each chip's 256 computed, all_gather joins
    them and a slice drops the 12 padding columns (docs/design.md §6.21); the output has the model's 500."""
    from tests.mesh.test_tensor_parallel import _mlp

    program = str(tmp_path / "tp_ttnn.py")
    onnx2ttnn.convert(_mlp(tmp_path, vocab=500), program, device="n300", parallel="tp").write(program)
    report = run_mesh_program(ttnn_mock, program, "n300", "--iterations", "1")
    assert report["exit"] == 0, report
    assert report["memory_after_clearing_program_cache"] == {"L1": 0, "DRAM": 0}, report
    assert_uploads_allocate_only_the_parameters(report)
    assert re.search(r": shape \(1, 32, 500\)", report["stdout"]), report["stdout"]
