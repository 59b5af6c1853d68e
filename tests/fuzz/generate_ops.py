"""More generator recipes (tests/fuzz/generate.py): the quantize ops, the recurrent ops, If/Loop/Scan and a few
host-fallback ops the first recipes never made.

Each recipe takes the generator's Builder (its `pick`, `shape`, `node`, `const`, `weights`, `rng`, `rng_np`,
`opset`), adds nodes that consume existing float values, and returns False when it cannot apply; the generator
keeps a step only when strict ONNX shape inference accepts it.  Values stay small (the generator caps every
tensor at 4,096 elements) and the recipes bring operands into each op's domain (positive scales, in-range
zero points, constant weights), so most cases are models onnxruntime runs.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

F, B, I64, I32 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64, TensorProto.INT32
U8, I8 = TensorProto.UINT8, TensorProto.INT8
_NP = {U8: np.uint8, I8: np.int8, TensorProto.UINT16: np.uint16, TensorProto.INT16: np.int16}


def _scale(b, exact: bool = False) -> float:
    """A quantization scale; `exact`: a power of two.  QLinearMatMul / QLinearConv requantize an integer sum
    times x_scale * w_scale / y_scale: with decimal scales that product is often a tie in real numbers
    (-1175 * 0.1 * 0.05 / 0.25 = -23.5), which onnxruntime (one float multiplier) and a dequantize -> float
    op -> quantize chain round apart by one code.  The fuzz verifies float32 programs, which now multiply as
    onnxruntime does (docs/design.md §6.36), so their weight scales are decimal (seed 16 case 205 was one code
    off with the chain); powers of two, which make every tie exact in float32, remain for the inputs'
    QuantizeLinear."""
    return float(b.rng.choice([1 / 128, 1 / 64, 1 / 32, 1 / 16] if exact else [0.01, 0.02, 0.05, 0.1]))


def _zero_point(b, elem: int):
    low, high = {U8: (0, 255), I8: (-128, 127), TensorProto.UINT16: (0, 65535),
                 TensorProto.INT16: (-32768, 32767)}[elem]
    mid = (low + high + 1) // 2
    return _NP[elem](b.rng.choice([mid, mid, low if elem in (U8, TensorProto.UINT16) else 0, mid + 7]))


def _quantize(b, x: str, elem: int = U8, per_axis: bool = False, exact: bool = False) -> tuple[str, str, str]:
    """QuantizeLinear of x: (the codes, their scale, their zero point)."""
    shape = b.shape(x)
    attrs = {}
    if per_axis and shape and b.opset >= 13:
        axis = b.rng.randrange(-len(shape), len(shape))
        n = shape[axis]
        scale = b.const(np.array([_scale(b) for _ in range(n)], np.float32))
        zero = b.const(np.array([_zero_point(b, elem) for _ in range(n)], _NP[elem]))
        attrs["axis"] = axis
    else:
        scale, zero = b.const(np.float32(_scale(b, exact))), b.const(_zero_point(b, elem))
    return b.node("QuantizeLinear", [x, scale, zero], **attrs)[0], scale, zero


def r_qdq(b) -> bool:
    """QuantizeLinear -> DequantizeLinear (per tensor or per axis), or DynamicQuantizeLinear -> Dequantize."""
    x, rng = b.pick(), b.rng
    if rng.random() < 0.3:
        y, scale, zero = b.node("DynamicQuantizeLinear", [x], 3)
        b.node("DequantizeLinear", [y, scale, zero])
        return True
    types = [U8, I8] + ([TensorProto.UINT16, TensorProto.INT16] if b.opset >= 21 else [])
    elem = rng.choice(types)
    per_axis = rng.random() < 0.4
    y, scale, zero = _quantize(b, x, elem, per_axis)
    axis = [a for a in b.nodes[-1].attribute if a.name == "axis"]
    attrs = {"axis": axis[0].i} if axis else {}
    inputs = [y, scale] + ([zero] if rng.random() < 0.8 else [])  # without one, the zero point is 0
    b.node("DequantizeLinear", inputs, **attrs)
    return True


def _int_weight(b, elem: int, shape: tuple) -> str:
    npr = b.rng_np()
    low, high = (0, 256) if elem == U8 else (-128, 128)
    return b.const(npr.integers(low, high, size=shape).astype(_NP[elem]))


def r_integer_matmul(b) -> bool:
    """MatMulInteger or QLinearMatMul of a quantized value and a constant 8-bit weight."""
    x, rng = b.pick(rank=(2, 3)), b.rng
    if x is None:
        return False
    k, n = b.shape(x)[-1], rng.choice([1, 3, 8])
    # onnxruntime's QLinearMatMul kernels: uint8 x (uint8 | int8) -> uint8 and int8 x int8 -> int8
    a_type = rng.choice([U8, I8])
    w_type = rng.choice([U8, I8]) if a_type == U8 else I8
    a, a_scale, a_zero = _quantize(b, x, a_type, exact=True)
    w = _int_weight(b, w_type, (k, n))
    w_zero = b.const(_zero_point(b, w_type) if rng.random() < 0.5 else _NP[w_type](0))
    if rng.random() < 0.5:
        inputs = [a, w] + ([a_zero, w_zero] if rng.random() < 0.7 else [])
        y = b.node("MatMulInteger", inputs)[0]
        b.node("Cast", [y], to=F)
        return True
    y_type = a_type
    y_scale = b.const(np.float32(rng.choice([0.5, 1.0, 4.0])))
    y = b.node("QLinearMatMul", [a, a_scale, a_zero, w, b.const(np.float32(_scale(b))), w_zero, y_scale,
                                 b.const(_zero_point(b, y_type))])[0]
    b.node("DequantizeLinear", [y, y_scale, b.const(_NP[y_type](0))])
    return True


def r_integer_conv(b) -> bool:
    """ConvInteger or QLinearConv of a quantized rank-4 value and a constant 8-bit weight."""
    x, rng = b.pick(rank=(4,)), b.rng
    if x is None:
        return False
    c = b.shape(x)[1]
    m, kernel = rng.choice([1, 2, 4]), [rng.choice([1, 2, 3]) for _ in range(2)]
    attrs = {"kernel_shape": kernel}
    if rng.random() < 0.5:
        attrs["pads"] = [rng.choice([0, 1]) for _ in range(4)]
    if rng.random() < 0.3:
        attrs["strides"] = [2, 2]
    x_type, w_type = U8, rng.choice([U8, I8])
    a, a_scale, a_zero = _quantize(b, x, x_type, exact=True)
    w = _int_weight(b, w_type, (m, c) + tuple(kernel))
    if rng.random() < 0.5:
        w_zero = b.const(_zero_point(b, w_type))
        y = b.node("ConvInteger", [a, w, a_zero, w_zero][:rng.choice([2, 3, 4])], **attrs)[0]
        b.node("Cast", [y], to=F)
        return True
    if rng.random() < 0.5:  # per output channel weight scales (zero points 0, as onnxruntime requires)
        w_scale = b.const(np.array([_scale(b) for _ in range(m)], np.float32))
        w_zero = b.const(np.zeros(m, _NP[w_type]))
    else:
        w_scale, w_zero = b.const(np.float32(_scale(b))), b.const(_NP[w_type](0))
    y_scale, y_zero = b.const(np.float32(rng.choice([0.25, 1.0, 4.0]))), b.const(np.uint8(128))
    bias = [b.const(b.rng_np().integers(-500, 500, m).astype(np.int32))] if rng.random() < 0.5 else []
    y = b.node("QLinearConv", [a, a_scale, a_zero, w, w_scale, w_zero, y_scale, y_zero] + bias, **attrs)[0]
    b.node("DequantizeLinear", [y, y_scale, y_zero])
    return True


GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def r_recurrent(b) -> bool:
    """An LSTM, GRU or RNN over a rank-3 value with constant weights, in any direction and layout."""
    x, rng = b.pick(rank=(3,)), b.rng
    if x is None:
        return False
    op = rng.choice(list(GATES))
    layout = 1 if b.opset >= 14 and rng.random() < 0.1 else 0  # onnxruntime runs no layout 1 (an ort-gap)
    seq, batch, size = b.shape(x) if layout == 0 else (b.shape(x)[1], b.shape(x)[0], b.shape(x)[2])
    hidden, direction = rng.choice([1, 2, 4, 5]), rng.choice(["forward", "reverse", "bidirectional"])
    dirs, gates = 2 if direction == "bidirectional" else 1, GATES[op]
    inputs = [x, b.weights((dirs, gates * hidden, size)), b.weights((dirs, gates * hidden, hidden))]
    inputs.append(b.weights((dirs, 2 * gates * hidden)) if rng.random() < 0.7 else "")
    if rng.random() < 0.3:  # sequence_lens: all full length, or (rarely) shorter ones for the host fallback
        lens = [seq] * batch if rng.random() < 0.7 else [rng.randint(1, seq) for _ in range(batch)]
        inputs.append(b.const(np.array(lens, np.int32)))
    else:
        inputs.append("")
    state = (dirs, batch, hidden) if layout == 0 else (batch, dirs, hidden)
    inputs.append(b.weights(state) if rng.random() < 0.4 else "")
    if op == "LSTM":
        inputs.append(b.weights(state) if rng.random() < 0.4 else "")
        inputs.append(b.weights((dirs, 3 * hidden)) if rng.random() < 0.3 else "")
    while inputs[-1] == "":
        inputs.pop()
    attrs = {"hidden_size": hidden, "direction": direction}
    if layout:
        attrs["layout"] = layout
    if op == "GRU":
        attrs["linear_before_reset"] = rng.choice([0, 1])
    if rng.random() < 0.2:
        attrs["clip"] = rng.choice([0.5, 2.0])
    outputs = b.node(op, inputs, 3 if op == "LSTM" else 2, **attrs)
    if rng.random() < 0.5:  # Y as [seq, batch, dirs * hidden], as exporters write it
        b.node("Reshape", [b.node("Transpose", [outputs[0]], perm=[0, 2, 1, 3])[0],
                           b.const(np.array([0, 0, -1], np.int64))])
    return True


def _branch(b, name: str, x: str, op: str) -> "object":
    """A subgraph of one node over the outer value x (no inputs), whose output has x's type and shape."""
    out = f"{name}_out"
    node = helper.make_node(op, [x], [out], name=f"{name}_{op.lower()}")
    return helper.make_graph([node], name, [], [helper.make_tensor_value_info(out, F, list(b.shape(x)))])


