"""fold-constants: evaluate every subgraph whose inputs are constants, including shape arithmetic.

Reads: a graph with static input shapes.  Writes: constant tensors in place of foldable nodes
(Shape -> Gather -> Concat -> Reshape chains become a constant shape; Size, Range, ConstantOfShape of
constants too), `If` nodes with a constant condition replaced by the nodes of the branch taken, `Loop` and
`Scan` nodes with a static iteration count unrolled within a budget (frontend/control_flow.py), dead nodes
removed, static shapes on every tensor whose shape folding made known, nodes in topological order.
Before: `Reshape(x, Concat(Gather(Shape(x), 0), [-1]))`; after: `Reshape(x, [2, -1])`.

Folding and shape inference feed each other (a folded Range gives a Reduce its axes, hence its output
shape; a now-static shape lets a Shape node fold), so the pass repeats fold -> re-infer shapes until no
tensor gains a static shape.
"""
from __future__ import annotations

import contextlib
import io
import logging

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from onnx2ttnn.frontend.control_flow import Unroller
from onnx2ttnn.frontend.shapes import HOST_SHAPED_OPS, STANDARD_DOMAINS
from onnx2ttnn.ir.graph import Module, is_onnx_op, onnx_domain
from onnx2ttnn import ort
from onnx2ttnn.ir.names import GraphNames
from onnx2ttnn.passes.base import Pass, PassContext

_MAX_ROUNDS = 8  # fold -> infer rounds; each must remove a node or make a shape static
_SHAPE_ONLY_ELEMENTS = 1024  # larger constants are never shape operands: inference sees only their type


class FoldConstants(Pass):
    name = "fold-constants"

    def run(self, module: Module, ctx: PassContext) -> None:
        graph = module.graph
        before = len(graph.nodes)
        _constant_nodes_to_tensors(graph)
        logging.getLogger("G-LOGGER").setLevel(logging.ERROR)
        gs.logger.G_LOGGER.severity = gs.logger.G_LOGGER.ERROR
        unroller = Unroller(module.opset)
        rounds = 0
        while rounds < _MAX_ROUNDS:
            count = len(graph.nodes)
            rewritten = _fold(graph, unroller)
            rounds += 1
            folded = rewritten or len(graph.nodes) != count
            if not folded and not _unknown_shapes(graph):
                break
            if not _reinfer_shapes(graph) and not folded:
                break
        module.notes[self.name] = {"nodes_before": before, "nodes_after": len(graph.nodes), "rounds": rounds,
                                   "unrolled": unroller.unrolled}


def _fold(graph: gs.Graph, unroller: Unroller) -> bool:
    """One round: inline constant-condition Ifs, unroll the Loops and Scans that can be, evaluate the ops
    onnxruntime will not fold for us, then graphsurgeon folding (the whole graph at once; part by part when
    one node makes onnxruntime fail).  True when control flow was rewritten."""
    count = len(graph.nodes)
    _inline_constant_ifs(graph)
    rewritten = unroller.run(graph) or len(graph.nodes) != count
    _constant_nodes_to_tensors(graph)  # Constant nodes an inlined branch brought in
    _evaluate_shape_ops(graph)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), ort.quiet():
        try:
            graph.fold_constants(fold_shapes=True, error_ok=False, flatten_subgraphs=False)
        except Exception:  # onnxruntime refused the constant subgraph as a whole: fold it in partitions
            graph.fold_constants(fold_shapes=True, error_ok=True, flatten_subgraphs=False,
                                 partitioning="recursive")
    graph.cleanup(remove_unused_graph_inputs=False).toposort()
    return rewritten


def _inline_constant_ifs(graph: gs.Graph) -> None:
    """Every `If` whose condition is a constant is replaced by the nodes of the branch it takes; the
    branch's nodes and tensors get names unique in the graph, outer-scope tensors they read stay shared, and
    a branch output that is not computed inside the branch (a constant or an outer tensor) is copied by an
    Identity into the If's output."""
    names = GraphNames(set(graph.tensors()) | {n.name for n in graph.nodes if n.name})
    changed = True
    while changed:
        changed = False
        nodes = []
        for node in graph.nodes:
            if not (is_onnx_op(node, "If") and isinstance(node.inputs[0], gs.Constant)):
                nodes.append(node)
                continue
            nodes.extend(_branch_nodes(node, names))
            changed = True
        graph.nodes = nodes


