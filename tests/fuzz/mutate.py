"""The mutation fuzzer: small random edits of a seed model that keep it checker-valid.

`mutate(model, rng)` applies one to three edits (attributes, initializer shapes, values and types, graph
input and output types and shapes, op types, the wiring, the opset) and returns a copy that
`onnx.checker.check_model` accepts, or None when `MAX_TRIES` attempts all broke the checker.  Nothing
makes a mutant semantically valid: most are models onnxruntime refuses, which convert must refuse too.
"""
from __future__ import annotations

import random
from typing import Callable, Optional

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MAX_TRIES = 20
INTS = (-3, -2, -1, 0, 1, 2, 3, 4, 5, 7, 16, 64, 1000, 2**31, -2**31, 2**40)
FLOATS = (0.0, -1.0, 1e-12, 0.5, 2.0, 1e9, -1e9, float("nan"), float("inf"))
ELEM_TYPES = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT64, TensorProto.INT32,
              TensorProto.BOOL, TensorProto.UINT8, TensorProto.INT8, TensorProto.BFLOAT16)
# op types by how they can stand in for each other (same inputs and outputs)
UNARY = ("Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Softmax", "LogSoftmax",
         "Identity", "Flatten", "Erf", "Floor", "Ceil", "Elu", "LeakyRelu", "Softplus", "HardSigmoid", "Sign",
         "GlobalAveragePool", "GlobalMaxPool", "Not", "IsNaN", "Transpose", "Squeeze", "Unsqueeze", "Dropout",
         "Gelu", "Mish", "HardSwish", "MaxPool", "AveragePool", "ReduceMean", "ReduceSum", "ReduceMax", "ArgMax")
BINARY = ("Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "MatMul", "PRelu", "Equal", "Greater", "Less", "And",
          "Or", "Mod", "Reshape", "Expand", "Tile", "Gather", "Concat", "Sum", "Mean", "Conv", "Unsqueeze")
TERNARY = ("Gemm", "Conv", "ConvTranspose", "Where", "Clip", "LayerNormalization", "InstanceNormalization",
           "Slice", "Pad", "Resize", "Concat", "Sum")


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return out


def _attr_int(m, rng: random.Random) -> bool:
    cands = [(n, a) for n in m.graph.node for a in n.attribute
             if a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS)]
    if not cands:
        return False
    node, attr = rng.choice(cands)
    if attr.type == onnx.AttributeProto.INT:
        attr.i = rng.choice(INTS)
    elif attr.ints and rng.random() < 0.6:
        attr.ints[rng.randrange(len(attr.ints))] = rng.choice(INTS[:12])
    elif attr.ints and rng.random() < 0.5:
        del attr.ints[rng.randrange(len(attr.ints))]
    else:
        attr.ints.append(rng.choice(INTS[:12]))
    return True


def _attr_float(m, rng) -> bool:
    cands = [a for n in m.graph.node for a in n.attribute if a.type == onnx.AttributeProto.FLOAT]
    if not cands:
        return False
    rng.choice(cands).f = rng.choice(FLOATS)
    return True


def _attr_string(m, rng) -> bool:
    cands = [a for n in m.graph.node for a in n.attribute if a.type == onnx.AttributeProto.STRING]
    if not cands:
        return False
    rng.choice(cands).s = rng.choice([b"", b"NOTSET", b"SAME_UPPER", b"VALID", b"linear", b"nearest", b"cubic",
                                      b"reflect", b"edge", b"wrap", b"half_pixel", b"align_corners", b"DCR",
                                      b"CRD", b"tanh", b"none", b"garbage"])
    return True


def _attr_drop(m, rng) -> bool:
    nodes = [n for n in m.graph.node if n.attribute]
    if not nodes:
        return False
    node = rng.choice(nodes)
    del node.attribute[rng.randrange(len(node.attribute))]
    return True


