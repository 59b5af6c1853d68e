"""Zoo tests run every model of models/zoo.py: reduced configs by default, published full sizes with
`--zoo-full` (the benchmark run). The real-ttnn mock tier is part of each test (see tests/real_ttnn)."""
from __future__ import annotations

from tests.real_ttnn.conftest import ttnn_mock  # noqa: F401  (the session fixture, shared)


def pytest_addoption(parser):
    parser.addoption("--zoo-full", action="store_true", default=False,
                     help="run the zoo at the published full-size configs (slow; the benchmark run)")
