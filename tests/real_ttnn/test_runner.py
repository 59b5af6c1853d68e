"""tools/ttnn_mock/run_program.py reports the true outcome even when the process dies inside ttnn, and the
Python 3.11 segfault at interpreter exit never turns a success into a failure (or the reverse)."""
from __future__ import annotations

import textwrap

HAND_WRITTEN = '''
import os
import signal

import torch
import ttnn

INPUTS = {"x": ("x", (32, 32), "float32")}


def load_parameters(device, path=None):
    return {}


def forward(device, params, *, x):
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    y = ttnn.relu(t)
    ttnn.deallocate(t)
    if CRASH:
        os.kill(os.getpid(), signal.SIGSEGV)
    out = ttnn.to_torch(y)
    ttnn.deallocate(y)
    return {"y": out}


def random_inputs(seed=0):
    return {"x": torch.randn(32, 32, generator=torch.Generator().manual_seed(seed))}
'''


def _program(tmp_path, crash: bool) -> str:
    path = tmp_path / ("crash_ttnn.py" if crash else "fine_ttnn.py")
    path.write_text(textwrap.dedent(HAND_WRITTEN).replace("CRASH", "True" if crash else "False"))
    return str(path)


def test_a_crash_inside_forward_is_reported_with_its_location(ttnn_mock, tmp_path):
    report = ttnn_mock.run_program(_program(tmp_path, crash=True))
    assert report["ok"] is False and report["returncode"] == 1
    assert report["error_type"] == "ProcessCrash"
    assert report["crash"]["signal"] == "SIGSEGV"
    assert report["stage"] == "forward"
    assert report["crash"]["last_ttnn_call"] in ("relu", "deallocate")


def test_a_clean_run_exits_zero_despite_the_shutdown_quirk(ttnn_mock, tmp_path):
    report = ttnn_mock.run_program(_program(tmp_path, crash=False))
    assert report["ok"] is True and report["returncode"] == 0
    assert report["stage"] == "done"
    assert report["leaked_buffers_per_bank"] == {"L1": 0, "DRAM": 0}
