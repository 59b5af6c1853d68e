"""Run a converted model on the simulator in-process: outputs, leaked buffers and the program text (shared by
the emitter and lowering tests that must see the program's exact output dtypes and its leaks)."""
from __future__ import annotations

import io
import types

import numpy as np
import onnx
import torch
from onnx import helper

from onnx2ttnn.convert import convert
from onnx2ttnn.emit.weights import npz_bytes
from onnx2ttnn.sim import runtime
from tests.ttnn_api import check_source


def forward_text(source: str) -> str:
    """The `forward` function of a program's source (a traceable program repeats its calls in forward_device)."""
    start = source.index("\ndef forward(")
    end = source.find("\ndef ", start + 1)
    return source[start:end if end != -1 else len(source)]


def one_node(op, inputs: dict, outputs: dict, attrs=None, opset=18) -> onnx.ModelProto:
    """`outputs = op(*inputs)`; inputs / outputs: {name: (TensorProto type, shape)}; "" skips an input."""
    node = helper.make_node(op, list(inputs), list(outputs), **(attrs or {}))
    graph = helper.make_graph([node], op, [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()
                                           if n],
                              [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run(m, feeds: dict, **options) -> tuple[dict, list, str]:
    """({output name: torch tensor}, leaked buffers, program source) of `m` converted (in fp32 unless options
    say otherwise) on the simulator."""
    conversion = convert(m, **{"dtype": "fp32", **options})
    assert check_source(conversion.source) == []
    program = types.ModuleType("emit_test_program")
    runtime.configure("n150")
    with runtime.install() as ttnn:
        exec(compile(conversion.source, "<program>", "exec"), program.__dict__)
        device = ttnn.open_device(device_id=0, l1_small_size=16384)
        params = program.load_parameters(device, io.BytesIO(npz_bytes(conversion.program.weights)))
        args = {ident: torch.from_numpy(np.ascontiguousarray(feeds[name]))
                for ident, (name, _, _) in program.INPUTS.items()}
        outputs = program.forward(device, params, **args)
        for tensor in params.values():
            if isinstance(tensor, ttnn.Tensor) and tensor.storage_type() == ttnn.StorageType.DEVICE:
                ttnn.deallocate(tensor)
        ttnn.close_device(device)
    return outputs, runtime.leaks(device), conversion.source