def _attr_add(m, rng) -> bool:
    """An attribute of the node's schema it does not set, with a random value of the right type."""
    node = rng.choice(list(m.graph.node))
    try:
        schema = onnx.defs.get_schema(node.op_type, _opset(m), node.domain)
    except Exception:
        return False
    have = {a.name for a in node.attribute}
    missing = [a for a in schema.attributes.values() if a.name not in have]
    if not missing:
        return False
    spec = rng.choice(missing)
    kind = spec.type
    if kind == onnx.AttributeProto.INT:
        value = rng.choice(INTS[:12])
    elif kind == onnx.AttributeProto.INTS:
        value = [rng.choice(INTS[:10]) for _ in range(rng.randint(0, 4))]
    elif kind == onnx.AttributeProto.FLOAT:
        value = rng.choice(FLOATS)
    elif kind == onnx.AttributeProto.FLOATS:
        value = [rng.choice(FLOATS[:6]) for _ in range(rng.randint(0, 4))]
    elif kind == onnx.AttributeProto.STRING:
        value = rng.choice(["NOTSET", "SAME_LOWER", "VALID", "linear", "nearest", "x"])
    else:
        return False
    node.attribute.append(helper.make_attribute(spec.name, value, attr_type=kind))
    return True


def _random_shape(rng, like: tuple) -> tuple:
    choice = rng.random()
    dims = list(like)
    if choice < 0.3 and dims:
        dims[rng.randrange(len(dims))] = rng.choice([1, 2, 3, 5, 8])
    elif choice < 0.5 and dims:
        del dims[rng.randrange(len(dims))]
    elif choice < 0.7:
        dims.insert(rng.randrange(len(dims) + 1), rng.choice([1, 2, 3]))
    elif choice < 0.85:
        dims = dims[::-1]
    else:
        dims = [rng.choice([0, 1, 2, 4]) for _ in range(rng.randint(0, 4))]
    return tuple(dims)


def _init_shape(m, rng) -> bool:
    if not m.graph.initializer:
        return False
    index = rng.randrange(len(m.graph.initializer))
    old = m.graph.initializer[index]
    array = numpy_helper.to_array(old)
    shape = _random_shape(rng, array.shape)
    if int(np.prod(shape)) > 1 << 16:
        return False
    flat = np.resize(array.reshape(-1), int(np.prod(shape))) if array.size else np.zeros(int(np.prod(shape)),
                                                                                       array.dtype)
    m.graph.initializer[index].CopyFrom(numpy_helper.from_array(flat.reshape(shape).astype(array.dtype), old.name))
    return True


def _init_values(m, rng) -> bool:
    if not m.graph.initializer:
        return False
    index = rng.randrange(len(m.graph.initializer))
    old = m.graph.initializer[index]
    array = numpy_helper.to_array(old).copy()
    if array.size == 0:
        return False
    if array.dtype.kind in "iu":
        array.flat[rng.randrange(array.size)] = rng.choice([-5, -1, 0, 1, 2, 3, 9, 100, 2**30])
    elif array.dtype.kind == "f":
        array.flat[rng.randrange(array.size)] = rng.choice(FLOATS)
    elif array.dtype.kind == "b":
        array = ~array
    else:
        return False
    with np.errstate(all="ignore"):
        m.graph.initializer[index].CopyFrom(numpy_helper.from_array(array.astype(array.dtype), old.name))
    return True


def _init_dtype(m, rng) -> bool:
    if not m.graph.initializer:
        return False
    index = rng.randrange(len(m.graph.initializer))
    old = m.graph.initializer[index]
    array = numpy_helper.to_array(old)
    target = rng.choice(ELEM_TYPES)
    with np.errstate(all="ignore"):
        new = array.astype(helper.tensor_dtype_to_np_dtype(target)) if target != TensorProto.BFLOAT16 else None
    if new is None:
        return False
    m.graph.initializer[index].CopyFrom(numpy_helper.from_array(new, old.name))
    return True


def _value_info(m, rng, where) -> Optional[onnx.ValueInfoProto]:
    initializers = {t.name for t in m.graph.initializer}
    cands = [v for v in where if v.name not in initializers and v.type.HasField("tensor_type")]
    return rng.choice(cands) if cands else None


def _io_shape(m, rng) -> bool:
    vi = _value_info(m, rng, list(m.graph.input) + list(m.graph.output))
    if vi is None:
        return False
    old = tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
    shape = _random_shape(rng, old)
    if int(np.prod(shape)) > 1 << 16:
        return False
    vi.type.tensor_type.shape.Clear()
    for d in shape:
        vi.type.tensor_type.shape.dim.add().dim_value = d
    return True