def _branch_nodes(node: gs.Node, names: GraphNames) -> list[gs.Node]:
    """The nodes of the branch a constant-condition If takes, wired to the If's outputs."""
    cond = bool(np.asarray(node.inputs[0].values).reshape(-1)[0])
    branch = node.attrs["then_branch" if cond else "else_branch"]
    prefix = (node.name or "If") + ("_then" if cond else "_else")
    local = {id(t) for n in branch.nodes for t in n.outputs}
    for inner in branch.nodes:
        inner.name = names.fresh(f"{prefix}_{inner.name or inner.op}")
        for t in inner.outputs:
            if not t.is_empty():
                t.name = names.fresh(f"{prefix}_{t.name}")
    nodes = list(branch.nodes)
    outs = list(node.outputs)
    node.outputs.clear()
    node.inputs.clear()
    for out, inner_out in zip(outs, branch.outputs):
        if id(inner_out) in local:
            producer = inner_out.inputs[0]
            producer.outputs[producer.outputs.index(inner_out)] = out
            _replace_input(nodes, inner_out, out)
        else:  # the branch returns a constant or a tensor of the outer scope as is
            nodes.append(gs.Node("Identity", names.fresh(f"{prefix}_{out.name}_identity"), inputs=[inner_out],
                                 outputs=[out]))
    return nodes


def _replace_input(nodes: list[gs.Node], old: gs.Tensor, new: gs.Tensor) -> None:
    """Nodes (and the nodes of their subgraphs) that read `old` read `new` instead."""
    for node in nodes:
        for i, t in enumerate(node.inputs):
            if t is old:
                node.inputs[i] = new
        for attr in node.attrs.values():
            if isinstance(attr, gs.Graph):
                _replace_input(attr.nodes, old, new)


def _evaluate_shape_ops(graph: gs.Graph) -> None:
    """Shape and Size of a static shape, Range and ConstantOfShape of constants, evaluated with numpy
    (onnxruntime refuses some of them, e.g. a Range of 1-element tensors; graphsurgeon does not fold Size
    and folds Shape(start, end) to the whole shape)."""
    for node in graph.nodes:
        value = _shape_op_value(node)
        if value is not None:
            node.outputs[0].to_constant(value)
            node.outputs.clear()
    graph.cleanup(remove_unused_graph_inputs=False)


def _shape_op_value(node: gs.Node):
    """The value of a Shape / Size / Range / ConstantOfShape node when its inputs decide it, else None."""
    if onnx_domain(node) or len(node.outputs) != 1:
        return None
    consts = [np.asarray(t.values) if isinstance(t, gs.Constant) else None for t in node.inputs]
    if node.op == "Shape" and is_static(node.inputs[0].shape):  # graphsurgeon ignores start and end
        shape = list(node.inputs[0].shape)
        return np.array(shape[node.attrs.get("start", 0):node.attrs.get("end", len(shape))], dtype=np.int64)
    if node.op == "Size" and is_static(node.inputs[0].shape):
        return np.array(_elements(node.inputs[0].shape), dtype=np.int64)
    if node.op == "Range" and len(consts) == 3 and all(c is not None and c.size == 1 for c in consts):
        start, limit, delta = (c.reshape(()) for c in consts)
        if delta == 0:
            return None
        return np.arange(start, limit, delta).astype(np.result_type(start, limit, delta))
    if node.op == "ConstantOfShape" and consts and consts[0] is not None:
        fill = node.attrs.get("value")
        fill = np.asarray(fill.values if isinstance(fill, gs.Constant) else (fill if fill is not None else
                                                                             np.zeros(1, np.float32)))
        return np.full([int(d) for d in consts[0].reshape(-1)], fill.reshape(-1)[0], dtype=fill.dtype)
    return None


def _constant_nodes_to_tensors(graph: gs.Graph) -> None:
    """ONNX Constant nodes become constant tensors, so folding and lowering see their values."""
    for node in graph.nodes:
        value = _constant_value(node) if is_onnx_op(node, "Constant") else None
        if value is not None:
            node.outputs[0].to_constant(value)
            node.outputs.clear()
    graph.cleanup(remove_unused_graph_inputs=False)


