"""verify(): convert a model, run the generated program on the ttnn simulator and compare with onnxruntime.

The report gives, per output, shape, PCC, max abs / rel error and pass/fail, plus peak L1 per core, peak DRAM
per bank and leaked buffers.  Float outputs pass at PCC >= PCC_THRESHOLD (the reference's sigmoids in float64, and a
sigmoid output wholly in its exponential tail compared by its logits: reference.py); integer and boolean outputs must
equal onnxruntime's exactly (a PCC would call an integer off by 66 in 40001 a pass), and the report says so.  With per_op, every intermediate that has an ONNX
counterpart is compared and the first op whose PCC falls below the threshold is named.  The inputs (seeded, an .npz
or a dict, checked against the program's) are read by verify_inputs.py.
"""
from __future__ import annotations

import importlib.util
import os
import tempfile
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import onnx

from onnx2ttnn.convert import convert
from onnx2ttnn import ort
from onnx2ttnn.errors import ConversionError, VerificationError
from onnx2ttnn.messages import one_line
from onnx2ttnn.reference import (PCC_THRESHOLD, accurate_sigmoids, close_excess, in_exponential_tail, logits,
                                  reference_level, sigmoid_outputs)
from onnx2ttnn.verify_inputs import read_inputs, torch_input
from onnx2ttnn.verify_values import is_structured, walk



@dataclass
class OutputCheck:
    name: str
    shape: tuple
    pcc: float
    max_abs: float
    max_rel: float
    passed: bool
    exact: bool = False  # an integer or boolean output, compared element for element
    logits: bool = False  # a sigmoid output in its exponential tail, compared by its logits (reference.py)
    value: bool = False  # a sequence or map (verify_values.py): structure and integers exact, floats close
    mismatch: str = ""  # where a sequence or map first differs


@dataclass
class VerifyReport:
    outputs: list[OutputCheck]
    threshold: float
    peak_l1_per_core: int = 0
    peak_dram_per_bank: int = 0
    leaks: list = field(default_factory=list)
    first_divergent: Optional[str] = None  # "op_type 'node name' (tensor 'x', PCC 0.42)"
    per_op: list = field(default_factory=list)  # (onnx tensor, node, pcc)
    memory_trace: list = field(default_factory=list)  # with trace: (ttnn call, L1 B/bank, DRAM B/bank)
    conversion: Optional[object] = field(default=None, repr=False)  # the Conversion that was run

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outputs) and not self.leaks

    def text(self) -> str:
        lines = [f"{'output':28} {'shape':18} {'PCC':>10} {'max abs':>10} {'max rel':>10}  result"]
        for o in self.outputs:
            rule = "exact: integer/boolean output" if o.exact else f"PCC >= {self.threshold}"
            rule = f"sequence/map: keys and integers exact, floats PCC >= {self.threshold}" if o.value else rule
            rule += f"; {ascii(o.mismatch)[1:-1]}" if o.mismatch else ""
            rule += ", of the logits: all values in sigmoid's exponential tail" if o.logits else ""
            lines.append(f"{ascii(o.name)[1:-1][:28]:28} {str(o.shape):18} {o.pcc:10.6f} {o.max_abs:10.4g} "
                         f"{o.max_rel:10.4g}  {'pass' if o.passed else 'FAIL'} ({rule})")
        lines.append(f"peak L1 per core: {self.peak_l1_per_core} B; peak DRAM per bank: {self.peak_dram_per_bank} B")
        lines.append(f"leaked buffers: {len(self.leaks)}" + (f" {self.leaks[:5]}" if self.leaks else ""))
        if self.per_op:
            lines.append(f"per-op: {len(self.per_op)} intermediates compared; first below threshold: "
                         f"{self.first_divergent or 'none'}")
        lines.append("PASS" if self.passed else "FAIL")
        return "\n".join(lines)


