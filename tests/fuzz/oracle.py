"""Run one fuzz case end to end and say how it ended.

A case is a checker-valid ModelProto.  It is converted in-process (fp32) and classified exactly as the CLI's
error boundary (onnx2ttnn/cli.py `boundary`) would: ConversionError, OSError and MemoryError are a clean
`error:` (exit 2), anything else an internal error (exit 3).  onnxruntime is the reference: a model it
refuses (its session, or its run on the seeded inputs) must be refused by convert; an accepted model's
program runs on the simulator and its outputs must match onnxruntime's (floats within FP32_RTOL/FP32_ATOL,
integers and booleans exactly).

Outcomes (`Outcome.kind`): "verified" and "refused" are fine, and so is "ort-gap": a valid model convert accepts
that onnxruntime refuses for a reason of its own (ORT_GAPS), so there is nothing to compare with, or whose
differences come from onnxruntime's MeanVarianceNormalization where the variance is 0 (NaN or +-1;
tests/fuzz/ort_mvn.py: the program matches onnxruntime's run of the model with the spec's function, which adds
1e-9, in its place, run in float64 for a float32 input),
or onnxruntime's uint8 x int8 integer kernels saturating at int16 (tests/fuzz/ort_u8s8.py: the program matches
onnxruntime's exact run of the model with those weights shifted to uint8), or whose differences lie where
onnxruntime's float32 value is itself beyond the tolerance from a float64 evaluation (or one that rounds each
node's values to float32) and the program's is no further (tests/fuzz/ill_conditioned.py: Atanh(Tanh(y))
amplifying one rounding of tanh).
The FINDINGS are defects:
- "internal": convert raised something that is not a ConversionError (exit 3);
- "traceback": a Python traceback reached stderr while converting;
- "accepted-invalid": onnxruntime refuses the model, convert accepts it;
- "sim-crash": the program fails on the simulator where onnxruntime ran the model;
- "mismatch": the program's outputs differ from onnxruntime's in fp32;
- "api": the program calls ttnn outside the real API manifest;
- "leak": device buffers left allocated after forward;
- "timeout": the case took longer than CASE_SECONDS;
- "crash": the process running the case died (tests/fuzz/worker.py).
"ort-timeout" is no finding: onnxruntime's reference did not end in REFERENCE_SECONDS (its run stopped there by
its terminate flag, onnx2ttnn/ort.py), so there is nothing to compare with; the model is still converted (a
refusal is "refused", a converter error a finding as ever).  tests/fuzz/worker.py runs the oracle in a child
process it can kill, for what neither the alarm nor that deadline stops; `on_phase` tells it the phase.
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import tempfile
import types
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import onnx
from onnx import helper

from tests.node.runner import execute

FINDINGS = ("internal", "traceback", "accepted-invalid", "sim-crash", "mismatch", "api", "leak", "timeout", "crash")
# onnxruntime's refusals of models the ONNX spec and its backend tests call valid
ORT_GAPS = (
    # no CPU kernel for a type the schema allows (ReduceMax-13 on bfloat16)
    r"^refused: onnxruntime refuses the model: Could not find an implementation",
    # float Mod with fmod=0: onnx 1.23's backend tests test_mod_float32_mixed_sign_fmod_0 and
    # test_mod_float_edge_cases_fmod_0_* define it (Python's remainder); onnxruntime insists on fmod=1
    r"running Mod node.*mod_internal::CallModImpl<T, typename std::enable_if<std::is_floating_point",
    # Cast with saturate=0 to a type that is not float 8: the spec says saturate applies to float 8 only (it is
    # ignored elsewhere); onnxruntime refuses the attribute
    r"^refused: onnxruntime refuses the model: .*Attribute saturate is only used for cast to float 8 types",
    # LSTM, GRU and RNN with layout=1 (batch first, opset 14): onnxruntime's CPU kernels refuse it
    r"^refused: onnxruntime refuses the model: .*Batchwise recurrent operations \(layout == 1\) are not supported",
    # LRN on an input of rank other than 4: the spec defines it for (N x C x D1 x ... x Dn); onnxruntime's CPU
    # kernel runs 4-D only (fuzz seed 71 case 312)
    r"running LRN node.*X_shape\.NumDimensions\(\) == 4 was false",
    # a float32 value made by Cast to double and back, read by an If / Loop / Scan body: onnxruntime's run loses it
    # ("Missing Input: t4") at every graph level, its optimizations off too (probed: through bool, int32 or float16
    # it runs; presumably its mandatory Cast clean-up drops the lossless pair, not the body's read), fuzz seed 127
    # case 1382
    r"^run fails: .*while running (If|Loop|Scan) node.*Missing Input: \S+",
    # an Einsum equation in implicit mode (no "->") with an upper-case label: the spec takes a-z and A-Z, numpy
    # runs it; onnxruntime's run says only letters are allowed ("CRD->DRC" runs; fuzz seed 151 case 1042)
    r"running Einsum node.*The only subscript labels allowed are lower-cased letters \(a-z\) and upper-cased",
    # Resize with exclude_outside=1 in nearest mode: the spec's flag sets the weights of taps outside the input to
    # 0, and nearest has no weights (onnx's reference evaluator runs it, as the program); onnxruntime refuses it
    # unless the mode is cubic or linear with antialias (fuzz seed 167 case 166 had -2, now refused by convert)
    r"^refused: onnxruntime refuses the model: .*exclude_outside can be set to 1 when \(1\) mode is CUBIC",
)
FP32_RTOL, FP32_ATOL = 1e-3, 1e-3  # the simulator computes fp32 in float32; ttnn's transcendental ops differ a little
CASE_SECONDS = 60
# onnxruntime's reference run stops here, leaving the case's other 40 s to the converter (a Loop of 2^30 iterations
# runs for hours: fuzz seed 163 case 1008; the campaign's references take 0.05 s a case on average)
REFERENCE_SECONDS = 20
on_phase: Optional[Callable[[str], None]] = None  # told "reference", "convert" or "program" as the case gets there
MAX_ELEMENTS = 1 << 22  # a case whose inferred tensors are larger is only converted, not run
# graph input types onnxruntime's Python API takes from numpy (not bfloat16, float8, int4, ...): a model with
# another input type is converted and its session opened, but not run
FEEDABLE = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16, onnx.TensorProto.INT64,
            onnx.TensorProto.INT32, onnx.TensorProto.INT16, onnx.TensorProto.INT8, onnx.TensorProto.UINT8,
            onnx.TensorProto.UINT16, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64, onnx.TensorProto.BOOL}


@dataclass
class Outcome:
    kind: str
    detail: str = ""
    ort: str = ""  # "ok", "refused: ...", "run fails: ...", "not run (large)"

    @property
    def finding(self) -> bool:
        return self.kind in FINDINGS


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` in the converter swallows it."""


