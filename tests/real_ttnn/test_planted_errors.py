"""The tier catches what the simulator might not: a memory config planted in a generated program is refused
by the real ttnn with its own message, reported with the program line that made the call."""
from __future__ import annotations

import pytest

import onnx2ttnn
from onnx2ttnn.ir.graph import layout_of, set_layout
from onnx2ttnn.passes import fuse_epilogues, place_memory


@pytest.fixture
def oversharded_program(monkeypatch, tmp_path, mlp_path) -> str:
    """The MLP with relu1's output width-sharded into 4 shards of 32x32 on a grid of only 2 cores."""
    place = place_memory.PlaceMemory.run

    def plant(self, module, ctx):
        place(self, module, ctx)
        (a1,) = [t for t in module.graph.tensors().values() if t.name == "a1"]
        assert a1.shape == [4, 128]
        set_layout(a1, layout_of(a1).with_(buffer="l1", memory_layout="width_sharded", grid=(1, 2), shard=(32, 32)))

    monkeypatch.setattr(place_memory.PlaceMemory, "run", plant)
    # relu1 stays its own call (fuse-epilogues would fold it into fc1's linear, which refuses a sharded output
    # with an activation before the shard count is checked)
    monkeypatch.setattr(fuse_epilogues.FuseEpilogues, "run", lambda self, module, ctx: None)
    program = str(tmp_path / "oversharded_ttnn.py")
    # the IR verifier refuses this layout at compile time (tests/ir/test_verify_ir.py): off, so the real ttnn sees it
    onnx2ttnn.convert(mlp_path, program, memory="l1", verify_each=False).write(program)
    return program


def test_real_ttnn_refuses_more_shards_than_cores(ttnn_mock, oversharded_program):
    report = ttnn_mock.run_program(oversharded_program)
    assert report["ok"] is False and report["returncode"] == 1
    assert report["stage"] == "forward"
    assert "Number of shards along width 4 must not exceed number of cores 2" in report["error"]
    assert report["failing_ttnn_call"] == "relu"
    assert report["error_location"]["code"].startswith("a1 = ttnn.relu(h1, memory_config=ttnn.MemoryConfig(")
    assert "TensorMemoryLayout.WIDTH_SHARDED" in report["error_location"]["code"]
