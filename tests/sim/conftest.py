"""Fixtures for the simulator tests: the simulated ttnn module and an open n150 device."""
from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import onnx2ttnn.sim as sim  # noqa: E402
from onnx2ttnn.sim import runtime  # noqa: E402


@pytest.fixture
def ttnn():
    """The simulator, under the name generated programs use."""
    return sim


@pytest.fixture
def device():
    """A fresh simulated n150; closed after the test."""
    runtime.configure("n150")
    dev = sim.open_device(device_id=0, l1_small_size=16384)
    yield dev
    if dev.is_open:
        dev.close()
    runtime.configure(None)
