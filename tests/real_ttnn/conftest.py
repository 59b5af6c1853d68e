"""The real-ttnn tier: fixtures that prepare the mock-device environment once per session.

The tier is part of every test run. If the environment cannot be prepared the tests FAIL with setup.sh's
output; the only way to leave them out is to say so: ONNX2TTNN_SKIP_TTNN_MOCK=1 (never set in CI).
"""
from __future__ import annotations

import os

import pytest

from tests.real_ttnn.mock import SetupFailed, TTNNMock

SKIP_ENV = "ONNX2TTNN_SKIP_TTNN_MOCK"


@pytest.fixture(scope="session")
def ttnn_mock() -> TTNNMock:
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"real-ttnn tier switched off by {SKIP_ENV}=1")
    try:
        return TTNNMock.prepare()
    except SetupFailed as exc:
        pytest.fail(str(exc), pytrace=False)
