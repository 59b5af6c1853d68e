"""measure-weight-gain: how much the model amplifies its weights' block-float errors, measured with onnxruntime.

Reads: the folded ONNX graph (before fusion: onnxruntime runs every node), Options.weights and math_fidelity,
Module.compute_dtype, the
dequantized weights of fold-dequantize, the output tail (lowering/accuracy.py), Module.index_rows (the inputs
are verify's).  Writes: `Module.weight_gain`, and `Module.rounding`: the rounding errors of each weight it
judged (lowering/block_float.RoundingErrors; lower-to-ttnn asks it instead of rounding them again),
the divisor lower-to-ttnn applies to --weights auto's error budget (lowering/weight_dtype.model_error_budget):
1, or the measured amplification when the weights auto would take lose more output PCC, in float32, than the
budget promised them; and in the pass notes what was measured (or why nothing was).  The graph is not changed.
Only under --weights auto in a bf16 program: other modes keep 1 and run nothing.  The measurement and its
reasons: lowering/weight_gain.py, docs/design.md §6.30 and §6.43 (conv biases, the fidelity's reads).
Before: PP-OCRv4's recognizer takes 42 bfloat8_b weights (verify: PCC 0.9864); after: g = 5.1 (float32 loss
0.0072 where the estimate said 0.0014), the budget a fifth, its weights bf16 (PCC 0.9993).
"""
from __future__ import annotations

from onnx2ttnn.ir.graph import Module
from onnx2ttnn.ir.kernel_config import forced_fidelity
from onnx2ttnn.lowering.accuracy import output_tail
from onnx2ttnn.lowering.block_float import RoundingErrors
from onnx2ttnn.lowering.weight_dtype import exponential_tail, model_error_budget, tail_weights
from onnx2ttnn.lowering.weight_gain import measure
from onnx2ttnn.passes.base import Pass, PassContext


class MeasureWeightGain(Pass):
    name = "measure-weight-gain"

    def run(self, module: Module, ctx: PassContext) -> None:
        module.weight_gain, module.rounding = 1.0, None
        if ctx.options.weights != "auto" or module.compute_dtype != "bf16":
            return
        # --parallel auto's second conversion takes the first's gain (and its rounding errors: a hit only for the
        # same arrays, RoundingErrors)
        module.weight_gain, module.rounding, notes = ctx.reuse(self.name, lambda: _measure(module, ctx))
        module.notes[self.name] = dict(notes)


def _measure(module: Module, ctx: PassContext) -> tuple:
    """(the gain, the rounding errors computed, the pass notes) of the module's model."""
    rounding = RoundingErrors()
    tail = output_tail(module.graph)  # the budget and the exempt weights as lower-to-ttnn will see them
    exempt = frozenset(module.dequantized) | tail_weights(module.graph, tail)
    found = measure(module.graph, model_error_budget(exponential_tail(module.graph, tail)), exempt,
                    module.index_rows, rounding, forced_fidelity(ctx.options.math_fidelity))
    notes = {"gain": round(found.gain, 3), "amplification": round(found.amplification, 3), "loss": found.loss,
             "error": found.spent, "weights": found.weights, "biases": found.biases, "why": found.why}
    return found.gain, rounding, notes
