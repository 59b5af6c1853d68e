"""onnxruntime inside the converter: its log records kept off stderr, its failures turned into our messages.

onnxruntime logs through one process-wide default logger, which writes multi-line coloured records
(`[W:onnxruntime:, constant_folding.cc:509 ApplyImpl] Skipping constant folding ...`) straight to the
terminal, also from the sessions onnx_graphsurgeon opens to fold constants.  `quiet()` routes the records
to a list while the converter runs onnxruntime (warnings are not even produced: the logger is at ERROR);
`session()` opens a quiet session and `run()` runs one; both make onnxruntime's exception one clear
ConversionError (messages.onnxruntime_reason: one line, no error code, source location or C++ signature).
"""
from __future__ import annotations

import contextlib
import threading
from typing import Optional

from onnx2ttnn.errors import ConversionError
from onnx2ttnn.messages import onnxruntime_reason

# the basic level's transformers that change a QDQ model's values, left out of its sessions by name:
# DoubleQDQPairsRemover merges Q -> DQ -> Q -> DQ into one pair and drops the second rounding (fuzz seed 109 case
# 1229: 0.55 where the operators give 0.6); WeightBiasQuantization quantizes the float weight of a Conv or Gemm
# between a DQ and a Q to int8.  (Not the config key session.disable_quant_qdq: it also lets constant folding fold
# DequantizeLinear of weights, after which other fusions change the float rounding: the cached full-size vit_qdq
# and bert_qdq then differ from the unoptimized run by 0.33 and 0.25, where these two names leave every
# cached QDQ zoo model's reference bit for bit as it was.)  QDQPropagationTransformer copies a Q -> DQ pair past
# a data-movement op with the DequantizeLinear's inputs: one that leaves out its zero point (valid: 0 of the
# input's type) then gets a new QuantizeLinear without one, whose output is uint8, so an int8 pair's negative
# values became 0 (fuzz seed 173 case 393: Q(int8) -> DQ -> Slice, 1.9 off); without it the 15 cached QDQ zoo
# models' references stay bit for bit (seeded inputs, dynamic dims 1; docs/design.md §6.46).
BASIC_BUT_EXACT = ("DoubleQDQPairsRemover", "WeightBiasQuantization", "QDQPropagationTransformer")
ERROR, WARNING = 3, 2  # onnxruntime's severities (0 verbose .. 4 fatal); WARNING is its default
_depth = 0  # nested quiet() blocks: only the outermost installs and removes the sink


@contextlib.contextmanager
def quiet():
    """Within the block, onnxruntime's error records are appended to the list it yields, nothing is printed;
    after it, onnxruntime logs to stderr again at its default severity (WARNING)."""
    import onnxruntime

    global _depth
    records: list[str] = []
    if not hasattr(onnxruntime, "set_default_logger_callback"):  # onnxruntime < 1.24: errors still print
        onnxruntime.set_default_logger_severity(ERROR)
        try:
            yield records
        finally:
            onnxruntime.set_default_logger_severity(WARNING)
        return
    outermost = _depth == 0
    _depth += 1
    if outermost:
        onnxruntime.set_default_logger_callback(
            lambda severity, category, logid, location, message: records.append(message), ERROR)
    try:
        yield records
    finally:
        _depth -= 1
        if outermost:
            onnxruntime.set_default_logger_callback(None, ERROR)
            onnxruntime.set_default_logger_severity(WARNING)


def session(model_bytes: bytes, optimize: bool = True, basic: bool = False, initializers: dict = None):
    """A CPU InferenceSession of the serialized model, its log quiet; ConversionError when onnxruntime
    refuses the model (the reason is onnxruntime's).  `optimize=False`: no graph optimization (a session
    only opened to read what its graph resolution inferred); `basic=True`: the basic level less the
    transformers that change a QDQ model's values (BASIC_BUT_EXACT; verify's reference of a QDQ model,
    reference.py `reference_level`); `initializers`: name -> contiguous numpy array of the model's
    initializers stored as external data, which onnxruntime reads in place (the arrays must outlive the
    session)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = ERROR
    if initializers:
        options.add_external_initializers(list(initializers), [onnxruntime.OrtValue.ortvalue_from_numpy(v)
                                                                for v in initializers.values()])
    if not optimize:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    elif basic:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    with quiet():
        try:
            return onnxruntime.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"],
                                                disabled_optimizers=list(BASIC_BUT_EXACT) if basic else None)
        except MemoryError:
            raise
        except Exception as exc:
            raise ConversionError(f"onnxruntime refuses the model: {onnxruntime_reason(exc)}") from None


def _is_bfloat16(value) -> bool:
    return getattr(getattr(value, "dtype", None), "name", "") == "bfloat16"


def _ort_value(value):
    """An OrtValue of a numpy array; of an ml_dtypes bfloat16 array, through its 16-bit patterns."""
    import numpy as np
    import onnxruntime
    from onnx import TensorProto

    array = np.ascontiguousarray(value)
    if _is_bfloat16(array):
        return onnxruntime.OrtValue.ortvalue_from_numpy_with_onnx_type(array.view(np.uint16),
                                                                       onnx_element_type=TensorProto.BFLOAT16)
    return onnxruntime.OrtValue.ortvalue_from_numpy(array)


class RunTimeout(ConversionError):
    """onnxruntime's run was stopped at its deadline (`run`'s `seconds`)."""


def run(sess, names: list[str], feeds: dict, seconds: Optional[float] = None) -> list:
    """`sess.run(names, feeds)`, quiet; ConversionError with onnxruntime's reason when it cannot run.  A bfloat16
    feed (an ml_dtypes array: numpy has no bfloat16, and onnxruntime takes no such array) is handed over as
    an OrtValue of its bits; the outputs asked for must then have numpy types (verify widens bfloat16 ones).
    `seconds`: a deadline, RunTimeout past it (a timer sets the run's terminate flag, which onnxruntime checks
    between kernels, also a Loop's between iterations; probed with onnxruntime 1.32: a Loop of 2^30 iterations
    stops 0.01 s after the flag)."""
    import onnxruntime

    options = onnxruntime.RunOptions()
    timer = threading.Timer(seconds, setattr, (options, "terminate", True)) if seconds is not None else None
    with quiet():
        try:
            if timer:
                timer.start()
            if any(_is_bfloat16(value) for value in feeds.values()):
                values = {name: _ort_value(value) for name, value in feeds.items()}
                return [out.numpy() for out in sess.run_with_ort_values(names, values, options)]
            return sess.run(names, feeds, options)
        except MemoryError:
            raise
        except Exception as exc:
            if options.terminate:
                raise RunTimeout(f"onnxruntime's run did not finish in {seconds:g} s") from None
            raise ConversionError("onnxruntime cannot run the model on these inputs: "
                                  f"{onnxruntime_reason(exc)}") from None
        finally:
            if timer:
                timer.cancel()
