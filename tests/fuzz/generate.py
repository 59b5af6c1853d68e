"""The graph generator: small random models over the claimed ops, valid by construction.

`generate(rng)` builds a graph of one or two float inputs and 2 to MAX_NODES steps.  Each step picks a recipe
(here, and in tests/fuzz/generate_ops.py: the quantize ops, LSTM/GRU/RNN, If/Loop/Scan, a few host-fallback
ops; one claimed op, sometimes behind a few nodes that bring its input into the op's domain, e.g. Log of
|x| + 0.5) with random attributes and constant operands, and keeps it only when strict ONNX shape inference
accepts the graph so far, so every generated model is checker-valid and its shapes are consistent.  The
outputs are the last value and sometimes another one.  A generated model that onnxruntime runs must
convert and verify, or be refused cleanly (an op variant onnx2ttnn does not claim).
"""
from __future__ import annotations

import random
from typing import Optional

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.fuzz import generate_ops

MAX_NODES = 6
OPSETS = (13, 17, 18, 21, 23)
F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


class Builder:
    """A graph under construction: its nodes, constants, inputs and the typed, shaped values built so far."""

    def __init__(self, rng: random.Random, opset: int) -> None:
        self.rng, self.opset = rng, opset
        self.nodes: list = []
        self.inits: list = []
        self.inputs: list = []
        self.values: dict[str, tuple[int, tuple]] = {}  # name -> (elem type, shape)
        self.count = 0

    def fresh(self, stem: str = "t") -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def add_input(self, shape: tuple) -> str:
        name = self.fresh("in")
        self.inputs.append(helper.make_tensor_value_info(name, F, list(shape)))
        self.values[name] = (F, tuple(shape))
        return name

    def const(self, array, dtype=None) -> str:
        array = np.asarray(array, dtype=dtype)
        name = self.fresh("c")
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def weights(self, shape) -> str:
        return self.const(self.rng_np().standard_normal(shape).astype(np.float32) * 0.5)

    def rng_np(self) -> np.random.Generator:
        return np.random.default_rng(self.rng.randrange(1 << 30))

    def node(self, op: str, inputs: list, outputs: int = 1, **attrs) -> list[str]:
        names = [self.fresh() for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=self.fresh(op.lower() + "_"), **attrs))
        return names

    def pick(self, elem: int = F, rank: Optional[tuple] = None) -> Optional[str]:
        cands = [n for n, (e, s) in self.values.items() if e == elem and (rank is None or len(s) in rank)]
        return self.rng.choice(cands) if cands else None

    def shape(self, name: str) -> tuple:
        return self.values[name][1]

    def model(self, outputs: list[str]) -> onnx.ModelProto:
        outs = [helper.make_tensor_value_info(n, self.values[n][0], list(self.values[n][1])) for n in outputs]
        graph = helper.make_graph(self.nodes, "fuzz", self.inputs, outs, initializer=self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8 if self.opset < 21 else 10
        return model


# ---- helpers that bring a value into an op's domain ----------------------------------------------------------
def positive(b: Builder, x: str) -> str:
    return b.node("Add", [b.node("Abs", [x])[0], b.const(np.float32(0.5))])[0]


def unit(b: Builder, x: str) -> str:
    return b.node("Mul", [b.node("Tanh", [x])[0], b.const(np.float32(0.9))])[0]


def _axis(b: Builder, rank: int) -> int:
    return b.rng.randrange(-rank, rank) if rank else 0


def _broadcastable(b: Builder, shape: tuple) -> tuple:
    """A shape that broadcasts with `shape`: a suffix of it with some dims set to 1."""
    rng = b.rng
    suffix = list(shape[rng.randrange(len(shape) + 1):]) if shape else []
    return tuple(1 if rng.random() < 0.3 else d for d in suffix)


# ---- recipes: each adds nodes consuming existing values, or returns False -------------------------------------
UNARY = ["Abs", "Neg", "Relu", "Sigmoid", "Tanh", "Ceil", "Floor", "Sign", "Sin", "Cos", "Atan", "Sinh", "Cosh",
         "Asinh", "Erf", "Softsign", "Softplus", "HardSwish", "Mish", "Identity", "Exp", "Round"]
DOMAIN_UNARY = {"Log": positive, "Sqrt": positive, "Reciprocal": positive, "Acos": unit, "Asin": unit,
                "Atanh": unit, "Acosh": lambda b, x: b.node("Add", [positive(b, x), b.const(np.float32(1.0))])[0]}


def r_unary(b: Builder) -> bool:
    x = b.pick()
    op = b.rng.choice(UNARY + list(DOMAIN_UNARY))
    if op in DOMAIN_UNARY:
        x = DOMAIN_UNARY[op](b, x)
    b.node(op, [x])
    return True


def r_activation(b: Builder) -> bool:
    x, rng = b.pick(), b.rng
    op, attrs = rng.choice([
        ("Elu", {"alpha": rng.choice([0.5, 1.0, 2.0])}), ("LeakyRelu", {"alpha": rng.choice([0.01, 0.2, 1.5])}),
        ("Selu", {}), ("Celu", {"alpha": rng.choice([0.5, 1.0, 2.0])}),
        ("HardSigmoid", {"alpha": rng.choice([0.2, 1 / 6, 0.5]), "beta": rng.choice([0.5, 0.1])}),
        ("ThresholdedRelu", {"alpha": rng.choice([0.0, 0.5, 1.0])}),
        ("Shrink", {"lambd": rng.choice([0.5, 1.0]), "bias": rng.choice([0.0, 0.5, 0.2])}),
        ("Gelu", {"approximate": rng.choice(["none", "tanh"])}) if b.opset >= 20 else ("Relu", {}),
        ("Softmax", {"axis": _axis(b, len(b.shape(x)))}), ("LogSoftmax", {"axis": _axis(b, len(b.shape(x)))}),
        ("Dropout", {}),
    ])
    b.node(op, [x], **attrs)
    return True


def r_clip(b: Builder) -> bool:
    x, rng = b.pick(), b.rng
    low = b.const(np.float32(rng.choice([-1.0, -0.5, 0.0]))) if rng.random() < 0.8 else ""
    high = b.const(np.float32(rng.choice([0.5, 1.0, 6.0]))) if rng.random() < 0.8 else ""
    inputs = [x, low, high]
    while inputs and not inputs[-1]:
        inputs.pop()
    b.node("Clip", inputs)
    return True


def _second(b: Builder, x: str) -> str:
    """Another operand that broadcasts with x: an existing value of the same shape or a constant."""
    same = [n for n, (e, s) in b.values.items() if e == F and s == b.shape(x) and n != x]
    if same and b.rng.random() < 0.5:
        return b.rng.choice(same)
    return b.weights(_broadcastable(b, b.shape(x)))


def r_binary(b: Builder) -> bool:
    x, rng = b.pick(), b.rng
    op = rng.choice(["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mean", "Sum", "PRelu", "Mod"])
    y = _second(b, x)
    if rng.random() < 0.3 and op != "PRelu":
        x, y = y, x
    if op in ("Div", "Mod"):
        y = positive(b, y)
    if op == "Pow":
        x, y = positive(b, x), b.const(np.float32(rng.choice([2.0, 0.5, 3.0, -1.0])))
    if op == "PRelu":
        y = b.weights(_broadcastable(b, b.shape(x)))
    shaped = x if x in b.values else y
    attrs = {"fmod": 1} if op == "Mod" else {}
    inputs = [x, y] + ([_second(b, shaped)] if op in ("Max", "Min", "Mean", "Sum") and rng.random() < 0.3 else [])
    b.node(op, inputs, **attrs)
    return True


def r_compare(b: Builder) -> bool:
    x = b.pick()
    op = b.rng.choice(["Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "IsNaN", "IsInf"])
    if op in ("IsNaN", "IsInf"):
        b.node(op, [x])
    else:
        b.node(op, [b.node("Round", [x])[0] if op == "Equal" else x, _second(b, x)])
    return True


def r_bool(b: Builder) -> bool:
    c = b.pick(B)
    if c is None:
        return False
    rng = b.rng
    choice = rng.random()
    if choice < 0.4:
        x = b.pick()
        b.node("Where", [c, x, _second(b, x)])
    elif choice < 0.6:
        b.node("Cast", [c], to=F)
    elif choice < 0.8:
        b.node("Not", [c])
    else:
        other = b.pick(B)
        b.node(rng.choice(["And", "Or", "Xor"]), [c, other])
    return True


def r_cast(b: Builder) -> bool:
    x = b.pick()
    to = b.rng.choice([F, B, TensorProto.FLOAT16, TensorProto.DOUBLE])
    y = b.node("Cast", [x], to=to)[0]
    if to != B:
        b.node("Cast", [y], to=F)
    return True


def r_matmul(b: Builder) -> bool:
    x, rng = b.pick(), b.rng
    shape = b.shape(x)
    if not shape:
        return False
    n = rng.choice([1, 3, 8])
    if len(shape) == 2 and rng.random() < 0.5:
        trans_a, trans_b = rng.random() < 0.3, rng.random() < 0.5
        k = shape[0] if trans_a else shape[1]
        rows = shape[1] if trans_a else shape[0]
        w = b.weights((n, k) if trans_b else (k, n))
        inputs = [x, w] + ([b.weights(rng.choice([(n,), (rows, n), (1, n), ()]))] if rng.random() < 0.7 else [])
        b.node("Gemm", inputs, transA=int(trans_a), transB=int(trans_b), alpha=rng.choice([1.0, 0.5]),
               beta=rng.choice([1.0, 2.0]))
        return True
    w = b.weights((shape[-1], n) if rng.random() < 0.8 or len(shape) < 2 else shape[:-2] + (shape[-1], n))
    b.node("MatMul", [x, w])
    return True


REDUCE = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum"]


def r_reduce(b: Builder) -> bool:
    x, rng = b.pick(), b.rng
    rank = len(b.shape(x))
    if rank == 0:
        return False
    op = rng.choice(REDUCE + ["ArgMax", "ArgMin"])
    if op == "ReduceLogSum":
        x = positive(b, x)
    keep = rng.choice([0, 1])
    if op in ("ArgMax", "ArgMin"):
        out = b.node(op, [x], axis=_axis(b, rank), keepdims=keep, select_last_index=rng.choice([0, 1]))[0]
        b.node("Cast", [out], to=F)
        return True
    axes = sorted({_axis(b, rank) % rank for _ in range(rng.randint(1, rank))})
    if rng.random() < 0.5:
        axes = [a - rank for a in axes]
    new_style = b.opset >= 18 or (op == "ReduceSum" and b.opset >= 13)
    if new_style:
        b.node(op, [x, b.const(np.array(axes, np.int64))], keepdims=keep)
    else:
        b.node(op, [x], axes=axes, keepdims=keep)
    return True


def r_norm(b: Builder) -> bool:
    x, rng = b.pick(), b.rng
    shape = b.shape(x)
    rank = len(shape)
    if rank < 2:
        return False
    op = rng.choice(["LayerNormalization", "RMSNormalization", "InstanceNormalization", "GroupNormalization",
                     "BatchNormalization", "LpNormalization", "MeanVarianceNormalization", "LRN"])
    c = shape[1]
    if op == "LayerNormalization" or (op == "RMSNormalization" and b.opset >= 23):
        axis = rng.randrange(-rank, rank)
        norm = shape[axis:] if axis >= 0 else shape[rank + axis:]
        inputs = [x, b.weights(norm)] + ([b.weights(norm)] if op == "LayerNormalization" and rng.random() < 0.7
                                          else [])
        b.node(op, inputs, axis=axis, epsilon=rng.choice([1e-5, 1e-3]))
    elif op == "InstanceNormalization" and rank >= 3:
        b.node(op, [x, b.weights((c,)), b.weights((c,))], epsilon=1e-5)
    elif op == "GroupNormalization" and rank >= 3 and b.opset >= 21:
        groups = rng.choice([g for g in (1, 2, 3, c) if c % g == 0])
        b.node(op, [x, b.weights((c,)), b.weights((c,))], num_groups=groups, epsilon=1e-5)
    elif op == "BatchNormalization":
        var = b.const(np.abs(b.rng_np().standard_normal(c)).astype(np.float32) + 0.5)
        b.node(op, [x, b.weights((c,)), b.weights((c,)), b.weights((c,)), var], epsilon=1e-5)
    elif op == "LpNormalization":
        b.node(op, [x], axis=_axis(b, rank), p=rng.choice([1, 2]))
    elif op == "MeanVarianceNormalization":
        b.node(op, [x], axes=sorted({rng.randrange(rank) for _ in range(2)}))
    elif op == "LRN" and rank == 4:
        b.node(op, [x], size=rng.choice([1, 3, 5]), alpha=1e-4, beta=0.75, bias=1.0)
    else:
        return False
    return True


def r_conv(b: Builder) -> bool:
    x, rng = b.pick(rank=(3, 4)), b.rng
    if x is None:
        return False
    shape = b.shape(x)
    spatial = len(shape) - 2
    c = shape[1]
    transpose = rng.random() < 0.25
    group = rng.choice([g for g in (1, 2, c) if c % g == 0])
    m = rng.choice([1, 2, 4, 6]) * group
    kernel = [rng.choice([1, 2, 3]) for _ in range(spatial)]
    attrs = {"kernel_shape": kernel if rng.random() < 0.7 else None,
             "strides": [rng.choice([1, 2]) for _ in range(spatial)] if rng.random() < 0.5 else None,
             "dilations": [rng.choice([1, 2]) for _ in range(spatial)] if rng.random() < 0.3 else None,
             "group": group}
    if rng.random() < 0.2:
        attrs["auto_pad"] = rng.choice(["SAME_UPPER", "SAME_LOWER", "VALID"])
    elif rng.random() < 0.6:
        attrs["pads"] = [rng.choice([0, 1, 2]) for _ in range(2 * spatial)]
    attrs = {k: v for k, v in attrs.items() if v is not None}
    if transpose:
        w = b.weights((c, m // group) + tuple(kernel))
        if rng.random() < 0.3 and "strides" in attrs:
            attrs["output_padding"] = [rng.choice([0, 1]) if s > 1 else 0 for s in attrs["strides"]]
    else:
        w = b.weights((m, c // group) + tuple(kernel))
    inputs = [x, w] + ([b.weights((m,))] if rng.random() < 0.6 else [])
    b.node("ConvTranspose" if transpose else "Conv", inputs, **attrs)
    return True


def r_pool(b: Builder) -> bool:
    x, rng = b.pick(rank=(3, 4)), b.rng
    if x is None:
        return False
    spatial = len(b.shape(x)) - 2
    op = rng.choice(["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"])
    if op.startswith("Global"):
        b.node(op, [x])
        return True
    attrs = {"kernel_shape": [rng.choice([1, 2, 3]) for _ in range(spatial)],
             "strides": [rng.choice([1, 2]) for _ in range(spatial)], "ceil_mode": rng.choice([0, 1])}
    kernel = attrs["kernel_shape"]
    if rng.random() < 0.5:
        attrs["pads"] = [rng.choice(list(range(k))) if k > 1 else 0 for k in kernel] * 2
    if op == "AveragePool":
        attrs["count_include_pad"] = rng.choice([0, 1])
    elif rng.random() < 0.2:
        attrs["dilations"] = [rng.choice([1, 2]) for _ in range(spatial)]
    b.node(op, [x], **attrs)
    return True


def r_reshape(b: Builder) -> bool:
    x, rng = b.pick(), b.rng
    shape = b.shape(x)
    count = int(np.prod(shape))
    op = rng.choice(["Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze"])
    if op == "Reshape":
        dims = _factor(rng, count)
        if dims and rng.random() < 0.4:
            dims[rng.randrange(len(dims))] = -1
        b.node(op, [x, b.const(np.array(dims, np.int64))])
    elif op == "Flatten":
        b.node(op, [x], axis=rng.randrange(-len(shape), len(shape) + 1) if shape else 0)
    elif op == "Transpose":
        perm = list(range(len(shape)))
        rng.shuffle(perm)
        b.node(op, [x], perm=perm)
    elif op == "Squeeze":
        ones = [i for i, d in enumerate(shape) if d == 1]
        if not ones:
            return False
        axes = sorted(rng.sample(ones, rng.randint(1, len(ones))))
        b.node(op, [x, b.const(np.array(axes, np.int64))])
    else:
        rank = len(shape) + 1
        if rank > 5:
            return False
        b.node(op, [x, b.const(np.array([rng.randrange(-rank, rank)], np.int64))])
    return True


def _factor(rng: random.Random, count: int) -> list[int]:
    """A random list of dims multiplying to `count` (at most 4)."""
    dims = []
    rest = count
    for _ in range(rng.randint(0, 3)):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = rng.choice(divisors)
        dims.append(d)
        rest //= d
    dims.append(rest)
    rng.shuffle(dims)
    return dims


def r_data(b: Builder) -> bool:
    x, rng = b.pick(), b.rng
    shape = b.shape(x)
    rank = len(shape)
    if rank == 0:
        return False
    axis = rng.randrange(rank)
    op = rng.choice(["Concat", "Split", "Slice", "Gather", "GatherElements", "Tile", "Expand", "Pad", "CumSum",
                     "TopK", "Trilu", "GatherND", "ScatterElements", "ScatterND", "Einsum"])
    n = shape[axis]
    npr = b.rng_np()
    if op == "Concat":
        other = list(shape)
        other[axis] = rng.choice([1, 2, 3])
        b.node(op, [x, b.weights(other)] + ([x] if rng.random() < 0.3 else []), axis=axis - rank * rng.choice([0, 1]))
    elif op == "Split":
        if n < 2:
            return False
        parts = rng.randint(2, min(n, 3))
        if b.opset >= 18 and rng.random() < 0.5:
            b.node(op, [x], parts, axis=axis, num_outputs=parts)
        else:
            cuts = sorted(rng.sample(range(1, n), parts - 1))
            sizes = np.diff([0] + cuts + [n]).astype(np.int64)
            b.node(op, [x, b.const(sizes)], parts, axis=axis)
    elif op == "Slice":
        start, end = sorted(rng.sample(range(-n - 1, n + 2), 2))
        step = rng.choice([1, 1, 2, -1, -2])
        if step < 0:
            start, end = end, start
        b.node(op, [x, b.const(np.array([start], np.int64)), b.const(np.array([end], np.int64)),
                    b.const(np.array([axis], np.int64)), b.const(np.array([step], np.int64))])
    elif op == "Gather":
        idx = npr.integers(-n, n, size=rng.choice([(), (2,), (2, 2)])).astype(np.int64)
        b.node(op, [x, b.const(idx)], axis=axis)
    elif op == "GatherElements":
        out = list(shape)
        out[axis] = rng.randint(1, n)
        b.node(op, [x, b.const(npr.integers(-n, n, size=out).astype(np.int64))], axis=axis)
    elif op == "ScatterElements":
        upd = list(shape)
        upd[axis] = 1
        b.node(op, [x, b.const(npr.integers(-n, n, size=upd).astype(np.int64)), b.weights(upd)], axis=axis)
    elif op == "GatherND":
        idx = np.array([[rng.randrange(shape[0])]], np.int64)
        b.node(op, [x, b.const(idx)])
    elif op == "ScatterND":
        row = rng.randrange(shape[0])
        b.node(op, [x, b.const(np.array([[row]], np.int64)), b.weights((1,) + shape[1:])])
    elif op == "Tile":
        b.node(op, [x, b.const(np.array([rng.choice([1, 2, 3]) for _ in shape], np.int64))])
    elif op == "Expand":
        target = [rng.choice([d, d * 2]) if d == 1 else d for d in shape]
        if rng.random() < 0.3:
            target = [2] + target
        b.node(op, [x, b.const(np.array(target, np.int64))])
    elif op == "Pad":
        mode = rng.choice(["constant", "reflect", "edge", "wrap"])
        limit = min(shape) - 1 if mode == "reflect" else 2
        pads = [rng.randint(0, max(limit, 0)) for _ in range(2 * rank)]
        inputs = [x, b.const(np.array(pads, np.int64))]
        if mode == "constant" and rng.random() < 0.5:
            inputs.append(b.const(np.float32(rng.choice([0.0, 1.5]))))
        b.node(op, inputs, mode=mode)
    elif op == "CumSum":
        b.node(op, [x, b.const(np.array(axis - rank * rng.choice([0, 1]), np.int64))],
               exclusive=rng.choice([0, 1]), reverse=rng.choice([0, 1]))
    elif op == "TopK":
        k = rng.randint(1, n)
        vals, idx = b.node(op, [x, b.const(np.array([k], np.int64))], 2, axis=axis,
                           largest=rng.choice([0, 1]), sorted=1)
        b.node("Cast", [idx], to=F)
    elif op == "Trilu":
        if rank < 2:
            return False
        inputs = [x] + ([b.const(np.array(rng.choice([-1, 0, 1, 2]), np.int64))] if rng.random() < 0.6 else [])
        b.node(op, inputs, upper=rng.choice([0, 1]))
    elif op == "Einsum":
        letters = "abcde"[:rank]
        perm = list(letters)
        rng.shuffle(perm)
        keep = "".join(c for c in perm if rng.random() < 0.7)
        b.node(op, [x], equation=f"{letters}->{keep}")
    return True


def r_space(b: Builder) -> bool:
    x, rng = b.pick(rank=(4,)), b.rng
    if x is None:
        return False
    n, c, h, w = b.shape(x)
    op = rng.choice(["DepthToSpace", "SpaceToDepth", "Resize"])
    if op == "DepthToSpace":
        block = rng.choice([k for k in (1, 2, 3) if c % (k * k) == 0])
        b.node(op, [x], blocksize=block, mode=rng.choice(["DCR", "CRD"]))
    elif op == "SpaceToDepth":
        blocks = [k for k in (1, 2, 3) if h % k == 0 and w % k == 0]
        b.node(op, [x], blocksize=rng.choice(blocks))
    else:
        mode = rng.choice(["nearest", "linear", "cubic"])
        attrs = {"mode": mode, "coordinate_transformation_mode": rng.choice(
            ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"])}
        if mode == "nearest":
            attrs["nearest_mode"] = rng.choice(["round_prefer_floor", "floor", "ceil", "round_prefer_ceil"])
        if rng.random() < 0.5:
            scales = np.array([1, 1, rng.choice([0.5, 1.0, 2.0, 3.0]), rng.choice([0.5, 1.0, 2.0, 1.5])], np.float32)
            b.node("Resize", [x, "", b.const(scales)], **attrs)
        else:
            sizes = np.array([n, c, rng.choice([1, 3, 2 * h]), rng.choice([2, 5, 2 * w])], np.int64)
            b.node("Resize", [x, "", "", b.const(sizes)], **attrs)
    return True


RECIPES = [(r_unary, 4), (r_activation, 3), (r_clip, 1), (r_binary, 4), (r_compare, 1), (r_bool, 2), (r_cast, 1),
           (r_matmul, 3), (r_reduce, 2), (r_norm, 2), (r_conv, 3), (r_pool, 2), (r_reshape, 3), (r_data, 4),
           (r_space, 1)] + generate_ops.RECIPES


def _consistent(b: Builder, outputs: list[str]) -> Optional[onnx.ModelProto]:
    """The inferred model when strict inference accepts the graph so far and every value has a static shape."""
    trial = b.model([n for n in outputs if n in b.values])
    try:
        return onnx.shape_inference.infer_shapes(trial, strict_mode=True, data_prop=True, check_type=True)
    except Exception:
        return None


def _record(b: Builder, inferred: onnx.ModelProto, names: list[str]) -> bool:
    known = {vi.name: vi for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for name in names:
        vi = known.get(name)
        if vi is None:
            return False
        tt = vi.type.tensor_type
        dims = tt.shape.dim
        if not tt.HasField("shape") and name in b.values:  # a shape the recipe knows and inference loses (Loop)
            continue
        if not tt.HasField("shape") or any(not d.HasField("dim_value") for d in dims):
            return False
        shape = tuple(d.dim_value for d in dims)
        if any(d <= 0 for d in shape) or int(np.prod(shape)) > 4096:
            return False
        b.values[name] = (tt.elem_type, shape)
    return True


def generate(rng: random.Random) -> onnx.ModelProto:
    """A random checker-valid model of one or two float inputs and a few claimed ops."""
    b = Builder(rng, rng.choice(OPSETS))
    for _ in range(rng.choice([1, 1, 2])):
        rank = rng.choice([1, 2, 3, 4, 4])
        b.add_input(tuple(rng.choice([1, 2, 3, 4, 5, 8]) for _ in range(rank)))
    target = rng.randint(2, MAX_NODES)
    steps = 0
    for _ in range(target * 4):
        if steps >= target:
            break
        saved = (len(b.nodes), len(b.inits), dict(b.values), b.count)
        recipe = rng.choices([r for r, _ in RECIPES], weights=[w for _, w in RECIPES])[0]
        try:
            made = recipe(b)
        except ValueError:  # a recipe that cannot apply to the values at hand (numpy refused the operand)
            made = False
        new = [o for n in b.nodes[saved[0]:] for o in n.output]
        inferred = _consistent(b, [o for o in new if o]) if made else None
        if inferred is None or not _record(b, inferred, [o for n in b.nodes[saved[0]:] for o in n.output]):
            del b.nodes[saved[0]:]
            del b.inits[saved[1]:]
            b.values, b.count = saved[2], saved[3]
            continue
        steps += 1
    produced = [o for n in b.nodes for o in n.output]
    if not produced:
        b.node("Identity", [b.inputs[0].name])
        produced = [b.nodes[-1].output[0]]
        b.values[produced[0]] = b.values[b.inputs[0].name]
    outputs = [produced[-1]]
    if len(produced) > 1 and rng.random() < 0.4:
        outputs.append(rng.choice(produced[:-1]))
    return b.model(outputs)
