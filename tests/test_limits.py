"""onnx2ttnn/limits.py: a model beyond a limit is refused with one error (exit 2) naming what and by how much,
before any work is done; models within the limits convert as before."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.limits import MAX_RANGE_ELEMENTS, MAX_TENSOR_ELEMENTS, MAX_WINDOW_ELEMENTS, element_bytes
from tests.test_cli import assert_clean_failure, run_inprocess, run_subprocess

V = helper.make_tensor_value_info
F = TensorProto.FLOAT


def _save(path: Path, nodes, inputs, outputs, initializers=(), opset=17) -> Path:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _const(name: str, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype), name)


def _refused(tmp_path: Path, model: Path, *extra: str, mode: str = "inprocess") -> str:
    runner = run_inprocess if mode == "inprocess" else run_subprocess
    start = time.perf_counter()
    run = runner(["convert", str(model), "-o", str(tmp_path / "out.py"), *extra], tmp_path)
    elapsed = time.perf_counter() - start
    msg = assert_clean_failure(run)
    assert elapsed < 60, f"refused only after {elapsed:.0f} s"
    assert not (tmp_path / "out.py").exists()
    return msg


# --- opsets, strings -------------------------------------------------------------------------------------------
def test_an_opset_onnx_does_not_know_is_refused(tmp_path):
    """opset 29 converted without a word, though onnx 1.23 knows 28 and onnxruntime refuses it."""
    known = onnx.defs.onnx_opset_version()
    model = _save(tmp_path / "future.onnx", [helper.make_node("Relu", ["x"], ["y"])], [V("x", F, [2, 4])],
                  [V("y", F, [2, 4])], opset=known + 1)
    msg = _refused(tmp_path, model)
    assert f"opset {known + 1} of ai.onnx" in msg and f"opsets 1 to {known}" in msg


def test_the_newest_known_opset_converts(tmp_path):
    known = onnx.defs.onnx_opset_version()
    model = _save(tmp_path / "newest.onnx", [helper.make_node("Relu", ["x"], ["y"])], [V("x", F, [2, 4])],
                  [V("y", F, [2, 4])], opset=known)
    run = run_inprocess(["convert", str(model), "-o", str(tmp_path / "out.py")], tmp_path)
    assert run.code == 0, run.stderr


def test_string_tensors_are_refused_and_named(tmp_path):
    """A string graph input converted into a program that uploads it as bfloat16."""
    s = TensorProto.STRING
    model = _save(tmp_path / "s.onnx", [helper.make_node("Identity", ["s"], ["t"])], [V("s", s, [2])], [V("t", s, [2])])
    assert "string tensors cannot be converted (ttnn has no string type): input 's', output 't'" in \
        _refused(tmp_path, model)
    init = helper.make_tensor("labels", s, [2], [b"cat", b"dog"])
    model = _save(tmp_path / "i.onnx", [helper.make_node("Relu", ["x"], ["y"])], [V("x", F, [2])], [V("y", F, [2])],
                  [init])
    assert "initializer 'labels'" in _refused(tmp_path, model)
    const = helper.make_node("Constant", [], ["c"], value=helper.make_tensor("v", s, [1], [b"a"]))
    model = _save(tmp_path / "c.onnx", [const, helper.make_node("Relu", ["x"], ["y"])], [V("x", F, [2])],
                  [V("y", F, [2])])
    assert "constant 'c'" in _refused(tmp_path, model)


# --- the work one attribute asks for ---------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["AveragePool", "MaxPool"])
def test_a_pool_window_beyond_the_cap_is_refused_before_lowering(tmp_path, op):
    """A 200-byte AveragePool with kernel_shape [2**31, 2] built 2**32 slices (23 GB, then MemoryError)."""
    model = _save(tmp_path / "pool.onnx", [helper.make_node(op, ["x"], ["y"], kernel_shape=[2**31, 2])],
                  [V("x", F, [1, 1, 4, 4])], [V("y", F, list("nchw"))])
    msg = _refused(tmp_path, model, mode="subprocess")
    assert f"{op} 'y': kernel_shape [2147483648, 2] is a window of 4294967296 elements" in msg
    assert f"MAX_WINDOW_ELEMENTS = {MAX_WINDOW_ELEMENTS}" in msg


def test_a_window_larger_than_its_input_within_the_cap_converts(tmp_path):
    """EfficientNet's AvgPool2d(kernel 320) over a 2x2 map with ceil_mode: valid, and a global pool."""
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[320, 320], strides=[320, 320], ceil_mode=1)
    model = _save(tmp_path / "global.onnx", [node], [V("x", F, [1, 8, 2, 2])], [V("y", F, [1, 8, 1, 1])])
    run = run_inprocess(["verify", str(model)], tmp_path)
    assert run.code == 0, run.stdout + run.stderr


