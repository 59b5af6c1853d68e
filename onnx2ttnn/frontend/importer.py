"""From a file (or ModelProto) to the IR Module: load, inline model-local functions, override input shapes,
infer shapes, validate, import; note which integer inputs index tables (frontend/index_inputs.py)."""
from __future__ import annotations

import os
from typing import Optional, Union

import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.batch_split import split_batch
from onnx2ttnn.frontend.functions import inline_functions
from onnx2ttnn.frontend.index_inputs import index_rows
from onnx2ttnn.frontend.load import import_default_opset, load_model, opset_of
from onnx2ttnn.frontend.shapes import check_static_inputs, infer_shapes, override_input_shapes
from onnx2ttnn.frontend.validate import validate_model
from onnx2ttnn.frontend.weights import SharedReads, defer_external_weights
from onnx2ttnn.ir.graph import Module
from onnx2ttnn.limits import check_input_shapes, check_model


def import_model(model: Union[str, os.PathLike, onnx.ModelProto], input_shapes: dict, chips: int = 1) -> Module:
    """The Module for `model` with static shapes on its inputs and inferred shapes inside; an invalid model
    (inconsistent shapes or types, constant indices out of range, ...) is refused, naming the node.  With
    `chips` > 1 (data parallel) the batch is split first (frontend/batch_split.py) and the Module is the
    per-chip model; its `batch_dims` name each output's batch dim."""
    return import_proto(*read_model(model), input_shapes, chips)


def read_model(model: Union[str, os.PathLike, onnx.ModelProto]) -> tuple[onnx.ModelProto, Optional[str]]:
    """The proto import_proto will change (a ModelProto given is copied; a file is loaded and checked, its
    large external tensors left in their files) and the model's path (None for a ModelProto)."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        return load_model(path), path
    if isinstance(model, onnx.ModelProto):
        return copy_proto(model), None
    raise ConversionError(f"expected a path or an onnx.ModelProto, got {type(model).__name__}")


def copy_proto(proto: onnx.ModelProto) -> onnx.ModelProto:
    """A copy to import while keeping `proto` for another import: tensors read_model left in their files stay
    there (the copy names them, no weight is read)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    return copy


def import_proto(proto: onnx.ModelProto, path: Optional[str], input_shapes: dict, chips: int = 1,
                 shared: SharedReads = None) -> Module:
    """import_model() of a proto from read_model(), which it changes; `path` is the file it was read from (its
    folder holds the external weights, read only when a pass needs their values; imports of copies of one
    proto given the same `shared` read each from its file once)."""
    check_input_shapes(input_shapes)
    inline_functions(proto)  # calls of model-local functions become their bodies' nodes
    check_model(proto)  # before shape inference, which would do the work an over-limit attribute asks for
    import_default_opset(proto)  # (an ai.onnx.ml-only model imports none)
    opset = opset_of(proto)
    batch_dims = {}
    if chips > 1:
        input_shapes, batch_dims = split_batch(proto, input_shapes, chips)
    override_input_shapes(proto, input_shapes)
    check_static_inputs(proto)
    proto = infer_shapes(proto)
    validate_model(proto)
    severity, gs.logger.G_LOGGER.severity = gs.logger.G_LOGGER.severity, gs.logger.G_LOGGER.ERROR  # (its warning
    try:  # on a sequence of maps' UNDEFINED dtype; the caller's logging level is restored after)
        graph = gs.import_onnx(proto)
    except Exception as exc:  # graphsurgeon raises many types on malformed graphs
        raise ConversionError(f"cannot import the graph: {exc}") from None
    finally:
        gs.logger.G_LOGGER.severity = severity
    if path is not None:
        defer_external_weights(graph, os.path.dirname(os.path.abspath(path)), shared)
    producer = f"{proto.producer_name} {proto.producer_version}".strip()
    return Module(graph=graph, opset=opset, source_path=path, producer=producer, batch_dims=batch_dims,
                  index_rows=index_rows(graph))