def pcc(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation; equal constant arrays give 1.0, and NaNs count as a total mismatch.  Two values (a
    binary classifier's probabilities) are judged as a constant output is, by closeness (1.0 or 0.0): their
    Pearson correlation is +-1 whatever they are (PP-OCRv5's orientation classifier passed at 1.0 with its
    probabilities 0.106 off)."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        return 0.0
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return 0.0
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(a[~finite], b[~finite]):
        return 0.0
    a, b = a[finite], b[finite]
    if a.size == 0 or np.array_equal(a, b):
        return 1.0
    if a.std() == 0 or b.std() == 0 or a.size == 2:
        return 1.0 if close_excess(a, b) <= 1.0 else 0.0  # (reference.CLOSE_RTOL, CLOSE_ATOL)
    return float(np.corrcoef(a, b)[0, 1])


def is_exact(want: np.ndarray) -> bool:
    """Whether onnxruntime's value is compared exactly: integers and booleans."""
    return np.asarray(want).dtype.kind in "biu"


def compare(name: str, got: np.ndarray, want: np.ndarray, threshold: float, sigmoid: bool = False) -> OutputCheck:
    """Integer and boolean outputs pass only when every element equals onnxruntime's (compared as Python
    integers: no float64 rounding of large int64 values); float outputs pass at PCC >= threshold; a `sigmoid`
    output whose reference values all lie in the exponential tail, by the PCC of its logits (reference.py)."""
    if is_structured(want):
        return _compare_structured(name, got, want, threshold)
    exact = is_exact(want)
    got, want = np.asarray(got), np.asarray(want)
    equal = exact and got.shape == want.shape and _exactly_equal(got, want)
    by_logits = sigmoid and not exact and in_exponential_tail(want)
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    value = pcc(*((logits(got), logits(want)) if by_logits else (got, want))) if got.shape == want.shape else 0.0
    diff = np.abs(got - want) if got.shape == want.shape else np.array([np.inf])
    scale = np.maximum(np.abs(want), 1e-6) if got.shape == want.shape else np.array([1.0])
    max_abs, max_rel = _largest(diff), _largest(diff / scale)
    return OutputCheck(name, tuple(want.shape), value, max_abs, max_rel, equal if exact else value >= threshold,
                       exact, by_logits)


def _compare_structured(name: str, got, want, threshold: float) -> OutputCheck:
    """A sequence or map onnxruntime returned (verify_values.py): it passes when the structure, keys and
    integer leaves are equal and its float leaves, gathered in order, pass as a float output's values would
    (PCC >= threshold; by closeness when constant, `pcc`)."""
    found = walk(got, want)
    a, b = found.floats()
    diff = np.abs(a - b) if not found.mismatch else np.array([np.inf])
    scale = np.maximum(np.abs(b), 1e-6) if not found.mismatch else np.array([1.0])
    value = pcc(a, b) if not found.mismatch else 0.0
    shape = (len(want),) if isinstance(want, (list, tuple)) else ()
    return OutputCheck(name, shape, value, _largest(diff), _largest(diff / scale), value >= threshold, value=True,
                       mismatch=found.mismatch)


def _largest(values: np.ndarray) -> float:
    """The largest value that is not NaN (NaN when all are, 0 for none)."""
    kept = values[~np.isnan(values)]
    return float(kept.max()) if kept.size else (float("nan") if values.size else 0.0)


def _exactly_equal(got: np.ndarray, want: np.ndarray) -> bool:
    """Element for element, as Python integers (a float result counts only where it holds an integer)."""
    if got.dtype.kind == "f":
        if not (np.all(np.isfinite(got)) and np.array_equal(got, np.round(got))):
            return False
        got = np.array([int(v) for v in got.ravel()], dtype=object).reshape(got.shape)
    return bool(np.array_equal(got.astype(object), want.astype(object)))


def verify(model, *, inputs=None, per_op: bool = False, device: str = "n150", conversion=None,
           trace: bool = False, **options) -> VerifyReport:
    """Convert `model`, run it on the simulator, compare with onnxruntime; returns a VerifyReport.

    `inputs`: None (seeded random), a path to an .npz keyed by ONNX input names, or a dict of arrays.
    `conversion`: an onnx2ttnn.convert() result of `model` to run instead of converting again.
    `trace`: record the memory in use after every ttnn call of forward (report.memory_trace).
    Other keyword arguments are conversion options (memory, dtype, input_shapes, ...).
    Raises ConversionError for bad input: the model (convert's errors), an --inputs file that is not an .npz
    of arrays of the inputs' shapes, a model onnxruntime refuses or cannot run on the inputs (its reason);
    VerificationError when the generated program fails on the simulator where onnxruntime did not (a bug).
    """
    threshold = PCC_THRESHOLD[conversion.options.dtype if conversion else options.get("dtype", "auto")]
    with tempfile.TemporaryDirectory(prefix="onnx2ttnn-verify-") as tmp:
        program_path = os.path.join(tmp, "model_ttnn.py")
        if conversion is None:
            conversion = convert(model, program_path, probes=per_op, device=device, **options)
        program_path = os.path.join(tmp, os.path.splitext(conversion.program_weights_name)[0] + ".py")
        conversion.write(program_path)
        program = _load_program(program_path)
        feeds = read_inputs(program, inputs)
        source = _source_model(model)
        # onnxruntime first: a model it refuses, or inputs it cannot run (a Gather index out of range), are
        # the user's to fix, and would make the simulated program fail too
        expected = _onnxruntime(accurate_sigmoids(source), feeds, list(program.OUTPUTS))  # (reference.py)
        run = _simulate(program, feeds, device, per_op, trace, conversion.module.mesh, _uses_fabric(conversion.module),
                        conversion.module.l1_small_size)
    tails = sigmoid_outputs(source)
    checks = [compare(name, _host_array(run.got[name]), expected[name], threshold, name in tails)
              for name in program.OUTPUTS]
    report = VerifyReport(checks, threshold, run.stats["L1"].peak_per_bank, run.stats["DRAM"].peak_per_bank,
                          run.leaks, memory_trace=run.memory_trace, conversion=conversion)
    if per_op:
        _per_op(report, source, feeds, run.probes, threshold)
    return report


@dataclass
class _Run:
    """What one simulated forward pass gave."""

    got: dict
    stats: dict
    leaks: list
    memory_trace: list
    probes: list


def _uses_fabric(module) -> bool:
    """Whether the program moves data between chips (CCL ops: the mesh opens with the fabric configured, as
    the program's main() does)."""
    from onnx2ttnn.ir.ttnn_ops import Cost, op_info

    return any(op_info(n.op).cost == Cost.CCL for n in module.graph.nodes)


def _simulate(program, feeds: dict, device: str, per_op: bool, trace: bool, mesh=(1, 1), fabric=False,
              l1_small_size: int = 16384) -> _Run:
    """Load the parameters and run forward on the simulator (on a mesh of simulated chips for a multi-chip
    program: the figures are then the first chip's, the leaks every chip's; `fabric`: with the fabric config
    set, as CCL ops need); a failure is the generated program's (a bug)."""
    from onnx2ttnn.sim import runtime

    probes: list = []
    memory_trace: list = []
    runtime.configure(device)
    with runtime.install():
        import ttnn  # the simulator

        if per_op:
            program.PROBE = lambda name, tensor, nhwc: probes.append((name, _to_nchw(ttnn.to_torch(tensor), nhwc)))
        if mesh == (1, 1):
            dev = ttnn.open_device(device_id=0, l1_small_size=l1_small_size)
        else:
            ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D if fabric else ttnn.FabricConfig.DISABLED)
            dev = ttnn.open_mesh_device(ttnn.MeshShape(*mesh), l1_small_size=l1_small_size)
        try:
            params = program.load_parameters(dev)
            runtime.reset_peaks(dev)
            args = {ident: torch_input(feeds[onnx_name]) for ident, (onnx_name, _, _) in program.INPUTS.items()}
            if trace:
                with runtime.memory_trace(dev) as memory_trace:
                    got = program.forward(dev, params, **args)
            else:
                got = program.forward(dev, params, **args)
        except MemoryError:
            raise
        except program.InputError as exc:  # the inputs' fault (an int64 value beyond the device's int32)
            raise ConversionError(f"the generated program refuses the inputs: {one_line(exc)}") from None
        except Exception as exc:
            raise VerificationError(f"the generated program fails on the simulator, where onnxruntime runs the "
                                    f"model: {_failure(exc, program)}") from exc
        stats = runtime.memory_stats(dev)
        for tensor in params.values():  # (host regions' onnxruntime sessions are not tensors)
            if isinstance(tensor, ttnn.Tensor) and tensor.storage_type() == ttnn.StorageType.DEVICE:
                ttnn.deallocate(tensor)
        leaks = [str(b) for b in runtime.leaks(dev)]
        (ttnn.close_device if mesh == (1, 1) else ttnn.close_mesh_device)(dev)
        if mesh != (1, 1):
            ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)
    return _Run(got, stats, leaks, memory_trace, probes)