def _constant_value(node: gs.Node):
    """The value of a Constant node (value, value_float(s), value_int(s)), None for sparse or string ones."""
    if "value" in node.attrs:
        value = node.attrs["value"]
        return value.values if isinstance(value, gs.Constant) else value
    for attr, dtype in (("value_float", np.float32), ("value_floats", np.float32), ("value_int", np.int64),
                        ("value_ints", np.int64)):
        if attr in node.attrs:
            return np.asarray(node.attrs[attr], dtype=dtype)
    return None


def is_static(shape) -> bool:
    """A shape of known rank whose every dim is an integer."""
    return shape is not None and all(isinstance(d, int) and not isinstance(d, bool) for d in shape)


def _unknown_shapes(graph: gs.Graph) -> list[gs.Variable]:
    """Variables of the graph whose shape is unknown or symbolic."""
    return [t for t in graph.tensors().values() if isinstance(t, gs.Variable) and not is_static(t.shape)]


def _reinfer_shapes(graph: gs.Graph) -> bool:
    """Run ONNX shape inference again on the folded graph and give every tensor the static shape (and the
    dtype) inferred for it: shapes inferred before folding may be unknown, symbolic, or wrong (data
    propagation through Shape(start, end) slices is unreliable), while folded shape operands are plain
    constants.  True when some tensor's shape changed."""
    inferred = _inferred_types(graph)
    changed = False
    for tensor in graph.tensors().values():
        if not isinstance(tensor, gs.Variable) or tensor.name not in inferred:
            continue
        shape, dtype = inferred[tensor.name]
        if tensor.dtype is None and dtype is not None:
            tensor.dtype = dtype
        if is_static(shape) and (tensor.shape is None or list(tensor.shape) != list(shape)):
            tensor.shape = list(shape)
            changed = True
    return changed


def _inferred_types(graph: gs.Graph) -> dict[str, tuple]:
    """{tensor name: (shape or None, numpy dtype or None)} from ONNX shape inference on a light copy of the
    graph (large constants demoted to typed inputs, shapes of intermediate tensors and outputs dropped)."""
    light = graph.copy()
    typed = {}  # large constant name -> a graph input of its dtype and shape
    for tensor in light.tensors().values():
        if isinstance(tensor, gs.Constant) and _elements(tensor.shape) > _SHAPE_ONLY_ELEMENTS:
            typed[tensor.name] = gs.Variable(tensor.name, dtype=tensor.dtype, shape=list(tensor.shape))
    for node in _all_nodes(light):
        for i, tensor in enumerate(node.inputs):
            if isinstance(tensor, gs.Constant) and tensor.name in typed:
                node.inputs[i] = typed[tensor.name]
    light.inputs.extend(typed.values())
    with contextlib.redirect_stdout(io.StringIO()):
        model = gs.export_onnx(light, do_type_check=False)
    # the shapes of contrib and host-shaped ops' outputs came from onnxruntime (frontend/shapes.py): ONNX
    # inference cannot rebuild them, and without them nothing downstream of such a node would be re-inferred
    opaque = {name for node in model.graph.node if node.domain not in STANDARD_DOMAINS
              or node.op_type in HOST_SHAPED_OPS for name in node.output}
    kept = [vi for vi in model.graph.value_info if vi.name in opaque]
    del model.graph.value_info[:]
    model.graph.value_info.extend(kept)
    # before IR 4 inference reads only the initializers listed as graph inputs: the constants a pass added
    # (an unrolled Scan's indices) would have no type
    model.ir_version = max(model.ir_version, 4)
    for out in model.graph.output:
        out.type.tensor_type.ClearField("shape")
    try:
        model = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except (onnx.shape_inference.InferenceError, ValueError):
        return {}
    found = {}
    for vi in list(model.graph.value_info) + list(model.graph.output):
        ttype = vi.type.tensor_type
        dtype = onnx.helper.tensor_dtype_to_np_dtype(ttype.elem_type) if ttype.elem_type else None
        shape = None
        if ttype.HasField("shape"):
            shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in ttype.shape.dim]
        found[vi.name] = (shape, dtype)
    return found


def _all_nodes(graph: gs.Graph) -> list[gs.Node]:
    """The nodes of `graph` and of every subgraph inside it."""
    nodes = []
    for node in graph.nodes:
        nodes.append(node)
        for attr in node.attrs.values():
            if isinstance(attr, gs.Graph):
                nodes += _all_nodes(attr)
    return nodes


def _elements(shape) -> int:
    count = 1
    for d in shape:
        count *= int(d)
    return count
