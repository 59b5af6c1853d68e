"""Input-shape overrides and ONNX shape inference, done on the ModelProto before import.

Inference is strict and checks types: a node whose shapes or element types are inconsistent (an incompatible
broadcast, negative pads, a BatchNormalization parameter of the wrong length, a float MatMul with an int64
weight, a declared shape that contradicts the graph) refuses the model, naming the node, as onnxruntime would.
Only the branch an If takes is checked when the pinned shapes decide its condition (frontend/branches.py); a
branch of an If they leave open that does not fit is accepted (lenient inference), as onnxruntime, which runs
only the branch taken, accepts it.
"""
from __future__ import annotations

import re

import onnx

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.branches import TAKEN, inline_decided_ifs


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
        kind = inp.type.WhichOneof("value")
        if kind not in ("tensor_type", None):  # a sequence or map (DictVectorizer's dict)
            raise ConversionError(f"input {inp.name!r} is {_KINDS.get(kind, kind)}, not a tensor: a program's "
                                  "inputs are tensors")
        dims = inp.type.tensor_type.shape.dim
        if not inp.type.tensor_type.HasField("shape") or any(not d.HasField("dim_value") for d in dims):
            shown = ",".join(d.dim_param or "?" if not d.HasField("dim_value") else str(d.dim_value) for d in dims)
            bad.append(f"{inp.name!r} [{shown}]")
    if bad:
        raise ConversionError(
            "input(s) with symbolic or unknown dimensions: " + ", ".join(bad)
            + "; give static shapes with --input-shape NAME=D0,D1,..."
        )


_KINDS = {"map_type": "a map", "sequence_type": "a sequence", "optional_type": "an optional",
          "sparse_tensor_type": "a sparse tensor"}


SHAPE_ONLY_ELEMENTS = 1024  # larger initializers are never shape operands: inference needs only their type