def _host_array(tensor) -> np.ndarray:
    """A program output as numpy, integers kept integers (bfloat16 has no numpy dtype: it is widened); a
    sequence or map (verify_values.py) as it is."""
    if is_structured(tensor):
        return tensor
    if hasattr(tensor, "numpy"):
        return tensor.float().numpy() if tensor.dtype.is_floating_point else tensor.numpy()
    return np.asarray(tensor)


def _failure(exc: BaseException, program) -> str:
    """'RuntimeError: TT_FATAL: ... (program line 42)': the exception and the deepest line of the program."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == program.__file__:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f"{type(exc).__name__}: {one_line(exc)}" + (f" (program line {line})" if line else "")


def _load_program(path: str):
    spec = importlib.util.spec_from_file_location(f"onnx2ttnn_program_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    from onnx2ttnn.sim import runtime

    with runtime.install():
        spec.loader.exec_module(module)
    return module


def _to_nchw(tensor, nhwc):
    """A probed value in ONNX layout: flattened NHWC [1, 1, N*H*W, C] back to NCHW."""
    value = _host_array(tensor)
    if nhwc is None:
        return value
    n, h, w, c = nhwc
    return value.reshape(n, h, w, c).transpose(0, 3, 1, 2)


def _source_model(model) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    return onnx.load(os.fspath(model))


def _onnxruntime(model: onnx.ModelProto, feeds: dict, names: list[str]) -> dict[str, np.ndarray]:
    """onnxruntime's outputs `names` of `model` on `feeds`; ConversionError with its reason when it refuses."""
    basic = reference_level(model) == "basic"
    model, asked = _widen_bfloat16_outputs(model, names)
    session = ort.session(model.SerializeToString(), basic=basic)
    return dict(zip(names, ort.run(session, asked, feeds)))