def _io_type(m, rng) -> bool:
    vi = _value_info(m, rng, list(m.graph.input) + list(m.graph.output))
    if vi is None:
        return False
    vi.type.tensor_type.elem_type = rng.choice(ELEM_TYPES)
    return True


def _op_swap(m, rng) -> bool:
    node = rng.choice(list(m.graph.node))
    table = {1: UNARY, 2: BINARY}.get(len(node.input), TERNARY)
    node.op_type = rng.choice(table)
    if rng.random() < 0.7:  # attributes of the old op would mostly just break the checker
        del node.attribute[:]
    return True


def _available(m, before: int) -> list[str]:
    names = [i.name for i in m.graph.input] + [t.name for t in m.graph.initializer]
    for node in list(m.graph.node)[:before]:
        names += [o for o in node.output if o]
    return names


def _rewire(m, rng) -> bool:
    index = rng.randrange(len(m.graph.node))
    node = m.graph.node[index]
    if not node.input:
        return False
    names = _available(m, index)
    if not names:
        return False
    node.input[rng.randrange(len(node.input))] = rng.choice(names)
    return True


def _drop_input(m, rng) -> bool:
    nodes = [n for n in m.graph.node if len(n.input) > 1]
    if not nodes:
        return False
    del rng.choice(nodes).input[-1]
    return True


def _opset_change(m, rng) -> bool:
    for entry in m.opset_import:
        if entry.domain in ("", "ai.onnx"):
            entry.version = rng.choice([1, 6, 7, 9, 10, 11, 12, 13, 14, 17, 18, 19, 21, 23, 26, 28, 29])
            return True
    return False


def _insert_unary(m, rng) -> bool:
    index = rng.randrange(len(m.graph.node))
    node = m.graph.node[index]
    if not node.input or not node.input[0]:
        return False
    op = rng.choice(UNARY[:20])
    fresh = f"fuzz_{len(m.graph.node)}_{rng.randrange(1 << 30)}"
    new = helper.make_node(op, [node.input[0]], [fresh], name=fresh)
    node.input[0] = fresh
    m.graph.node.insert(index, new)
    return True


def _bypass(m, rng) -> bool:
    """A node removed, its consumers reading its first input instead."""
    if len(m.graph.node) < 2:
        return False
    index = rng.randrange(len(m.graph.node))
    node = m.graph.node[index]
    if not node.input or not node.input[0] or not node.output:
        return False
    source, gone = node.input[0], node.output[0]
    for other in m.graph.node:
        for i, name in enumerate(other.input):
            if name == gone:
                other.input[i] = source
    for out in m.graph.output:
        if out.name == gone:
            return False
    del m.graph.node[index]
    return True


MUTATIONS: dict[str, Callable] = {
    "attr_int": _attr_int, "attr_float": _attr_float, "attr_string": _attr_string, "attr_drop": _attr_drop,
    "attr_add": _attr_add, "init_shape": _init_shape, "init_values": _init_values, "init_dtype": _init_dtype,
    "io_shape": _io_shape, "io_type": _io_type, "op_swap": _op_swap, "rewire": _rewire,
    "drop_input": _drop_input, "opset": _opset_change, "insert_unary": _insert_unary, "bypass": _bypass,
}


def _opset(m) -> int:
    return next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 1)


def mutate(model: onnx.ModelProto, rng: random.Random) -> tuple[Optional[onnx.ModelProto], list[str]]:
    """(a checker-valid mutant of `model`, the edits made) or (None, []) when every try broke the checker."""
    for _ in range(MAX_TRIES):
        mutant = _copy(model)
        done = []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            name = rng.choice(sorted(MUTATIONS))
            try:
                applied = bool(mutant.graph.node) and MUTATIONS[name](mutant, rng)
            except (ValueError, TypeError, IndexError, OverflowError):  # an edit that cannot apply here
                applied = False
            if applied:
                done.append(name)
        if not done:
            continue
        try:
            onnx.checker.check_model(mutant)
        except Exception:
            continue
        return mutant, done
    return None, []
