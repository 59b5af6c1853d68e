"""The L1_SMALL region a program opens with (memory/l1_small.py) holds what its convs keep there on the real ttnn
0.81.1 (mock n150): the program opens with module.l1_small_size and the bound lies above what the call keeps
(docs/ttnn-facts.md §40, design §6.33)."""
from __future__ import annotations

from onnx2ttnn.convert import convert
from onnx2ttnn.ir.device import get_device
from onnx2ttnn.memory.l1_small import DEFAULT, call_bytes
from tests.memory.test_l1_small import _conv_transpose_model
from tests.real_ttnn.conftest import ttnn_mock  # noqa: F401  (the session fixture, shared)


def test_the_program_opens_the_l1_small_its_conv_transpose_keeps(ttnn_mock, tmp_path):  # noqa: F811
    program = str(tmp_path / "up_ttnn.py")
    conversion = convert(_conv_transpose_model(), program)
    conversion.write(program)
    size = conversion.module.l1_small_size
    assert size > DEFAULT
    report = ttnn_mock.run_program(program)
    assert report["ok"], report.get("error")
    assert report["memory_after_open"]["L1_SMALL"]["total_bytes_per_bank"] == size
    assert report["memory_after_open"]["L1"]["total_bytes_per_bank"] == get_device("n150").l1_bank_bytes - (size - DEFAULT)
    kept = report["program_cache_bytes_per_bank"]["L1_SMALL"]  # 5,312 B measured
    (up,) = [n for n in conversion.module.graph.nodes if n.op == "conv_transpose2d"]
    assert 0 < kept <= call_bytes(up, get_device("n150")) <= size
