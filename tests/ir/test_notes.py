"""ir/notes.py: the declared schema of compiler notes, its type checks, and the one spelling of host dtypes."""
from __future__ import annotations

import pathlib
import re
from typing import Literal, Optional

import numpy as np
import onnx_graphsurgeon as gs
import pytest
from onnx import TensorProto, helper

from onnx2ttnn import convert
from onnx2ttnn.emit.python import emit_program
from onnx2ttnn.errors import ConversionError, VerificationError
from onnx2ttnn.ir.dtypes import TORCH_DTYPES, host_torch_dtype, torch_dtype
from onnx2ttnn.ir.graph import ttnn_node
from onnx2ttnn.ir.notes import CONSUMERS, NOTES, TENSOR_NOTES, conforms, note, problem
from onnx2ttnn.ir.ttnn_ops import op_info
from onnx2ttnn.passes.pipeline import build_pipeline
from tests.fallback.test_fallback_ops import model as fallback_model

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "onnx2ttnn"
# how the code names a note: attrs["_x"] / attrs.get("_x") / {"_x": ...} / ttnn_node(..., _x=...)
NOTE_USES = (re.compile(r"""attrs(?:\.get|\.setdefault|\.pop)?[\[(]\s*["'](_[a-z][a-z_]*)["']"""),
             re.compile(r"""[{,]\s*["'](_[a-z][a-z_]*)["']\s*:"""),
             re.compile(r"""(?<![\w.])(_[a-z][a-z_]*)=(?!=)"""))


def _notes_in_source() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if "sim" in path.parts:  # the simulator's own private fields, not IR notes
            continue
        text = path.read_text(encoding="utf-8")
        for pattern in NOTE_USES:
            for match in pattern.finditer(text):
                found.setdefault(match.group(1), set()).add(path.relative_to(PACKAGE).as_posix())
    return found


def test_every_note_the_code_names_is_declared_and_every_declared_note_is_used():
    used = _notes_in_source()
    undeclared = {key: sorted(files) for key, files in used.items() if key not in NOTES}
    assert not undeclared
    assert sorted(set(NOTES) - set(used)) == []
    assert len(NOTES) >= 16


def test_writers_readers_and_ops_name_real_stages_and_ops():
    stages = {p.name for p in build_pipeline()} | set(CONSUMERS)
    for declared in list(NOTES.values()) + list(TENSOR_NOTES.values()):
        assert declared.doc and declared.writers and declared.readers, declared.key
        assert set(declared.writers) <= stages and set(declared.readers) <= stages, declared.key
        for op in declared.ops + declared.required_on:
            op_info(op)  # KeyError names an op outside the table
        assert set(declared.required_on) <= set(declared.ops or declared.required_on), declared.key


@pytest.mark.parametrize("annotation,good,bad", [
    (int, 3, True),
    (tuple[int, ...], (1, 2, 3), [1, 2, 3]),
    (tuple[int, int, int, int], (1, 2, 3, 4), (1, 2, 3)),
    (Literal["a", "b"], "a", "c"),
    (list[tuple[str, Optional[tuple[int, int]]]], [("x", None), ("y", (1, 2))], [("x", (1,))]),
])
def test_conforms_checks_the_annotations_notes_use(annotation, good, bad):
    assert conforms(good, annotation) and not conforms(bad, annotation)


def test_problem_names_undeclared_wrong_typed_and_misplaced_notes():
    assert problem("_param", "w", "from_torch") is None
    assert "undeclared note '_colour'" in problem("_colour", "red", "relu")
    assert "not of its declared type" in problem("_param", 3, "from_torch")
    assert "on a relu node (only from_torch carry it)" in problem("_param", "w", "relu")
    assert "one of 'float32'" in problem("_torch_dtype", "complex64", "to_torch")
    args = NOTES["_args"].type
    assert conforms((None, ("input", 0), ("const", "int64", (2,), [1, 2])), args)
    assert conforms((("const", "uint32", (2,), [1, 2]),), args)  # a torch dtype name
    assert not conforms((("const", "int4", (2,), [1, 2]),), args)


def test_ttnn_node_refuses_an_undeclared_or_wrong_typed_note():
    x, y = gs.Variable("x", np.float32, [2]), gs.Variable("y", np.float32, [2])
    with pytest.raises(VerificationError, match=r"ttnn.relu \(from 'act'\): undeclared note '_colour'"):
        ttnn_node("relu", [x], [y], "act", _colour="red")
    with pytest.raises(VerificationError, match="'_shape' = \\[2\\] is not of its declared type"):
        ttnn_node("to_torch", [x], [y], "act", _shape=[2])
    node = ttnn_node("from_torch", [x], [y], "act", _param="w")
    assert note(node, "param") == "w" and note(node, "host") is None
    with pytest.raises(KeyError, match="'_colour' is not declared"):
        note(node, "colour")


def test_host_dtypes_have_one_torch_spelling():
    assert torch_dtype(np.dtype(np.int64), "output 'y'") == "int64"
    assert host_torch_dtype(np.dtype(np.uint32), "x") == "int64"  # torch lacks uint32 arithmetic
    with pytest.raises(ConversionError, match="output 'y' has dtype complex64"):
        torch_dtype(np.dtype(np.complex64), "output 'y'")


def test_every_host_dtype_of_a_fallback_program_is_a_torch_name():
    """Det runs on the host between two device ops: a download, the helper, an upload of its result."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Det", ["r"], ["d"]),
             helper.make_node("Relu", ["d"], ["y"])]
    conversion = convert(fallback_model(nodes, [("x", TensorProto.FLOAT, [5, 3, 3])], [("y", TensorProto.FLOAT, [5])]))
    dtypes = [(n.op, n.attrs["_torch_dtype"]) for n in conversion.module.graph.nodes if "_torch_dtype" in n.attrs]
    assert dtypes == [("to_torch", "float32"), ("from_torch", "bfloat16"), ("to_torch", "float32")]
    assert ".to(torch.bfloat16), dtype=ttnn.bfloat16" in conversion.source


def _cast_to(to: int):
    graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=to)], "cast",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", to, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_an_output_dtype_torch_cannot_carry_is_refused_not_returned_as_float32():
    assert ".to(torch.int32)" in convert(_cast_to(TensorProto.INT32)).source
    # refused (the Cast rule declines since exact versions; the output check stands behind it), never float32
    with pytest.raises(ConversionError, match="int4"):
        convert(_cast_to(TensorProto.INT4))


def test_the_emitter_raises_on_a_host_dtype_that_is_not_a_torch_dtype(mlp_path):
    module = convert(mlp_path).module
    download = next(n for n in module.graph.nodes if n.op == "to_torch")
    download.attrs["_torch_dtype"] = "floaty"
    wanted = r"internal error: ttnn.to_torch \(from 'output probs'\) names host dtype 'floaty'"
    with pytest.raises(VerificationError, match=wanted):
        emit_program(module, weights_file="w.npz", source_model="", options_text="", device_name="n150")
    assert "floaty" not in TORCH_DTYPES