def infer_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """Strict ONNX shape and type inference with data propagation (resolves Shape->Gather->Concat->Reshape
    chains), run on a light copy of the model (large initializers demoted to typed inputs, so no weight is
    serialized or copied); the shapes it finds are written back into `model`, which is returned."""
    light = light_copy(model)
    if light.ByteSize() >= 2**31:
        return model  # > 2 GB without the weights: rely on the shapes the exporter wrote and on folding
    try:
        inferred = _infer(light, strict=True)
    except (onnx.shape_inference.InferenceError, ValueError) as exc:
        failures = _failures(str(exc))
        if any(_in_if(node) for node, _ in failures) and all(why.startswith(_NESTED) for _, why in failures) \
                and inline_decided_ifs(model, _infer(light, strict=False)):
            # an If the pinned shapes decide: only its taken branch is checked (frontend/branches.py)
            light = light_copy(model)
            try:
                inferred = _infer(light, strict=True)
                failures = []
            except (onnx.shape_inference.InferenceError, ValueError) as again:
                failures = _failures(str(again))
                # (an inlined branch's failure leaves the Identity after it untyped: not a failure of its own)
                failures = [f for f in failures if not f[0].endswith(f"{TAKEN}' (Identity)")] or failures
        if failures and not all(why.startswith(_NESTED) for _, why in failures):
            raise ConversionError(_message(failures)) from None
        # only failures nested in a subgraph remain: onnx's own expansion of function ops (onnx 1.23 cannot
        # infer MeanVarianceNormalization's body, which onnxruntime runs) or a branch of an If no pinned shape
        # decides (onnxruntime runs only the branch taken): the lenient inference of before is used
        if failures:
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
    no schema for) and of HOST_SHAPED_OPS, which host regions run with onnxruntime.  First onnxruntime's own
    inference (it knows the contrib schemas: the shapes a session reports for those tensors made graph
    outputs), then its symbolic shape inference (it knows Loop and the sequence ops).  Only tensors still
    without a shape take a result, and the program checks them when it runs the region; when both fail they
    keep none (and whatever needs them says so)."""
    known = {vi.name for vi in list(model.graph.value_info) + list(model.graph.output)
             if vi.type.tensor_type.HasField("shape")}
    missing = [name for node in model.graph.node if node.domain not in STANDARD_DOMAINS
               or node.op_type in HOST_SHAPED_OPS for name in node.output if name and name not in known]
    if not missing:
        return model
    # every tensor without a shape: those downstream of a contrib op lost theirs to it
    unknown = [name for node in model.graph.node for name in node.output if name and name not in known]
    found = _session_shapes(model, unknown)
    if any(name not in found for name in missing):  # (sympy's import alone takes seconds)
        found.update((vi.name, vi) for vi in _symbolic_shapes(model) if vi.name not in found)
    outputs = {o.name: o for o in model.graph.output}
    for name, vi in found.items():
        if name in known or not vi.type.tensor_type.HasField("shape"):
            continue
        if name in outputs:
            outputs[name].CopyFrom(vi)
        else:
            model.graph.value_info.append(vi)
    return model


def _session_shapes(model: onnx.ModelProto, names: list[str]) -> dict[str, onnx.ValueInfoProto]:
    """{name: value info} of the tensors `names` whose shape an onnxruntime session of `model` reports (its
    graph resolution infers them, contrib schemas included); a rank-0 or unknown report is left out."""
    from onnx2ttnn import ort

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    outputs = {o.name for o in probe.graph.output}
    probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(n) for n in names if n not in outputs)
    try:
        outs = ort.session(probe.SerializeToString(), optimize=False).get_outputs()
    except Exception:  # noqa: BLE001 (a refusal here is reported where the region is opened)
        return {}
    types = {vi.name: vi.type.tensor_type.elem_type for vi in
             list(model.graph.value_info) + list(model.graph.output) + list(model.graph.input)}
    found = {}
    for out in outs:
        if out.name not in names or not out.shape:
            continue
        elem = types.get(out.name) or _ORT_TYPES.get(out.type, 0)
        if not elem:
            continue
        dims = [d if isinstance(d, int) else (d or None) for d in out.shape]
        found[out.name] = onnx.helper.make_tensor_value_info(out.name, elem, dims)
    return found


_ORT_TYPES = {f"tensor({name})": value for name, value in (
    ("float", onnx.TensorProto.FLOAT), ("double", onnx.TensorProto.DOUBLE), ("float16", onnx.TensorProto.FLOAT16),
    ("int64", onnx.TensorProto.INT64), ("int32", onnx.TensorProto.INT32), ("int16", onnx.TensorProto.INT16),
    ("int8", onnx.TensorProto.INT8), ("uint8", onnx.TensorProto.UINT8), ("uint16", onnx.TensorProto.UINT16),
    ("uint32", onnx.TensorProto.UINT32), ("uint64", onnx.TensorProto.UINT64), ("bool", onnx.TensorProto.BOOL))}


def _symbolic_shapes(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The value infos onnxruntime's symbolic shape inference finds, as far as it gets (its public entry
    point writes a file into the working folder when it does not finish: its steps are run here instead)."""
    try:
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

        inference = SymbolicShapeInference(2**31 - 1, False, False, 0)
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        inference._preprocess(copy)
        while inference.run_:
            inference._infer_impl()
        inference._update_output_from_vi()
        return list(inference.out_mp_.graph.value_info) + list(inference.out_mp_.graph.output)
    except Exception:  # noqa: BLE001 (its failures are many and its own: the shapes stay unknown)
        return []


def _infer(model: onnx.ModelProto, strict: bool) -> onnx.ModelProto:
    return onnx.shape_inference.infer_shapes(model, check_type=strict, strict_mode=strict, data_prop=True)


INVALID = "invalid model (ONNX shape and type inference)"
_NESTED = "Inference error(s): "  # how onnx starts the errors of a function body it expanded
# one failing node in onnx's message: "(op_type:Add, node name: add0): [ShapeInferenceError] Incompatible ..."
_NODE_ERROR = re.compile(r"(?:\[\w+\] )?\(op_type:(?P<op>[^,)]*)(?:, node name: (?P<node>.*?))?\): "
                         r"(?:\[\w+\] )?(?P<why>.*)")


def _in_if(node: str) -> bool:
    """Whether a failure's node (as `_failures` names it) is an If node of the main graph."""
    return node.endswith("(If)") or node == "a If node (unnamed)"


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


def light_copy(model: onnx.ModelProto) -> onnx.ModelProto:
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
