"""Input-shape overrides and ONNX shape inference, done on the ModelProto before import.

Inference is strict and checks types: a node whose shapes or element types are inconsistent (an incompatible
broadcast, negative pads, a BatchNormalization parameter of the wrong length, a float MatMul with an int64
weight, a declared shape that contradicts the graph) refuses the model, naming the node, as onnxruntime would.
"""
from __future__ import annotations

import re

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


SHAPE_ONLY_ELEMENTS = 1024  # larger initializers are never shape operands: inference needs only their type


def infer_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """Strict ONNX shape and type inference with data propagation (resolves Shape->Gather->Concat->Reshape
    chains), run on a light copy of the model (large initializers demoted to typed inputs, so no weight is
    serialized or copied); the shapes it finds are written back into `model`, which is returned."""
    light = _light_copy(model)
    if light.ByteSize() >= 2**31:
        return model  # > 2 GB without the weights: rely on the shapes the exporter wrote and on folding
    try:
        inferred = _infer(light, strict=True)
    except (onnx.shape_inference.InferenceError, ValueError) as exc:
        failures = _failures(str(exc))
        if not all(why.startswith(_NESTED) for _, why in failures):
            raise ConversionError(_message(failures)) from None
        # only onnx's own expansion of function ops failed (onnx 1.23 cannot infer MeanVarianceNormalization's
        # body, which onnxruntime runs): not the model's fault, so the lenient inference of before is used
        try:
            inferred = _infer(light, strict=False)
        except (onnx.shape_inference.InferenceError, ValueError) as again:
            raise ConversionError(_message(_failures(str(again)))) from None
    inferred = _contrib_shapes(inferred)
    for name in ("node", "value_info", "output"):  # what inference writes (subgraphs live in nodes)
        field = getattr(model.graph, name)
        del field[:]
        field.extend(getattr(inferred.graph, name))
    return model


STANDARD_DOMAINS = ("", "ai.onnx", "ai.onnx.ml")
# ops whose output shapes ONNX inference often leaves unknown and onnxruntime's symbolic inference finds
# (a Loop's loop-carried values, a sequence's concatenation); host regions run them (fallback/regions.py)
HOST_SHAPED_OPS = ("Loop", "Scan", "If", "SequenceConstruct", "SequenceAt", "SequenceInsert", "SequenceErase",
                   "ConcatFromSequence", "SplitToSequence", "SequenceLength", "SequenceEmpty", "SequenceMap")


def _contrib_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """Shapes ONNX inference cannot give: outputs of contrib ops (com.microsoft and other domains onnx has
    no schema for) and of HOST_SHAPED_OPS, which host regions run with onnxruntime, from onnxruntime's
    symbolic shape inference, which knows them (the program checks them when it runs the region).  Only tensors still without a shape take its result; when it fails, they keep none
    (and whatever needs them says so)."""
    known = {vi.name for vi in list(model.graph.value_info) + list(model.graph.output)
             if vi.type.tensor_type.HasField("shape")}
    if not any((node.domain not in STANDARD_DOMAINS or node.op_type in HOST_SHAPED_OPS)
               and any(name and name not in known for name in node.output) for node in model.graph.node):
        return model
    try:
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        found = SymbolicShapeInference.infer_shapes(copy, auto_merge=False, guess_output_rank=False)
    except Exception:  # noqa: BLE001 (its failures are many and its own; the shapes stay unknown)
        return model
    if found is None:
        return model
    by_name = {vi.name: vi for vi in list(found.graph.value_info) + list(found.graph.output)}
    outputs = {o.name: o for o in model.graph.output}
    for name, vi in by_name.items():
        if name in known or not vi.type.tensor_type.HasField("shape"):
            continue
        if name in outputs:
            outputs[name].CopyFrom(vi)
        else:
            model.graph.value_info.append(vi)
    return model


def _infer(model: onnx.ModelProto, strict: bool) -> onnx.ModelProto:
    return onnx.shape_inference.infer_shapes(model, check_type=strict, strict_mode=strict, data_prop=True)


INVALID = "invalid model (ONNX shape and type inference)"
_NESTED = "Inference error(s): "  # how onnx starts the errors of a function body it expanded
# one failing node in onnx's message: "(op_type:Add, node name: add0): [ShapeInferenceError] Incompatible ..."
_NODE_ERROR = re.compile(r"(?:\[\w+\] )?\(op_type:(?P<op>[^,)]*)(?:, node name: (?P<node>.*?))?\): "
                         r"(?:\[\w+\] )?(?P<why>.*)")


def _failures(text: str) -> list[tuple[str, str]]:
    """(node, reason) of every failure in onnx's inference error ("" when a line names no node)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if lines:
        lines[0] = re.sub(r"^\[\w+\] Inference error\(s\): ", "", lines[0])
    failures = []
    for line in lines:
        match = _NODE_ERROR.fullmatch(line)
        if match is None:
            failures.append(("", line))
        else:
            node = f"node {match['node']!r} ({match['op']})" if match["node"] else f"a {match['op']} node (unnamed)"
            failures.append((node, match["why"]))
    return failures


def _message(failures: list[tuple[str, str]]) -> str:
    """The failures as one message, each failing node named on its own line (nothing dropped)."""
    described = [f"{node}: {why}" if node else why for node, why in failures]
    if len(described) == 1:
        return f"{INVALID}: {described[0]}"
    return f"{INVALID}:\n" + "\n".join(f"  {line}" for line in described)


def _light_copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` without the data of its large initializers: each becomes a graph input of its dtype and shape."""
    light = onnx.ModelProto()
    _copy_fields(model, light, skip="graph")
    _copy_fields(model.graph, light.graph, skip="initializer")
    inputs = {i.name for i in model.graph.input}
    for tensor in model.graph.initializer:
        if elements(tensor.dims) <= SHAPE_ONLY_ELEMENTS:
            light.graph.initializer.append(tensor)
        elif tensor.name not in inputs:  # an old model may list its initializers among the inputs already
            light.graph.input.append(onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, tensor.dims))
    return light


def _copy_fields(source, target, skip: str) -> None:
    """Copy every set field of protobuf message `source` but `skip` into `target`."""
    for field, value in source.ListFields():
        if field.name == skip:
            continue
        if field.is_repeated:
            getattr(target, field.name).extend(value)
        elif field.message_type is not None:
            getattr(target, field.name).CopyFrom(value)
        else:
            setattr(target, field.name, value)


def elements(dims) -> int:
    count = 1
    for d in dims:
        count *= int(d)
    return count
