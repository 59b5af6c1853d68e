"""Load an ONNX file (with external data) and check it; every failure becomes one clear ConversionError."""
from __future__ import annotations

import os

import onnx
from google.protobuf.message import DecodeError

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.functions import check_functions
from onnx2ttnn.frontend.shapes import SHAPE_ONLY_ELEMENTS, elements
from onnx2ttnn.limits import KNOWN_OPSETS
from onnx2ttnn.messages import clean_message, one_line


def load_model(path: str) -> onnx.ModelProto:
    """Read `path`, check its external data next to it (reading the small tensors), run the ONNX checker."""
    if not os.path.exists(path):
        raise ConversionError(f"model file not found: {path}")
    if not os.path.isfile(path):
        raise ConversionError(f"not a file: {path}")
    try:
        model = onnx.load_model(path, load_external_data=False)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise ConversionError(f"{path} is not a valid ONNX model (protobuf parse failed: {exc})") from None
    except OSError as exc:
        raise ConversionError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not model.HasField("graph") or not model.opset_import:
        raise ConversionError(f"{path} is not a valid ONNX model (no graph or no opset)")
    _load_external_data(model, os.path.dirname(os.path.abspath(path)), path)
    check_functions(model)  # before the checker, which refuses a recursive function without naming the node
    _check(path)
    return model


def _load_external_data(model: onnx.ModelProto, base_dir: str, path: str) -> None:
    """Check that every tensor stored outside the .onnx file is there (naming the missing file) and read the
    small ones, which shape inference may need; the large ones stay in their files until the importer's
    constants read them into numpy (frontend/weights.py), so the proto never holds a copy of the weights."""
    for tensor in onnx.external_data_helper._get_all_tensors(model):
        if not onnx.external_data_helper.uses_external_data(tensor):
            continue
        location = next((e.value for e in tensor.external_data if e.key == "location"), "")
        full = os.path.join(base_dir, location)
        if not location or not os.path.isfile(full):
            raise ConversionError(
                f"{path}: external data file {location!r} for tensor {tensor.name!r} not found in {base_dir}"
            )
    try:
        for tensor in onnx.external_data_helper._get_all_tensors(model):
            if onnx.external_data_helper.uses_external_data(tensor) and elements(tensor.dims) <= SHAPE_ONLY_ELEMENTS:
                onnx.external_data_helper.load_external_data_for_tensor(tensor, base_dir)
                tensor.data_location = onnx.TensorProto.DEFAULT
                del tensor.external_data[:]
    except (OSError, ValueError) as exc:
        raise ConversionError(f"{path}: cannot read external data: {exc}") from None


def _check(path: str) -> None:
    """The ONNX checker, run on the file: checking the loaded proto would serialize every weight to hand
    the model to the C++ checker (and measure it first), seconds for a BERT; the file holds the same graph
    and names its external data, which the checker checks is there."""
    try:
        onnx.checker.check_model(path)
    except (onnx.checker.ValidationError, ValueError) as exc:
        reason = clean_message(one_line(exc)) or type(exc).__name__  # the whole message: it names the node
        raise ConversionError(f"{path} fails the ONNX checker: {reason}") from None


def opset_of(model: onnx.ModelProto) -> int:
    """The default-domain opset the model was exported with (import_default_opset gives one to a model
    that imports none)."""
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    raise ConversionError("the model imports no default-domain (ai.onnx) opset")


def import_default_opset(model: onnx.ModelProto) -> None:
    """A model that imports no ai.onnx opset (a scikit-learn export: ai.onnx.ml only) has no ai.onnx node,
    as the ONNX checker requires; it is given the newest ai.onnx opset onnx and onnxruntime know, which only
    the nodes the converter adds and the host regions' models import (docs/design.md §6.41)."""
    if any(entry.domain in ("", "ai.onnx") for entry in model.opset_import):
        return
    model.opset_import.append(onnx.helper.make_opsetid("", KNOWN_OPSETS[""]))
