"""Model-local ONNX functions, inlined on import: every call becomes the nodes of the function's body.

A model may define functions (ModelProto.functions) and call them as nodes of the function's domain and
name; nothing after the importer knows functions, so each call is replaced by the body it stands for
(onnx's own inliner: internal names made unique, attribute references and default attributes resolved,
calls inside functions and inside If / Loop / Scan bodies inlined too).  It runs on a light copy of the
model (large initializers demoted to typed inputs, frontend/shapes.py), so no weight is serialized.

A function that calls itself, directly or through others, has no finite body: it is refused, naming the
first node whose call reaches the cycle and the cycle itself (the ONNX checker names only the functions).
Before: `y = local.AddRelu(x, x)` with AddRelu(a, b) = Relu(Add(a, b)); after: `s__1 = Add(x, x); y = Relu(s__1)`.
"""
from __future__ import annotations

from typing import Iterator

import onnx
import onnx.inliner

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.frontend.shapes import light_copy
from onnx2ttnn.messages import clean_message, escape_name, one_line

Key = tuple[str, str, str]  # (domain, name, overload) of a function


def _key(node_or_function) -> Key:
    return (node_or_function.domain, node_or_function.name if isinstance(node_or_function, onnx.FunctionProto)
            else node_or_function.op_type, getattr(node_or_function, "overload", ""))


def _label(key: Key) -> str:
    domain, name, overload = key
    return clean_message(f"{domain}::{name}" + (f":{overload}" if overload else ""))


def _nodes(nodes) -> Iterator[onnx.NodeProto]:
    """`nodes` and the nodes of the subgraphs in their attributes, depth first (iteratively: no depth limit)."""
    stack = [iter(nodes)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        yield node
        for attr in node.attribute:
            graphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
            stack.extend(iter(g.node) for g in reversed(graphs))


def _recursive(functions: dict[Key, onnx.FunctionProto]) -> dict[Key, list[Key]]:
    """Function -> a call cycle it reaches (the cycle's functions, the first repeated at the end), for every
    function from which a cycle is reachable; one depth-first walk over the call graph (iterative)."""
    calls = {key: [k for k in dict.fromkeys(_key(n) for n in _nodes(f.node)) if k in functions]
             for key, f in functions.items()}
    state: dict[Key, int] = {}  # 1: on the walk's path, 2: done
    reaches: dict[Key, list[Key]] = {}
    for root in functions:
        if root in state:
            continue
        path, todo = [root], [iter(calls[root])]
        state[root] = 1
        while todo:
            callee = next(todo[-1], None)
            if callee is None:
                done = path.pop()
                todo.pop()
                state[done] = 2
                if done in reaches and path:
                    reaches.setdefault(path[-1], reaches[done])
                continue
            if state.get(callee) == 1:  # back edge: a cycle through the path's tail
                cycle = path[path.index(callee):] + [callee]
                for key in path[path.index(callee):]:
                    reaches.setdefault(key, cycle)
                reaches.setdefault(path[-1], cycle)
            elif state.get(callee) == 2:
                if callee in reaches:
                    reaches.setdefault(path[-1], reaches[callee])
            else:
                state[callee] = 1
                path.append(callee)
                todo.append(iter(calls[callee]))
    return reaches


def check_functions(model: onnx.ModelProto) -> None:
    """Refuse a model whose model-local functions call themselves (directly or through others), naming the
    first node (of the graph or its subgraphs) whose call reaches the cycle."""
    functions = {_key(f): f for f in model.functions}
    if not functions:
        return
    reaches = _recursive(functions)
    if not reaches:
        return
    for index, node in enumerate(_nodes(model.graph.node)):
        cycle = reaches.get(_key(node))
        if cycle is not None:
            name = escape_name(node.name or f"{node.op_type}_{index}")
            raise ConversionError(f"invalid model: node {name} ({_label(_key(node))}) calls a model-local "
                                  f"function that calls itself ({' -> '.join(map(_label, cycle))}): a recursive "
                                  "function has no finite body to inline")
    cycle = next(iter(reaches.values()))
    raise ConversionError(f"invalid model: model-local function {_label(cycle[0])} calls itself "
                          f"({' -> '.join(map(_label, cycle))})")


def inline_functions(model: onnx.ModelProto) -> None:
    """Replace every call of a model-local function in `model` by the function's body (in place) and drop
    the functions; a model without functions is left as it is."""
    if not model.functions:
        return
    check_functions(model)
    light = light_copy(model)
    try:
        inlined = onnx.inliner.inline_local_functions(light, convert_version=True)
    except Exception as exc:  # onnx raises ValidationError, RuntimeError, ... on malformed functions
        raise ConversionError(f"invalid model: cannot inline its model-local functions: "
                              f"{clean_message(one_line(exc)) or type(exc).__name__}") from None
    _replace(model.graph.node, inlined.graph.node)
    _replace(model.graph.value_info, inlined.graph.value_info)
    _replace(model.opset_import, _merged_opsets(model.opset_import, inlined.opset_import))
    del model.functions[:]


def _merged_opsets(original, inlined) -> list[onnx.OperatorSetIdProto]:
    """The model's opset imports, plus those the inlined bodies brought in (the model's own versions win)."""
    merged = {entry.domain: entry for entry in inlined}
    merged.update({entry.domain: entry for entry in original})
    return list(merged.values())


def _replace(field, values) -> None:
    values = list(values)
    del field[:]
    field.extend(values)