def r_control(b) -> bool:
    """If on a constant or a computed condition, Loop with a constant trip count, or Scan over axis 0."""
    x, rng = b.pick(), b.rng
    shape = b.shape(x)
    choice = rng.random()
    if choice < 0.4:
        if rng.random() < 0.5:
            cond = b.const(np.array(rng.random() < 0.5))
        else:
            total = b.node("ReduceSum", [x], keepdims=0) if b.opset < 13 or not shape else \
                b.node("ReduceSum", [x, b.const(np.arange(len(shape), dtype=np.int64))], keepdims=0)
            cond = b.node("Greater", [total[0], b.const(np.float32(0.0))])[0]
        then_op, else_op = rng.sample(["Relu", "Neg", "Sigmoid", "Abs", "Tanh"], 2)
        b.node("If", [cond], then_branch=_branch(b, b.fresh("then"), x, then_op),
               else_branch=_branch(b, b.fresh("else"), x, else_op))
    elif choice < 0.75:
        stem = b.fresh("body")
        step = b.weights(_suffix(b, shape))
        body = helper.make_graph(
            [helper.make_node("Identity", [f"{stem}_c"], [f"{stem}_c_out"]),
             helper.make_node(rng.choice(["Add", "Mul", "Sub"]), [f"{stem}_v", step], [f"{stem}_s"]),
             helper.make_node("Tanh", [f"{stem}_s"], [f"{stem}_v_out"])],
            stem, [helper.make_tensor_value_info(f"{stem}_i", I64, []),
                   helper.make_tensor_value_info(f"{stem}_c", B, []),
                   helper.make_tensor_value_info(f"{stem}_v", F, list(shape))],
            [helper.make_tensor_value_info(f"{stem}_c_out", B, []),
             helper.make_tensor_value_info(f"{stem}_v_out", F, list(shape))])
        trip = b.const(np.array(rng.choice([0, 1, 3]), np.int64))
        cond = b.const(np.array(True)) if rng.random() < 0.5 else ""
        out = b.node("Loop", [trip, cond, x], body=body)[0]
        b.values[out] = (F, shape)  # onnx's Loop inference keeps the carried value's type, not its shape
    else:
        if not shape:
            return False
        stem = b.fresh("scan")
        state = b.weights(shape[1:])
        body = helper.make_graph(
            [helper.make_node("Add", [f"{stem}_s", f"{stem}_x"], [f"{stem}_s_out"]),
             helper.make_node("Mul", [f"{stem}_x", f"{stem}_s_out"], [f"{stem}_y"])],
            stem, [helper.make_tensor_value_info(f"{stem}_s", F, list(shape[1:])),
                   helper.make_tensor_value_info(f"{stem}_x", F, list(shape[1:]))],
            [helper.make_tensor_value_info(f"{stem}_s_out", F, list(shape[1:])),
             helper.make_tensor_value_info(f"{stem}_y", F, list(shape[1:]))])
        b.node("Scan", [state, x], 2, body=body, num_scan_inputs=1)
    return True


