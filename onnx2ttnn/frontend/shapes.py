"""Input-shape overrides and ONNX shape inference, done on the ModelProto before import."""
from __future__ import annotations

import onnx

from onnx2ttnn.errors import ConversionError


def override_input_shapes(model: onnx.ModelProto, shapes: dict[str, tuple[int, ...]]) -> None:
    """Pin graph input shapes; stale value_info is dropped so inference recomputes every shape."""
    if not shapes:
        return
    initializers = {t.name for t in model.graph.initializer}
    inputs = {i.name: i for i in model.graph.input if i.name not in initializers}
    unknown = sorted(set(shapes) - set(inputs))
    if unknown:
        raise ConversionError(
            f"--input-shape names unknown input(s) {', '.join(map(repr, unknown))}; "
            f"the model's inputs are {', '.join(map(repr, inputs))}"
        )
    for name, shape in shapes.items():
        dims = inputs[name].type.tensor_type.shape.dim
        if dims and len(dims) != len(shape):
            raise ConversionError(
                f"--input-shape {name}: rank {len(shape)} given but the input has rank {len(dims)}"
            )
        inputs[name].type.tensor_type.shape.Clear()
        for d in shape:
            inputs[name].type.tensor_type.shape.dim.add().dim_value = int(d)
    del model.graph.value_info[:]
    for out in model.graph.output:
        for d in out.type.tensor_type.shape.dim:
            d.Clear()


def check_static_inputs(model: onnx.ModelProto) -> None:
    """Every graph input needs a static shape; name those that do not and how to fix it."""
    initializers = {t.name for t in model.graph.initializer}
    bad = []
    for inp in model.graph.input:
        if inp.name in initializers:
            continue
        dims = inp.type.tensor_type.shape.dim
        if not inp.type.tensor_type.HasField("shape") or any(not d.HasField("dim_value") for d in dims):
            shown = ",".join(d.dim_param or "?" if not d.HasField("dim_value") else str(d.dim_value) for d in dims)
            bad.append(f"{inp.name!r} [{shown}]")
    if bad:
        raise ConversionError(
            "input(s) with symbolic or unknown dimensions: " + ", ".join(bad)
            + "; give static shapes with --input-shape NAME=D0,D1,..."
        )


def infer_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """ONNX shape inference with data propagation (resolves Shape->Gather->Concat->Reshape chains)."""
    try:
        if model.ByteSize() < 2**31:
            return onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except (onnx.shape_inference.InferenceError, ValueError) as exc:
        raise ConversionError(f"shape inference failed: {str(exc).strip().splitlines()[0]}") from None
    return model  # > 2 GB: rely on the shapes the exporter wrote and on folding
