"""Models in ONNX text for the validation tests (tests/frontend/test_validate*.py), and the message the import
refuses one with."""
from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import pytest
from onnx import numpy_helper

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.importer import import_model


def parsed(text: str, **initializers) -> onnx.ModelProto:
    """The model in ONNX text with `initializers`; its outputs' shapes are left to inference."""
    model = onnx.parser.parse_model(text)
    for output in model.graph.output:
        output.type.tensor_type.ClearField("shape")
    model.graph.initializer.extend(numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items())
    return model


def rejected(model: onnx.ModelProto) -> str:
    """The ConversionError message the import of `model` raises."""
    with pytest.raises(ConversionError) as info:
        import_model(model, {})
    return str(info.value)
