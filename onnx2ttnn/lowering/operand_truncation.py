"""The activation a block-float weight's matmul or conv reads, as its math fidelity reads it, for the gain
measurement (weight_gain.py): the other half of what choosing the format does to the program's numbers.

The fidelity follows the least precise operand format (ir/kernel_config.choose: bfloat8_b HiFi2, bfloat4_b
LoFi), and both read 6 of a bfloat16 activation's 7 mantissa bits (CONSUMED_BITS: SrcB, where a matmul or conv
puts its activation; the simulator truncates the rest toward zero, sim/_fidelity.py).  So a weight that goes
bfloat8_b costs its call's output both its own rounding error and its input's dropped bit: a bias toward zero
of about 2^-8 of each value, which a deep conv stack compounds.  PP-OCRv6's recognizer, in float32 on verify's
inputs: its weights and conv biases rounded lose 0.0086 of output PCC, with the activations of the same 38 calls
truncated 0.0137; the simulated program 0.0154 (docs/design.md §6.43).
The rounded run of the measurement reads each such node's activation (input 0) through ONNX ops that round it to
bfloat16's 7 bits (half away from zero: bfloat16's ties are measure-zero here) and then truncate it to the bits
the fidelity reads:
  e = floor(log2 max(|x|, tiny)); a7 = floor(|x| / 2^(e-7) + 1/2) * 2^(e-7);
  e' = floor(log2 max(a7, tiny)); x' = sign(x) * floor(a7 / 2^(e'-bits)) * 2^(e'-bits).
(A log2 off by one for a value within 1e-7 of a power of two rounds it at one bit less: no measurable effect.)
A forced --math-fidelity sets the bits for every call (HiFi4 and HiFi3 read all 7: nothing is inserted).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from onnx2ttnn.ir.kernel_config import CONSUMED_BITS, FIDELITY_OF_FORMAT

ACTIVATION_BITS = 7  # a bfloat16 activation's explicit mantissa bits
READERS = frozenset({"Conv", "MatMul", "Gemm"})  # the measured graph's nodes that read a weight as input 1
MIN_OPSET = 9  # Sign's first version


def activation_bits(fmt: str, forced: Optional[str] = None) -> int:
    """The mantissa bits of a bfloat16 activation that a call with a `fmt` weight reads (7: all of them);
    `forced`: the fidelity --math-fidelity gives every call, or None."""
    return min(ACTIVATION_BITS, CONSUMED_BITS[forced or FIDELITY_OF_FORMAT[fmt]][1])


def truncate_operands(graph, bits: dict[str, int]) -> int:
    """Insert into `graph` (an onnx GraphProto, changed in place) before each READERS node whose input 1 is named
    in `bits` (weight -> the bits its call reads) the ops reading its input 0 as the device does; returns how
    many nodes were given them."""
    from onnx import helper, numpy_helper

    taken = {i.name for i in graph.input} | {i.name for i in graph.initializer}
    taken |= {o for node in graph.node for o in node.output}
    nodes, constants = [], {}

    def fresh(base: str) -> str:
        name, k = base, 0
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        return name

    def constant(value: float) -> str:
        if value not in constants:
            constants[value] = fresh(f"operand_truncation_c{len(constants)}")
            graph.initializer.append(numpy_helper.from_array(np.array(value, np.float32), constants[value]))
        return constants[value]

    def op(kind: str, *inputs: str) -> str:
        out = fresh(f"operand_truncation_{kind.lower()}")
        nodes.append(helper.make_node(kind, list(inputs), [out], name=out))
        return out

    def rounded(magnitude: str, keep: int, half: bool) -> str:
        """`magnitude` (>= 0) with `keep` mantissa bits, rounded half up or truncated."""
        exponent = op("Floor", op("Mul", op("Log", op("Max", magnitude, constant(1e-30))), constant(1 / np.log(2))))
        step = op("Pow", constant(2.0), op("Sub", exponent, constant(float(keep))))
        scaled = op("Div", magnitude, step)
        return op("Mul", op("Floor", op("Add", scaled, constant(0.5)) if half else scaled), step)

    count = 0
    for node in graph.node:
        kept = _bits(node, bits)
        if kept < ACTIVATION_BITS:
            x = node.input[0]
            magnitude = rounded(rounded(op("Abs", x), ACTIVATION_BITS, True), kept, False)
            node.input[0] = op("Mul", op("Sign", x), magnitude)
            count += 1
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    return count


def _bits(node, bits: dict[str, int]) -> int:
    """The bits of its activation `node` reads (ACTIVATION_BITS: all, or not a weight's reader)."""
    if node.op_type not in READERS or len(node.input) < 2:
        return ACTIVATION_BITS
    return bits.get(node.input[1], ACTIVATION_BITS)