@contextlib.contextmanager
def _deadline(seconds: int):
    def alarm(signum, frame):
        raise _Timeout()
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@contextlib.contextmanager
def captured_stderr():
    """What is written to file descriptor 2 (Python and C++ alike) within the block, in `.text` afterwards."""
    box = types.SimpleNamespace(text="")
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        try:
            import sys
            sys.stderr.flush()
            os.dup2(sink.fileno(), 2)
            yield box
        finally:
            import sys
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            box.text = sink.read().decode("utf-8", "replace")


def _np_dtype(elem_type: int):
    return helper.tensor_dtype_to_np_dtype(elem_type)


def make_feeds(model: onnx.ModelProto, rng: np.random.Generator, known: Optional[dict] = None) -> dict:
    """Seeded inputs for the graph inputs of `model`; `known` arrays of the right shape and dtype are used as
    they are (a seed model's own test data, whose indices are in range)."""
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in initializers:
            continue
        tt = vi.type.tensor_type
        shape = tuple(d.dim_value for d in tt.shape.dim)
        dtype = _np_dtype(tt.elem_type)
        given = (known or {}).get(vi.name)
        if given is not None and given.shape == shape and given.dtype == dtype:
            feeds[vi.name] = given
        elif dtype == np.bool_:
            feeds[vi.name] = rng.random(shape) < 0.5
        elif np.issubdtype(dtype, np.integer):
            feeds[vi.name] = rng.integers(0, 3, shape).astype(dtype)
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def _inputs_static(model: onnx.ModelProto) -> bool:
    initializers = {t.name for t in model.graph.initializer}
    for vi in model.graph.input:
        if vi.name in initializers:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
            return False
        if any(not d.HasField("dim_value") or d.dim_value <= 0 for d in tt.shape.dim):
            return False
        if tt.elem_type not in FEEDABLE:
            return False
    return True


