"""Every zoo model: export (cached), convert, run on the simulator against onnxruntime (PCC >= 0.99 per
output, no leaks), then run the same program on real ttnn 0.81.1 (mock n150): it must complete and leave
only parameters and outputs allocated. Reduced configs in CI; `--zoo-full` for the published sizes."""
from __future__ import annotations

import pytest

from models import zoo
from models.evaluate import evaluate


def _cases(full: bool):
    cases = []
    for entry in zoo.selected(full=full):
        for exporter in (entry.exporters if entry.exported else ("-",)):
            cases.append(pytest.param(entry, exporter, id=f"{entry.name}-{exporter}" if exporter != "-" else entry.name))
    return cases


def pytest_generate_tests(metafunc):
    if "zoo_case" in metafunc.fixturenames:
        full = metafunc.config.getoption("--zoo-full")
        metafunc.parametrize("zoo_case", [(p.values, p.id) for p in _cases(full)], ids=[p.id for p in _cases(full)])


def test_zoo_model(zoo_case, ttnn_mock, tmp_path, request):
    (entry, exporter), _ = zoo_case
    size = "full" if request.config.getoption("--zoo-full") and entry.exported else "reduced"
    result = evaluate(entry, size, exporter, mock=ttnn_mock, workdir=str(tmp_path))
    assert result.status == "pass", f"{entry.name} ({size}, {exporter}) failed at {result.stage}: {result.error}"
    assert result.real_ttnn == "ok"
    if entry.kind == "torch":  # the recurrent entries: every LSTM / GRU runs on the device, no host node
        assert result.fallback_ops == 0, result.fallback_detail


def test_the_zoo_has_what_the_issue_asks():
    architectures = {e.architecture for e in zoo.MODELS if e.ci}
    assert len(architectures) >= 20
    assert all(e.full or e.kind != "transformers" or e.config for e in zoo.MODELS)