SIZES = [2**20, 2**20]  # 2**40 elements


@pytest.mark.parametrize("case", ["Tile", "Expand", "ConstantOfShape", "Resize-sizes", "Resize-scales", "Range"])
def test_a_size_operand_beyond_the_cap_is_refused_before_shape_inference(tmp_path, case):
    """Range's data propagation in shape inference never returned; the others folded or emitted a program
    that could never run."""
    x = V("x", F, [1, 1])
    if case == "Tile":
        nodes, inits, words = [helper.make_node("Tile", ["x", "k"], ["y"])], [_const("k", SIZES)], "repeats"
    elif case == "Expand":
        nodes, inits, words = [helper.make_node("Expand", ["x", "k"], ["y"])], [_const("k", SIZES)], "shape"
    elif case == "ConstantOfShape":
        nodes = [helper.make_node("ConstantOfShape", ["k"], ["c"]), helper.make_node("Add", ["x", "c"], ["y"])]
        inits, words = [_const("k", SIZES)], "shape"
    elif case == "Resize-sizes":
        x = V("x", F, [1, 1, 4, 4])
        nodes = [helper.make_node("Resize", ["x", "", "", "k"], ["y"], mode="nearest")]
        inits, words = [_const("k", [1, 1] + SIZES)], "sizes"
    elif case == "Resize-scales":
        x = V("x", F, [1, 1, 4, 4])
        nodes = [helper.make_node("Resize", ["x", "", "k"], ["y"], mode="nearest")]
        inits = [_const("k", [1, 1] + SIZES, np.float32)]
        words = "scales [1.0, 1.0, 1048576.0, 1048576.0] ask for 1099511627776 times the input's elements"
    else:
        nodes = [helper.make_node("Range", ["a", "b", "d"], ["r"]), helper.make_node("Add", ["x", "r"], ["y"])]
        inits = [_const("a", 0.0, np.float32), _const("b", 2.0**40, np.float32), _const("d", 1.0, np.float32)]
        words = "start 0, limit 1099511627776, delta 1 make 1099511627776 elements"
        x = V("x", F, [1])
    model = _save(tmp_path / "big.onnx", nodes, [x], [V("y", F, list("abcd")[:len(x.type.tensor_type.shape.dim)])],
                  inits)
    msg = _refused(tmp_path, model)
    assert words in msg, msg
    limit = MAX_RANGE_ELEMENTS if case == "Range" else MAX_TENSOR_ELEMENTS
    assert f"= {limit}" in msg


def test_a_range_within_the_cap_folds(tmp_path):
    nodes = [helper.make_node("Range", ["a", "b", "d"], ["r"]), helper.make_node("Add", ["x", "r"], ["y"])]
    inits = [_const("a", 0, np.int64), _const("b", 16, np.int64), _const("d", 2, np.int64)]
    model = _save(tmp_path / "r.onnx", nodes, [V("x", TensorProto.INT64, [8])], [V("y", TensorProto.INT64, [8])],
                  inits)
    conversion = onnx2ttnn.convert(str(model))
    assert "Range" not in {n.op for n in conversion.module.graph.nodes}


# --- device capacity -------------------------------------------------------------------------------------------
def test_a_tensor_larger_than_the_chips_dram_is_refused(tmp_path):
    """A 1x3x100000x100000 input (60 GB in bf16 on a 12.9 GB n150) converted with exit 0."""
    model = _save(tmp_path / "huge.onnx", [helper.make_node("Relu", ["x"], ["y"])], [V("x", F, [1, 3, 100000, 100000])],
                  [V("y", F, [1, 3, 100000, 100000])])
    msg = _refused(tmp_path, model)
    assert ("tensor 'x' [1, 3, 100000, 100000] needs at least 60000000000 B (60.0 GB) of device memory, more than "
            "the 12872318208 B (12.9 GB) of DRAM of one n150 chip (12 banks of 1072693184 B)") in msg
    assert "120000000000 B" in _refused(tmp_path, model, "--dtype", "fp32")
    assert "of one p150 chip (8 banks of 4277141376 B)" in _refused(tmp_path, model, "--device", "p150")


