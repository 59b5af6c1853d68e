"""The compiler's ttnn op table agrees with the real ttnn 0.81.1 API manifest."""
from __future__ import annotations

import pytest

from onnx2ttnn.ir.ttnn_ops import OPS
from tests.ttnn_api import _signatures, _split_params


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_exists_with_its_parameters(name):
    info = OPS[name]
    signatures = _signatures(name)
    assert signatures, f"ttnn.{name} is not in the manifest"
    wanted = set(info.inputs) | set(info.positional_attrs) | ({"memory_config"} if info.memory_config else set())
    assert any(wanted <= _split_params(sig)[1] for sig in signatures), f"ttnn.{name} lacks one of {wanted}"
