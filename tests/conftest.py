"""Shared fixtures: the example models and a converter helper."""
from __future__ import annotations

import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models")


@pytest.fixture(scope="session")
def mlp_path() -> str:
    return os.path.join(MODELS, "mlp.onnx")


@pytest.fixture(scope="session")
def cnn_path() -> str:
    return os.path.join(MODELS, "cnn.onnx")
