"""From a file (or ModelProto) to the IR Module: load, inline model-local functions, override input shapes,
infer shapes, validate, import."""
from __future__ import annotations

import os
from typing import Union

import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.batch_split import split_batch
from onnx2ttnn.frontend.functions import inline_functions
from onnx2ttnn.frontend.load import load_model, opset_of
from onnx2ttnn.frontend.shapes import check_static_inputs, infer_shapes, override_input_shapes
from onnx2ttnn.frontend.validate import validate_model
from onnx2ttnn.frontend.weights import defer_external_weights
from onnx2ttnn.ir.graph import Module
from onnx2ttnn.limits import check_input_shapes, check_model


def import_model(model: Union[str, os.PathLike, onnx.ModelProto], input_shapes: dict, chips: int = 1) -> Module:
    """The Module for `model` with static shapes on its inputs and inferred shapes inside; an invalid model
    (inconsistent shapes or types, constant indices out of range, ...) is refused, naming the node.  With
    `chips` > 1 (data parallel) the batch is split first (frontend/batch_split.py) and the Module is the
    per-chip model; its `batch_dims` name each output's batch dim."""
    path = None
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        proto = load_model(path)
    elif isinstance(model, onnx.ModelProto):
        proto = onnx.ModelProto()
        proto.CopyFrom(model)
    else:
        raise ConversionError(f"expected a path or an onnx.ModelProto, got {type(model).__name__}")
    check_input_shapes(input_shapes)
    inline_functions(proto)  # calls of model-local functions become their bodies' nodes
    check_model(proto)  # before shape inference, which would do the work an over-limit attribute asks for
    opset = opset_of(proto)
    batch_dims = {}
    if chips > 1:
        input_shapes, batch_dims = split_batch(proto, input_shapes, chips)
    override_input_shapes(proto, input_shapes)
    check_static_inputs(proto)
    proto = infer_shapes(proto)
    validate_model(proto)
    try:
        graph = gs.import_onnx(proto)
    except Exception as exc:  # graphsurgeon raises many types on malformed graphs
        raise ConversionError(f"cannot import the graph: {exc}") from None
    if path is not None:
        defer_external_weights(graph, os.path.dirname(os.path.abspath(path)))
    producer = f"{proto.producer_name} {proto.producer_version}".strip()
    return Module(graph=graph, opset=opset, source_path=path, producer=producer, batch_dims=batch_dims)
