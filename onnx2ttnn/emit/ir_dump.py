"""The annotated IR as an ONNX file (opens in Netron): layouts in value_info metadata_props, ttnn
arguments (memory configs included) as string attributes. Conversion.write publishes it with the program."""
from __future__ import annotations

import os

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import Module, layout_of
from onnx2ttnn.ir.names import Namespace


def _attr(value):
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, float, np.integer, np.floating)) or type(value) is str:
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                                for v in value) and value:
        return [int(v) for v in value]
    return str(value) if not hasattr(value, "name") or isinstance(value, str) else repr(value)


def _elem_type(dtype) -> int:
    """The TensorProto element type of a tensor's dtype: graphsurgeon keeps the enum of a type numpy has none
    for (float8, a sequence of maps' UNDEFINED); a sequence or map of the ttnn IR (dtype object) and an unknown
    dtype are UNDEFINED."""
    if dtype is None:
        return 0
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        return int(dtype)
    return 0 if np.dtype(dtype) == np.dtype(object) else onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def to_onnx(module: Module, weights: bool = False) -> onnx.ModelProto:
    """The module's graph as a ModelProto; weights are included only when asked (they can be large)."""
    graph = module.graph
    names = Namespace()
    name = lambda t: names.create(t.name or "t", key=id(t))  # noqa: E731
    nodes, inits, infos, seen = [], [], [], set()

    def info(t):
        if id(t) in seen:
            return
        seen.add(id(t))
        if isinstance(t, gs.Constant):
            if weights:
                inits.append(onnx.numpy_helper.from_array(np.asarray(t.values), name(t)))
            return
        vi = onnx.helper.make_tensor_value_info(name(t), _elem_type(t.dtype), t.shape)
        layout = layout_of(t)
        if layout is not None:
            entry = vi.metadata_props.add()
            entry.key, entry.value = "ttnn_layout", str(layout)
        infos.append(vi)

    for index, node in enumerate(graph.nodes):
        for t in list(node.inputs) + list(node.outputs):
            info(t)
        attrs = {k.lstrip("_"): _attr(v) for k, v in node.attrs.items()}
        nodes.append(onnx.helper.make_node(node.op, [name(t) for t in node.inputs],
                                           [name(t) for t in node.outputs], name=f"{node.op}_{index}",
                                           domain=node.domain or "", **attrs))
    inputs = [vi for vi in infos if vi.name in {name(t) for t in graph.inputs}]
    outputs = [vi for vi in infos if vi.name in {name(t) for t in graph.outputs}]
    g = onnx.helper.make_graph(nodes, graph.name or "onnx2ttnn", inputs, outputs, inits,
                               value_info=[vi for vi in infos if vi not in inputs and vi not in outputs])
    domains = {n.domain for n in nodes if n.domain}
    opsets = [onnx.helper.make_opsetid("", module.opset)] + [onnx.helper.make_opsetid(d, 1) for d in sorted(domains)]
    return onnx.helper.make_model(g, opset_imports=opsets, producer_name="onnx2ttnn")


def ir_bytes(module: Module, weights: bool = False) -> bytes:
    """The annotated IR as the bytes of an .onnx file (what --emit-ir and --dump-ir-after write)."""
    return to_onnx(module, weights).SerializeToString()


def dump_path(folder: str, pass_name: str) -> str:
    """Where --dump-ir-after PASS writes the IR after PASS."""
    return os.path.join(folder, f"ir_after_{pass_name}.onnx")
