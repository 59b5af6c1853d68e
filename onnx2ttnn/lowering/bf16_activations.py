"""What bfloat16 activations cost a quantized model's outputs, measured with onnxruntime: --dtype auto's evidence
(passes/settle_dtype.py, docs/design.md §6.40).

A bf16 program rounds every float value it stores to bfloat16: the inputs it uploads, each op's result.  In a
float model that is a relative error of at most 2^-9 per value, which networks pass on without amplifying it
much (tt-metal's convention: bf16 programs are judged at PCC 0.99).  In a model that quantizes its activations
(QuantizeLinear between its ops, as onnxruntime's static quantizer writes them) it is not: a value rounded
to bf16 lands on another integer code wherever it lay near the middle of two, and a moved code is a whole
quantization step, which the next quantizers pass on and move more codes.  How far that goes depends on the
network: ViT-B/16 QDQ loses 0.019 of its pooler output's PCC to it, BERT-base QDQ 0.003, their reduced
versions 0.0002.  So it is measured: onnxruntime runs the graph twice on verify's seeded inputs
(weight_gain.onnxruntime_model), as it is, and with every float value a top-level node writes (and every float
graph input) cast to bfloat16 and back to its own type before anything reads it: float32, and float16 and
float64 as well, which a bf16 program computes in bfloat16 too (assign-layouts; a float16 value loses 3 of its 10
mantissa bits, and a float16 QDQ model's codes move as a float32 one's do).  The loss is the largest output_loss
over the float outputs (1 - PCC, or verify's closeness for an output of one element), and 1 for an integer
output (a model's codes, a label) that any value differs in: verify compares those exactly.  A Loop, If or Scan
that fold-constants left (a data-dependent exit) runs in a host region, in float32 as onnxruntime does: the values
its body computes stay unrounded, what it reads from outside is rounded (the region gets it from the device), and
its quantizers count (quantized_activations).

What it does not model: the program's other roundings (bfloat8_b weights, the device's unary approximations),
whose share of the budget other rules keep (weight_dtype.py, §6.30).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx_graphsurgeon as gs
from onnx import TensorProto

from onnx2ttnn import limits
from onnx2ttnn.lowering.weight_gain import CAST_BFLOAT16, default_opset, onnxruntime_model, output_loss

QUANTIZERS = ("QuantizeLinear", "DynamicQuantizeLinear")  # the nodes that make activations integer codes
# the float types a bf16 program computes in bfloat16
ROUNDED_TYPES = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE)
MIN_OPSET = 9  # before Cast takes bfloat16 (opset 13) the rounding is spelt in ops of opset 9 (_emulated)


@dataclass(frozen=True)
class Bf16Loss:
    """The loss bf16 activations cost the worst float `output` (0 when nothing was measured: `why` says why)."""

    loss: float = 0.0
    output: str = ""
    values: int = 0  # how many values the rounded run rounded
    why: str = ""
    integer: bool = False  # `output` is an integer output (its loss: 1 when any value moved, else 0)


def quantized_activations(graph: gs.Graph) -> int:
    """How many of `graph`'s quantizers quantize a computed value (after fold-dequantize, a QuantizeLinear of a
    constant is gone; one of an input or a node's result is an activation's), those in the bodies of the Loop,
    If and Scan nodes that stay (a data-dependent exit: a host region reading values the device rounded) too."""
    count = 0
    for node in graph.nodes:
        count += node.op in QUANTIZERS and bool(node.inputs) and not isinstance(node.inputs[0], gs.Constant)
        count += sum(quantized_activations(body) for body in _bodies(node))
    return count


def _bodies(node: gs.Node) -> list:
    """The subgraphs a gs node holds (a Loop's or Scan's body, an If's branches)."""
    found = []
    for value in node.attrs.values():
        found += [value] if isinstance(value, gs.Graph) else \
            [v for v in value if isinstance(v, gs.Graph)] if isinstance(value, (list, tuple)) else []
    return found


def measure(graph: gs.Graph, index_rows: dict) -> Bf16Loss:
    """The largest loss of `graph`'s float outputs when every float value is rounded to bfloat16 (module
    docstring).  A graph onnxruntime refuses, or cannot run in limits.MEASURE_SECONDS
    (each run), or of an opset before Cast took bfloat16, measures nothing."""
    from onnx2ttnn import ort

    model, handed, feeds = onnxruntime_model(graph, index_rows)
    if default_opset(model) < MIN_OPSET:
        return Bf16Loss(why=f"opset {default_opset(model)}: Sign, which the rounding needs, is from opset {MIN_OPSET}")
    names = [o.name for o in model.graph.output]
    try:
        session = ort.session(model.SerializeToString(), initializers=handed)
        exact = [np.asarray(a) for a in ort.run(session, names, feeds, limits.MEASURE_SECONDS)]
        del session
        rounded = _round_values(model.graph, default_opset(model) < CAST_BFLOAT16)
        session = ort.session(model.SerializeToString(), initializers=handed)
        approx = [np.asarray(a) for a in ort.run(session, names, feeds, limits.MEASURE_SECONDS)]
    except Exception as exc:  # noqa: BLE001 - onnxruntime refuses the graph: nothing measured, said why
        return Bf16Loss(why=f"onnxruntime: {str(exc).splitlines()[0][:120]}")
    losses = [(output_loss(a, b) if a.dtype.kind == "f" else _integer_loss(a, b), a.dtype.kind != "f", name)
              for name, a, b in zip(names, exact, approx) if a.dtype.kind in "fiub"]
    loss, integer, output = max(losses, default=(0.0, False, ""))
    return Bf16Loss(loss, output, rounded, integer=integer)


def _round_values(graph, emulate: bool = False) -> int:
    """Every float value of `graph` (an onnx GraphProto, changed in place; ROUNDED_TYPES) that a top-level node
    writes, and every float graph input, rounded to bfloat16 before its readers see it: a Cast to bfloat16 and one
    back to its type, the readers renamed to the second's output (a Loop, If or Scan body's reads of it too:
    _rename_captures).  Graph outputs stay as computed (the program's are read back as they are).  `emulate` (a
    model of an opset before Cast took bfloat16): the same rounding in float32 ops (_emulated).  Returns how many
    values it rounded."""
    from onnx import helper

    floats = {v.name: v.type.tensor_type.elem_type for v in list(graph.value_info) + list(graph.input)
              if v.type.tensor_type.elem_type in ROUNDED_TYPES}
    outputs = {o.name for o in graph.output}
    initializers = {i.name for i in graph.initializer}
    taken = set(floats) | outputs | {o for node in graph.node for o in node.output} | {i.name for i in graph.input}
    renamed, nodes = {}, []

    def fresh(name: str) -> str:
        new = name
        while new in taken:
            new += "_bf16"
        taken.add(new)
        return new

    def rounded(name: str) -> None:
        if name not in floats or name in outputs or name in initializers or not name:
            return
        narrow, back = fresh(name + "_bf16"), fresh(name + "_bf16_back")
        if emulate:  # in float32 ops: a float16 or float64 value cast to float32 first and back after
            wide = floats[name] != TensorProto.FLOAT
            source, kept = (fresh(name + "_f32"), fresh(name + "_f32_bf16")) if wide else (name, back)
            if wide:
                nodes.append(helper.make_node("Cast", [name], [source], to=TensorProto.FLOAT, name=source))
            nodes.extend(_emulated(graph, source, kept, fresh))
            if wide:
                nodes.append(helper.make_node("Cast", [kept], [back], to=floats[name], name=back))
        else:
            nodes.append(helper.make_node("Cast", [name], [narrow], to=TensorProto.BFLOAT16, name=narrow))
            nodes.append(helper.make_node("Cast", [narrow], [back], to=floats[name], name=back))
        renamed[name] = back

    for tensor in graph.input:
        rounded(tensor.name)
    for node in graph.node:
        node.input[:] = [renamed.get(name, name) for name in node.input]
        _rename_captures(node, renamed)
        nodes.append(node)
        for name in node.output:
            rounded(name)
    del graph.node[:]
    graph.node.extend(nodes)
    return len(renamed)


def _rename_captures(node, renamed: dict) -> None:
    """Inside the subgraphs of an onnx `node`, reads of an outer value `renamed` holds read its rounded copy: a
    host region's Loop gets what it reads from outside from the device, in bfloat16 (names its body defines
    itself are its own)."""
    from onnx import AttributeProto

    for attribute in node.attribute:
        bodies = [attribute.g] if attribute.type == AttributeProto.GRAPH else \
            list(attribute.graphs) if attribute.type == AttributeProto.GRAPHS else []
        for body in bodies:
            local = {v.name for v in list(body.input) + list(body.initializer)} | \
                {o for inner in body.node for o in inner.output}
            outer = {name: new for name, new in renamed.items() if name not in local}
            for inner in body.node:
                inner.input[:] = [outer.get(name, name) for name in inner.input]
                _rename_captures(inner, outer)


def _emulated(graph, name: str, out: str, fresh) -> list:
    """Nodes writing `name` rounded to bfloat16's 7 mantissa bits (half away from zero) into `out`, in ops of
    opset 9 (operand_truncation.py's formula; its constants added to `graph`'s initializers)."""
    from onnx import helper, numpy_helper

    nodes = []

    def const(value: float) -> str:
        key = fresh(f"{name}_bf16_c")
        graph.initializer.append(numpy_helper.from_array(np.array(value, np.float32), key))
        return key

    def op(kind: str, *inputs: str, output: str = "") -> str:
        result = output or fresh(f"{name}_bf16_{kind.lower()}")
        nodes.append(helper.make_node(kind, list(inputs), [result], name=result))
        return result

    magnitude = op("Abs", name)
    exponent = op("Floor", op("Mul", op("Log", op("Max", magnitude, const(1e-30))), const(1 / np.log(2))))
    step = op("Pow", const(2.0), op("Sub", exponent, const(7.0)))
    kept = op("Mul", op("Floor", op("Add", op("Div", magnitude, step), const(0.5))), step)
    op("Mul", op("Sign", name), kept, output=out)
    return nodes


def _integer_loss(exact: np.ndarray, approx: np.ndarray) -> float:
    """An integer output's loss: 0 when every value is onnxruntime's, else 1 (verify compares it exactly)."""
    return 0.0 if np.array_equal(exact, approx) else 1.0