def _suffix(b, shape: tuple) -> tuple:
    """A shape that broadcasts to `shape` without changing it: a suffix of it with some dims set to 1."""
    suffix = list(shape[b.rng.randrange(len(shape) + 1):]) if shape else []
    return tuple(1 if b.rng.random() < 0.3 else d for d in suffix)


def r_host_ops(b) -> bool:
    """Ops claimed through a host fallback or a plain device op the other recipes never make."""
    x, rng = b.pick(), b.rng
    shape = b.shape(x)
    rank = len(shape)
    op = rng.choice(["Tan", "Hardmax", "CastLike", "ReverseSequence", "EyeLike", "OneHot", "LpPool", "Det"])
    if op == "Tan":
        b.node(op, [b.node("Mul", [b.node("Tanh", [x])[0], b.const(np.float32(1.2))])[0]])
    elif op == "Hardmax" and rank:
        b.node(op, [x], axis=rng.randrange(-rank, rank))
    elif op == "CastLike" and b.opset >= 15:
        y = b.node(op, [x, b.const(np.zeros(1, rng.choice([np.float16, np.float64, np.int32])))])[0]
        b.node("Cast", [y], to=F)
    elif op == "ReverseSequence" and rank >= 2:
        time_axis = rng.choice([0, 1])
        lens = [rng.randint(1, shape[time_axis]) for _ in range(shape[1 - time_axis])]
        b.node(op, [x, b.const(np.array(lens, np.int64))], time_axis=time_axis, batch_axis=1 - time_axis)
    elif op == "EyeLike" and rank == 2:
        b.node(op, [x], k=rng.choice([-1, 0, 1]))
    elif op == "OneHot" and rank:
        index = b.node("ArgMax", [x], axis=-1, keepdims=0)[0]
        depth = b.const(np.array([shape[-1] + rng.choice([0, 1])], np.int64))
        onehot = b.node(op, [index, depth, b.const(np.array([0.0, 1.0], np.float32))], axis=-1)[0]
        b.node("Mul", [onehot, b.const(np.float32(2.0))])
    elif op == "LpPool" and rank in (3, 4):
        kernel = [rng.choice([1, 2, 3]) for _ in range(rank - 2)]
        b.node(op, [x], kernel_shape=kernel, p=rng.choice([1, 2, 3]))
    elif op == "Det" and rank >= 2 and shape[-1] == shape[-2]:
        b.node(op, [x])
    else:
        return False
    return True


RECIPES = [(r_qdq, 2), (r_integer_matmul, 1), (r_integer_conv, 1), (r_recurrent, 1), (r_control, 1),
           (r_host_ops, 1)]
