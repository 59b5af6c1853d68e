"""The generated program's main(): --outputs saves every output under its ONNX name, whatever the name (numpy.savez
takes the names as keywords, so outputs named `file` or `allow_pickle` crashed it or were dropped)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

import onnx2ttnn
from onnx2ttnn.sim import runtime

# names that collide with numpy.savez's own parameters (file, *args, allow_pickle, **kwds) or look odd in a zip
NAMES = ["file", "allow_pickle", "args", "kwds", "a/b.npy"]


def _model(path: Path) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32])
    ops = ["Relu", "Neg", "Abs", "Sigmoid", "Exp"]
    nodes = [helper.make_node(op, ["x"], [name], name=f"n{i}") for i, (op, name) in enumerate(zip(ops, NAMES))]
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 32]) for name in NAMES]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], outputs), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def test_outputs_are_saved_under_every_name(tmp_path: Path):
    model = _model(tmp_path / "names.onnx")
    program_path = tmp_path / "names_ttnn.py"
    onnx2ttnn.convert(str(model), str(program_path), dtype="fp32").write(str(program_path))
    spec = importlib.util.spec_from_file_location("names_main", program_path)
    program = importlib.util.module_from_spec(spec)
    x = np.linspace(-2, 2, 64, dtype=np.float32).reshape(2, 32)
    np.savez(tmp_path / "in.npz", x=x)
    runtime.configure("n150")
    with runtime.install():
        spec.loader.exec_module(program)
        program.main(["--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "out.npz")])
    with np.load(tmp_path / "out.npz", allow_pickle=False) as saved:
        assert sorted(saved.files) == sorted(NAMES)
        want = {"file": np.maximum(x, 0), "allow_pickle": -x, "args": np.abs(x), "kwds": 1 / (1 + np.exp(-x)),
                "a/b.npy": np.exp(x)}
        for name in NAMES:
            np.testing.assert_allclose(saved[name], want[name], rtol=2e-2, atol=2e-2, err_msg=name)
