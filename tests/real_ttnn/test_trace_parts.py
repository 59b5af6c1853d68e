"""The parts of a --trace run the real ttnn mock can execute (tools/ttnn_mock/run_traced_parts.py), on the mock
n150 and p150: the device opened by the program's own --trace --cqs 2 call (CreateDevice: a trace region and two
command queues), persistent input buffers in the forward's input placement,
copy_host_to_device_tensor into them on both queues at unchanged addresses, events, and the captured part of
the forward run eagerly. Capture and replay cannot run on a mock device (docs/ttnn-facts.md §25)."""
from __future__ import annotations

import json
import os

import pytest

import onnx2ttnn


@pytest.mark.parametrize("device", ["n150", "p150"])
@pytest.mark.parametrize("model", ["mlp_path", "cnn_path", "bert_path"])
def test_the_traced_path_outside_the_capture_runs_on_real_ttnn(model, device, request, ttnn_mock, tmp_path):
    program = str(tmp_path / "model_ttnn.py")
    onnx2ttnn.convert(request.getfixturevalue(model), program, device=device).write(program)
    out = str(tmp_path / "parts.json")
    proc = ttnn_mock._python("run_traced_parts.py", [program, out, "--device", device], str(tmp_path))
    assert os.path.exists(out), proc.stderr[-3000:]
    with open(out) as handle:
        report = json.load(handle)
    assert report["ok"], report["error"]
    assert "copy_host_to_device_tensor cq_id=1" in report["steps"] and report["addresses_kept"] is True
    assert report["outputs"]
    # the conv weights the plan keeps in L1 are moved after the warm-up (emit/conv_resident.py)
    assert ("settle_weights" in report["steps"]) == (model == "cnn_path")