def _widen_bfloat16_outputs(model: onnx.ModelProto, names: list[str]) -> tuple[onnx.ModelProto, list[str]]:
    """The model with each bfloat16 graph output among `names` also given as float32 (a Cast: exact), and the
    names to ask onnxruntime for: numpy, and so onnxruntime's Python API, has no bfloat16 to return."""
    bf16 = {o.name for o in model.graph.output if o.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16}
    if not bf16.intersection(names):
        return model, names
    widened = onnx.ModelProto()
    widened.CopyFrom(model)
    taken = {o.name for o in model.graph.output} | {t for n in model.graph.node for t in n.output}
    asked = []
    for name in names:
        if name not in bf16:
            asked.append(name)
            continue
        wide = name + "_float32"
        while wide in taken:
            wide += "_"
        taken.add(wide)
        widened.graph.node.append(onnx.helper.make_node("Cast", [name], [wide], to=onnx.TensorProto.FLOAT))
        widened.graph.output.append(onnx.helper.make_tensor_value_info(wide, onnx.TensorProto.FLOAT, None))
        asked.append(wide)
    return widened, asked


def _per_op(report: VerifyReport, model: onnx.ModelProto, feeds: dict, probes: list, threshold: float) -> None:
    """Compare every probed intermediate with onnxruntime's value; name the first op below threshold."""
    producers = {out: node for node in model.graph.node for out in node.output}
    wanted = [name for name, _ in probes if name in producers]
    extended = onnx.ModelProto()
    extended.CopyFrom(model)
    known = {o.name for o in extended.graph.output}
    for name in dict.fromkeys(wanted):
        if name not in known:
            extended.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    try:
        expected = _onnxruntime(accurate_sigmoids(extended), feeds, list(dict.fromkeys(wanted)))
    except ConversionError as exc:  # it ran the model itself: the intermediates are verify's own doing
        raise VerificationError(f"--per-op: onnxruntime cannot compute the intermediates: {exc}") from None
    for name, value in probes:
        if name not in expected:
            continue
        node = producers[name]
        if np.ndim(expected[name]) == 0 and np.size(value) == 1:  # a rank-0 value is [1] on the device
            value = np.reshape(value, ())
        if is_exact(expected[name]):
            score = 1.0 if compare(name, value, expected[name], threshold).passed else 0.0
        else:  # (a sigmoid's values in its exponential tail by their logits, as outputs are: reference.py)
            score = compare(name, value, expected[name], threshold, node.op_type == "Sigmoid").pcc
        report.per_op.append((name, node.name, score))
        if score < threshold and report.first_divergent is None:
            report.first_divergent = f"{node.op_type} {node.name!r} (tensor {name!r}, PCC {score:.4f})"

