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
graph input) cast to bfloat16 and back to float32 before anything reads it.  The loss is the largest
output_loss over the float outputs (1 - PCC, or verify's closeness for an output of one element), and 1 for an
integer output (a model's codes, a label) that any value differs in: verify compares those exactly.

What it does not model: the program's other roundings (bfloat8_b weights, the device's unary approximations),
whose share of the budget other rules keep (weight_dtype.py, §6.30); values a Loop or If body reads from outside
are read unrounded.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn import limits
from onnx2ttnn.lowering.weight_gain import CAST_BFLOAT16, default_opset, onnxruntime_model, output_loss

QUANTIZERS = ("QuantizeLinear", "DynamicQuantizeLinear")  # the nodes that make activations integer codes
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
    constant is gone; one of an input or a node's result is an activation's)."""
    return sum(1 for node in graph.nodes
               if node.op in QUANTIZERS and node.inputs and not isinstance(node.inputs[0], gs.Constant))


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
    """Every float32 value of `graph` (an onnx GraphProto, changed in place) that a top-level node writes, and
    every float32 graph input, rounded to bfloat16 before its readers see it: a Cast to bfloat16 and one back,
    the readers renamed to the second's output.  Graph outputs stay as computed (the program's are read back
    as they are).  `emulate` (a model of an opset before Cast took bfloat16): the same rounding in float32 ops
    (_emulated).  Returns how many values it rounded."""
    from onnx import TensorProto, helper

    floats = {v.name for v in list(graph.value_info) + list(graph.input)
              if v.type.tensor_type.elem_type == TensorProto.FLOAT}
    outputs = {o.name for o in graph.output}
    initializers = {i.name for i in graph.initializer}
    taken = floats | outputs | {o for node in graph.node for o in node.output} | {i.name for i in graph.input}
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
        narrow, back = fresh(name + "_bf16"), fresh(name + "_bf16_f32")
        if emulate:
            nodes.extend(_emulated(graph, name, back, fresh))
        else:
            nodes.append(helper.make_node("Cast", [name], [narrow], to=TensorProto.BFLOAT16, name=narrow))
            nodes.append(helper.make_node("Cast", [narrow], [back], to=TensorProto.FLOAT, name=back))
        renamed[name] = back

    for tensor in graph.input:
        rounded(tensor.name)
    for node in graph.node:
        node.input[:] = [renamed.get(name, name) for name in node.input]
        nodes.append(node)
        for name in node.output:
            rounded(name)
    del graph.node[:]
    graph.node.extend(nodes)
    return len(renamed)


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