def _largest_tensor(model: onnx.ModelProto) -> int:
    """Elements of the largest tensor lenient shape inference finds (0 when it cannot run)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:
        return 0
    largest = 0
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output) + list(inferred.graph.input):
        dims = vi.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            count = 1
            for d in dims:
                count *= max(d.dim_value, 0)
            largest = max(largest, count)
    return largest


def _crashes_onnxruntime(model: onnx.ModelProto) -> str:
    """Why onnxruntime would crash the process on `model` ('' when it would not): a node leaves out an input its
    schema requires (fuzz seed 101 case 1888: `Sum(x, "", c)` is a segmentation fault in onnxruntime's run, which
    would end the campaign), or has an attribute on which onnx's shape inference and onnxruntime's session crash
    (limits.py `crashes_inference`; fuzz seed 157 case 380), or a Loop's trip count M is a constant of no element
    (seed 179 case 972: a [0, 2, 4] M, a segmentation fault in onnxruntime 1.32's run; [2] is a clean refusal).
    Convert refuses each."""
    from onnx2ttnn.frontend.validate import _omitted_input
    from onnx2ttnn.limits import crashes_inference

    opset = next((e.version for e in model.opset_import if e.domain in ("", "ai.onnx")), 0)
    empty = {t.name for t in model.graph.initializer if 0 in t.dims}
    for node in model.graph.node:
        if "" in node.input and _omitted_input(node, opset):
            return "a required input left out"
        if crashes_inference(node):
            return "an attribute onnx's shape inference crashes on"
        if node.op_type == "Loop" and node.input and node.input[0] in empty:
            return "a Loop's trip count of no element"
    return ""


def _reference(model: onnx.ModelProto, feeds: dict) -> tuple[str, Optional[dict]]:
    """('ok', outputs) | ('refused: why', None) | ('run fails: why', None) | ('timeout: ...', None) from
    onnxruntime (its run stopped at REFERENCE_SECONDS), at verify's level:
    basic for a model with QDQ nodes (onnx2ttnn/reference.py `reference_level`).  (Fuzz seed 83 cases 185,
    1289: at the default level onnxruntime's QDQ propagation across a Reshape made a QuantizeLinear of its own,
    int8 output against a uint8 zero point, and refused the valid model.)"""
    from onnx2ttnn import ort
    from onnx2ttnn.errors import ConversionError
    from onnx2ttnn.reference import reference_level

    names = [o.name for o in model.graph.output]
    try:
        session = ort.session(model.SerializeToString(), basic=reference_level(model) == "basic")
    except ConversionError as exc:
        return f"refused: {exc}", None
    try:
        return "ok", dict(zip(names, ort.run(session, names, feeds, REFERENCE_SECONDS)))
    except ort.RunTimeout as exc:
        return f"timeout: {exc}", None
    except ConversionError as exc:
        return f"run fails: {exc}", None


def _phase(name: str) -> None:
    if on_phase is not None:
        on_phase(name)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}"


def run_case(model: onnx.ModelProto, feeds_rng: np.random.Generator, known: Optional[dict] = None) -> Outcome:
    """Convert, compare with onnxruntime and run on the simulator one checker-valid model."""
    try:
        with _deadline(CASE_SECONDS):
            return _run_case(model, feeds_rng, known)
    except _Timeout:
        return Outcome("timeout", f"over {CASE_SECONDS} s")


def _run_case(model: onnx.ModelProto, feeds_rng: np.random.Generator, known: Optional[dict]) -> Outcome:
    from onnx2ttnn.convert import convert
    from onnx2ttnn.errors import ConversionError

    crashes = _crashes_onnxruntime(model)  # (before the oracle's own shape inference, which would crash too)
    large = not crashes and _largest_tensor(model) > MAX_ELEMENTS
    runnable = _inputs_static(model) and not large
    feeds = make_feeds(model, feeds_rng, known) if runnable else {}
    if crashes:
        ort_state, expected = f"refused: {crashes} (onnxruntime crashes the process)", None
    elif runnable:
        _phase("reference")
        ort_state, expected = _reference(model, feeds)
    else:
        from onnx2ttnn import ort
        try:
            ort.session(model.SerializeToString())
            ort_state, expected = "not run (large, symbolic or unfeedable inputs)", None
        except ConversionError as exc:
            ort_state, expected = f"refused: {exc}", None
    conversion = None
    _phase("convert")
    with captured_stderr() as err:
        try:
            conversion = convert(model, dtype="fp32")
        except (ConversionError, OSError, MemoryError) as exc:  # the CLI boundary: `error:`, exit 2
            refusal = _first_line(exc)
        except Exception as exc:  # the CLI boundary: internal error, exit 3
            return Outcome("internal", _first_line(exc), ort_state)
    if "Traceback (most recent call last)" in err.text:
        return Outcome("traceback", err.text[-600:], ort_state)
    if conversion is None:
        return Outcome("refused", refusal, ort_state)
    if any(re.search(pattern, ort_state) for pattern in ORT_GAPS):
        return Outcome("ort-gap", ort_state, ort_state)
    if ort_state.startswith("refused") or ort_state.startswith("run fails"):
        return Outcome("accepted-invalid", ort_state, ort_state)
    if ort_state.startswith("timeout"):
        return Outcome("ort-timeout", "converted; not compared: onnxruntime's reference did not end", ort_state)
    if expected is None:
        return Outcome("verified", "converted; not run (large or symbolic inputs)", ort_state)
    from tests.ttnn_api import check_source

    problems = check_source(conversion.source)
    if problems:
        return Outcome("api", "; ".join(problems[:3]), ort_state)
    _phase("program")
    try:
        got, leaks = execute(conversion, feeds)
    except _Timeout:
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure of the program is the finding
        return Outcome("sim-crash", _first_line(exc), ort_state)
    exact: dict = {}  # the float64 evaluations, made at the first mismatch
    for name, want in expected.items():
        problem = compare(got.get(name), np.asarray(want))
        if problem and _mvn_gap(model, feeds, got):
            return Outcome("ort-gap", f"output {name!r}: {problem}; onnxruntime's MeanVarianceNormalization gives "
                                      "NaN where the variance is 0: the model with the spec's function (1e-9 added "
                                      "to the deviation) matches the program", ort_state)
        if problem and _u8s8_gap(model, feeds, got):
            return Outcome("ort-gap", f"output {name!r}: {problem}; onnxruntime's uint8 x int8 kernel saturates pairs "
                                      "of products at int16 (x86 without VNNI): the model with the weight shifted to "
                                      "uint8 matches the program", ort_state)
        if problem and _ill_conditioned(model, feeds, exact, name, got.get(name), np.asarray(want)):
            return Outcome("ort-gap", f"output {name!r}: {problem}; ill-conditioned: onnxruntime's float32 value "
                                      "is itself beyond the tolerance from a float64 evaluation, the program's no "
                                      "further (tests/fuzz/ill_conditioned.py)", ort_state)
        if problem:
            return Outcome("mismatch", f"output {name!r}: {problem}", ort_state)
    if leaks:
        return Outcome("leak", f"{len(leaks)} buffer(s): {leaks[0]}", ort_state)
    return Outcome("verified", "", ort_state)


def _u8s8_gap(model: onnx.ModelProto, feeds: dict, got: dict) -> bool:
    """Whether the model has a uint8 x int8 integer op (tests/fuzz/ort_u8s8.py) and the program matches, in
    every output, onnxruntime's run of the same model with those weights shifted to uint8 (its exact kernel)."""
    from tests.fuzz.ort_u8s8 import u8s8_variant

    variant = u8s8_variant(model)
    if variant is None:
        return False
    state, expected = _reference(variant, feeds)
    return state == "ok" and all(compare(got.get(name), np.asarray(want)) == "" for name, want in expected.items())


def _ill_conditioned(model: onnx.ModelProto, feeds: dict, exact: dict, name: str, got, want: np.ndarray) -> bool:
    """Whether onnxruntime's float32 `want` is beyond the tolerance from the float64 value, or from the values of
    float32 arithmetic rounded correctly op by op, wherever the program differs from it, the program no further
    (`exact` caches both evaluations: "float64" and "rounded")."""
    from tests.fuzz.ill_conditioned import closer_than_onnxruntime, float64_outputs, rounded_outputs

    for kind, evaluate in (("float64", float64_outputs), ("rounded", rounded_outputs)):
        if kind not in exact:
            exact[kind] = evaluate(model, feeds)
        if closer_than_onnxruntime(exact[kind].get(name), got, want, FP32_RTOL, FP32_ATOL):
            return True
    return False


def _mvn_gap(model: onnx.ModelProto, feeds: dict, got: dict) -> bool:
    """Whether the model has a MeanVarianceNormalization (tests/fuzz/ort_mvn.py) and the program matches, in
    every output, onnxruntime's run of the model with the spec's function in its place (onnxruntime's own kernel
    gives NaN where the variance is 0; the NaNs may travel through later ops)."""
    from tests.fuzz.ort_mvn import spec_variant

    variant = spec_variant(model)
    if variant is None:
        return False
    state, expected = _reference(variant, feeds)
    return state == "ok" and all(compare(got.get(name), np.asarray(want)) == "" for name, want in expected.items())


def compare(got, want: np.ndarray) -> str:
    """'' when the program's `got` matches onnxruntime's `want`, else what differs."""
    if got is None:
        return "missing from the program's outputs"
    got = np.asarray(got)
    if got.shape != want.shape:
        return f"shape {got.shape}, onnxruntime {want.shape}"
    if want.dtype.kind in "biu":
        if not np.array_equal(got.astype(np.float64), want.astype(np.float64)):
            bad = int(np.sum(got.astype(np.float64) != want.astype(np.float64)))
            return f"{bad} of {want.size} integer/boolean values differ"
        return ""
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.allclose(g, w, rtol=FP32_RTOL, atol=FP32_ATOL, equal_nan=True):
        with np.errstate(invalid="ignore"):
            diff = np.abs(g - w)
            agree = (g == w) | (np.isnan(g) & np.isnan(w))
        diff = diff[np.isfinite(diff)]
        nan_or_inf = int(np.sum((~np.isfinite(g) | ~np.isfinite(w)) & ~agree))  # NaN against inf counts too
        return (f"{nan_or_inf} non-finite mismatches, max abs diff {diff.max() if diff.size else 0:.4g} "
                f"(rtol {FP32_RTOL}, atol {FP32_ATOL})")
    return ""