def test_an_input_shape_override_beyond_dram_is_refused(tmp_path):
    model = _save(tmp_path / "sym.onnx", [helper.make_node("Relu", ["x"], ["y"])], [V("x", F, ["N", 64])],
                  [V("y", F, ["N", 64])])
    assert "tensor 'x' [1000000000, 64] needs at least" in _refused(tmp_path, model, "--input-shape", "x=1000000000,64")


def test_a_plan_whose_live_buffers_exceed_dram_is_refused(tmp_path):
    """Each tensor fits, but a, b and a + b live at once do not: 3 x 5.4 GB on a 12.9 GB n150."""
    shape = [32, 2**26 + 2**24]
    model = _save(tmp_path / "plan.onnx", [helper.make_node("Add", ["a", "b"], ["y"])],
                  [V("a", F, shape), V("b", F, shape)], [V("y", F, shape)])
    msg = _refused(tmp_path, model, "--memory", "dram")
    # each: 2_621_440 tiles of 2048 B, ceil(2_621_440 / 12) = 218_454 in a bank; 3 x 218_454 x 2048 B per bank
    assert msg.startswith("error: the program needs 16106176512 B (16.1 GB) of DRAM at once (1342181376 B (1.3 GB) "
                          "in each of the 12 banks")
    assert "at ttnn.add writing 'y'), more than the 12872318208 B (12.9 GB) of one n150 chip" in msg
    run = run_inprocess(["convert", str(model), "-o", str(tmp_path / "p.py"), "--device", "p150"], tmp_path)
    assert run.code == 0, run.stderr  # 34 GB of DRAM hold it


# --- input shapes ----------------------------------------------------------------------------------------------
def test_input_shape_dims_beyond_int64_are_refused(tmp_path):
    """--input-shape x=2**70,64 was an internal error (protobuf's int64 field refused the value)."""
    model = _save(tmp_path / "sym.onnx", [helper.make_node("Relu", ["x"], ["y"])], [V("x", F, ["N", 64])],
                  [V("y", F, ["N", 64])])
    msg = _refused(tmp_path, model, "--input-shape", f"x={2**70},64")
    assert f"--input-shape 'x={2**70},64': every dimension must be from 1 to {2**63 - 1}" in msg
    with pytest.raises(ConversionError, match=f"dimension {2**70} is not an integer from 1 to {2**63 - 1}"):
        onnx2ttnn.convert(str(model), input_shapes={"x": (2**70, 64)})


def test_element_bytes_are_the_narrowest_device_dtype():
    assert element_bytes(np.float32, "bf16") == 2 and element_bytes(np.float64, "fp32") == 4
    assert element_bytes(np.int64, "bf16") == 2 and element_bytes(np.bool_, "fp32") == 1


def test_the_error_catalogue_states_every_limit_as_limits_py_does():
    text = (Path(__file__).resolve().parents[1] / "docs" / "errors.md").read_text()
    for name, value in (("MAX_WINDOW_ELEMENTS", MAX_WINDOW_ELEMENTS), ("MAX_TENSOR_ELEMENTS", MAX_TENSOR_ELEMENTS),
                        ("MAX_RANGE_ELEMENTS", MAX_RANGE_ELEMENTS)):
        assert f"{name} = {value}" in text, name


def test_tensors_of_a_type_numpy_lacks_are_measured_too(tmp_path):
    """graphsurgeon keeps bfloat16 as ONNX's enum (16), which np.dtype refuses: the check raised TypeError."""
    model = _save(tmp_path / "bf.onnx", [helper.make_node("Cast", ["x"], ["y"], to=F)],
                  [V("x", TensorProto.BFLOAT16, [2, 4])], [V("y", F, [2, 4])])
    onnx2ttnn.convert(str(model))
    assert element_bytes(TensorProto.BFLOAT16, "bf16") == 1


def test_a_negative_gather_nd_batch_dims_is_refused_before_shape_inference_crashes(tmp_path):
    """Fuzz seed 157 case 380: GatherND with batch_dims -3 ended the converter with a segmentation fault in
    onnx's shape inference (onnxruntime's session crashes on it too); now one error naming the node, exit 2
    (run in a subprocess: before the check, the crash would end the test run)."""
    node = helper.make_node("GatherND", ["x", "i"], ["y"], name="gather", batch_dims=-3)
    model = _save(tmp_path / "m.onnx", [node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])], [_const("i", [[0]])], opset=21)
    msg = _refused(tmp_path, model, mode="subprocess")
    assert msg == "error: invalid model: node 'gather' (GatherND): batch_dims -3 must not be negative"
