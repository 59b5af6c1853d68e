"""Run one node-test case: convert in-process, run the program on the simulator, compare with the expected outputs.

fp32 (the pass criterion): `convert(dtype="fp32")` (the default --memory auto), every output must have the expected
dtype and shape and satisfy np.testing.assert_allclose with the case's rtol/atol, the device must hold no
leaked buffers, and the program must fit the real ttnn API manifest.  bf16 (reported only): the default
conversion, every output of the expected shape with PCC >= 0.99 (verify's threshold).
Results are cached per (case, dtype) for the whole session.
"""
from __future__ import annotations

import io
import types
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.emit.weights import npz_bytes
from onnx2ttnn.verify import PCC_THRESHOLD, pcc
from tests.node.cases import EXPANDED, NodeCase, by_name
from tests.node.shape_operands import shape_operand_names
from tests.ttnn_api import check_source

DTYPES = ("fp32", "bf16")


@dataclass(frozen=True)
class Result:
    passed: bool
    stage: str  # "convert", "run", "compare" or "ok"
    message: str = ""


_RESULTS: dict[tuple[str, str], Result] = {}


def as_array(value) -> np.ndarray:
    """A data-set value (ndarray, numpy scalar or TensorProto) as an ndarray."""
    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    return np.asarray(value)


def result(case: NodeCase, dtype: str) -> Result:
    """The cached result of `case` in `dtype` ("fp32" or "bf16")."""
    key = (case.name, dtype)
    if key not in _RESULTS:
        _RESULTS[key] = _run(case, dtype)
    return _RESULTS[key]


def cached(dtype: str) -> dict[str, Result]:
    """The results computed so far in `dtype`, by case name."""
    return {name: r for (name, d), r in _RESULTS.items() if d == dtype}


def _run(case: NodeCase, dtype: str) -> Result:
    test = case.case
    model, feeds = bind_shape_operands(test, base_case(case))
    try:
        conversion = convert(model, dtype=dtype)  # the default memory policy (auto)
    except Exception as exc:  # any failure to convert a claimed op is a failure of the case
        return Result(False, "convert", f"{type(exc).__name__}: {_first_line(exc)}")
    if dtype == "fp32":
        problems = check_source(conversion.source)
        if problems:
            return Result(False, "convert", "program does not fit the ttnn API: " + "; ".join(problems[:3]))
    try:
        got, leaks = execute(conversion, feeds)
    except Exception as exc:
        return Result(False, "run", f"{type(exc).__name__}: {_first_line(exc)}")
    if leaks:
        return Result(False, "run", f"{len(leaks)} leaked device buffer(s): {leaks[0]}")
    names = [vi.name for vi in test.model.graph.output]
    for name, want in zip(names, (as_array(v) for v in test.data_sets[0][1])):
        problem = _compare(np.asarray(got[name]), want, dtype, test.rtol, test.atol)
        if problem:
            return Result(False, "compare", f"output {name!r}: {problem}")
    return Result(True, "ok")


def base_case(case: NodeCase):
    """The one-node backend test an expanded case expands (None for a one-node case)."""
    if len(case.case.model.graph.node) == 1:
        return None
    base = by_name().get(EXPANDED.sub("", case.name))
    return base.case if base is not None else None


def bind_shape_operands(test, base=None) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The case's model with its shape operands made initializers (tests/node/shape_operands.py; for an
    expanded case also those its one-node `base` case binds), and the remaining runtime inputs."""
    initializers = {t.name for t in test.model.graph.initializer}
    names = [vi.name for vi in test.model.graph.input if vi.name not in initializers]
    values = dict(zip(names, (as_array(v) for v in test.data_sets[0][0])))
    bound = shape_operand_names(test.model, base.model if base is not None else None)
    if not bound:
        return test.model, values
    model = onnx.ModelProto()
    model.CopyFrom(test.model)
    kept = [vi for vi in model.graph.input if vi.name not in bound]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    model.graph.initializer.extend(numpy_helper.from_array(values[name], name) for name in sorted(bound))
    return model, {k: v for k, v in values.items() if k not in bound}


def execute(conversion, feeds: dict[str, np.ndarray]) -> tuple[dict, list]:
    """Run the generated program on the simulator; ({output name: ndarray}, leaked buffers).  Also the fuzz
    oracle's runner (tests/fuzz/oracle.py)."""
    import torch

    from onnx2ttnn.sim import runtime

    program = types.ModuleType("node_case_program")
    runtime.configure("n150")
    with runtime.install() as ttnn:
        exec(compile(conversion.source, "<node case program>", "exec"), program.__dict__)
        device = ttnn.open_device(device_id=0, l1_small_size=16384)
        try:
            weights = io.BytesIO(npz_bytes(conversion.program.weights))
            # host regions' models from memory (the program would read them from the files beside its weights)
            params = program.load_parameters(device, weights, regions=conversion.program.regions) \
                if conversion.program.regions else program.load_parameters(device, weights)
            args = {}
            for ident, (onnx_name, _, torch_dtype) in program.INPUTS.items():
                value = feeds[onnx_name]
                if value.dtype.name == "bfloat16":  # numpy's bfloat16 (ml_dtypes) has no torch counterpart
                    value = value.astype(np.float32)
                args[ident] = torch.from_numpy(np.array(value)).to(getattr(torch, torch_dtype))
            outputs = program.forward(device, params, **args)
            for tensor in params.values():
                if isinstance(tensor, ttnn.Tensor) and tensor.storage_type() == ttnn.StorageType.DEVICE:
                    ttnn.deallocate(tensor)
        finally:
            ttnn.close_device(device)
        leaks = [str(b) for b in runtime.leaks(device)]
    return {name: _numpy(t) for name, t in outputs.items()}, leaks


def _numpy(tensor) -> np.ndarray:
    import torch

    if tensor.dtype == torch.bfloat16:
        import ml_dtypes

        return tensor.float().numpy().astype(ml_dtypes.bfloat16)
    return tensor.numpy()


def _compare(got: np.ndarray, want: np.ndarray, dtype: str, rtol: float, atol: float) -> str:
    """'' when `got` matches `want`, else what differs."""
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if dtype == "bf16":
        value = pcc(got.astype(np.float32), want.astype(np.float32))
        return "" if value >= PCC_THRESHOLD["bf16"] else f"PCC {value:.4f} < {PCC_THRESHOLD['bf16']}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    try:
        if want.dtype.name == "bfloat16":
            np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=rtol, atol=atol)
        elif want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(got, want)
    except AssertionError as exc:
        return " ".join(str(exc).split())[:300]
    return ""


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return " | ".join(line.strip() for line in text[:3])[:300]
