"""One-node LSTM / GRU / RNN models with trained-style constant weights, their feeds, and the check that the
device rule declines a node, for tests/lowering/test_recurrent.py and test_recurrent_unroll.py."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.errors import ConversionError

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def recurrent_model(op, seq=5, batch=3, inputs=4, hidden=6, direction="forward", layout=0, bias=True,
                    initial_h=False, initial_c=False, peepholes=False, outputs=("Y", "Y_h", "Y_c"), seed=0,
                    opset=22, sequence_lens=None, runtime_weights=False, **attrs):
    """`Y, Y_h[, Y_c] = op(X, W, R, B, sequence_lens, initial_h[, initial_c, P])` with constant weights."""
    rng = np.random.default_rng(seed)
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    x_shape = [seq, batch, inputs] if layout == 0 else [batch, seq, inputs]
    state = [dirs, batch, hidden] if layout == 0 else [batch, dirs, hidden]
    graph_inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)]
    inits = [numpy_helper.from_array((rng.standard_normal((dirs, g * hidden, inputs)) * 0.5).astype(np.float32), "W"),
             numpy_helper.from_array((rng.standard_normal((dirs, g * hidden, hidden)) * 0.5).astype(np.float32), "R")]
    if runtime_weights:
        graph_inputs.append(helper.make_tensor_value_info("W", TensorProto.FLOAT, [dirs, g * hidden, inputs]))
        inits = inits[1:]
    names = ["X", "W", "R", "", "", "", "", ""]
    if bias:
        inits.append(numpy_helper.from_array((rng.standard_normal((dirs, 2 * g * hidden)) * 0.5).astype(np.float32),
                                             "B"))
        names[3] = "B"
    if sequence_lens is not None:
        inits.append(numpy_helper.from_array(np.array(sequence_lens, np.int32), "sequence_lens"))
        names[4] = "sequence_lens"
    if initial_h:
        graph_inputs.append(helper.make_tensor_value_info("initial_h", TensorProto.FLOAT, state))
        names[5] = "initial_h"
    if initial_c:
        graph_inputs.append(helper.make_tensor_value_info("initial_c", TensorProto.FLOAT, state))
        names[6] = "initial_c"
    if peepholes:
        inits.append(numpy_helper.from_array((rng.standard_normal((dirs, 3 * hidden)) * 0.5).astype(np.float32), "P"))
        names[7] = "P"
    while names and not names[-1]:
        names.pop()
    if layout:
        attrs["layout"] = layout
    outs = [o if o in outputs else "" for o in ("Y", "Y_h", "Y_c")[:3 if op == "LSTM" else 2]]
    while not outs[-1]:
        outs.pop()
    node = helper.make_node(op, names, outs, hidden_size=hidden, direction=direction, **attrs)
    graph = helper.make_graph([node], op.lower(), graph_inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs if o], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def feeds(model, seed=1):
    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    return {vi.name: rng.standard_normal([d.dim_value for d in vi.type.tensor_type.shape.dim]).astype(np.float32)
            for vi in model.graph.input if vi.name not in inits}


def declined(model, match, fallback=True):
    """The device rule declines `model`'s node with a reason matching `match`: without fallbacks the
    conversion names it; with them (the default) the node runs on the host, counted in the summary."""
    with pytest.raises(ConversionError, match=match):
        convert(model, dtype="fp32", fallback=False)
    if fallback:
        conversion = convert(model, dtype="fp32")
        assert sum(conversion.fallback_counts().values()) == 1, conversion.fallback_counts()
        return conversion
    return None
