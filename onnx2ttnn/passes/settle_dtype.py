"""settle-dtype: --dtype auto becomes bf16, or fp32 for a quantized model that bf16 activations move off its codes.

Reads: Options.dtype, the folded graph (before fusion: onnxruntime runs every node; the QuantizeLinear nodes
fold-dequantize left quantize activations), Module.index_rows (verify's inputs).  Writes: `Module.compute_dtype`,
the dtype every later pass builds the program in ("bf16" | "fp32"), and in the pass notes what was measured (or
why nothing was).  The graph is not changed.
--dtype bf16 and fp32 are taken as asked.  auto is bf16 (tt-metal's convention for programs, judged at PCC 0.99)
unless the model quantizes activations (a quantizer in the body of a Loop, If or Scan that stays counts too) and
bfloat16 values (float32, float16 and float64 ones alike) would cost its outputs more than half of verify's
bound, or move any value of an integer output, measured in onnxruntime (lowering/bf16_activations.py); or it
holds a QLinearMatMul / QLinearConv, whose codes are onnxruntime's only in float32 (quantize_operators.py: bf16
holds their accumulator to 8 bits); or it takes the minimum of a logarithm (a spectrogram normalized to its range:
lowering/log_extreme.py).  Then fp32, and the program is still judged as auto's promise, at the bf16 bound.
Float models are not measured: their bf16 rounding is a relative error of 2^-9 per value, where a quantized
model's is a moved code (docs/design.md §6.40).
Before: ViT-B/16 QDQ in bf16 verifies at pooler PCC 0.98616; after: the measurement finds 0.019 (over 0.005), the
program computes in float32 on integer codes: 0.99736, at 0.554x its float model's DRAM bytes.
"""
from __future__ import annotations

from onnx2ttnn.ir.graph import Module
from onnx2ttnn.lowering.bf16_activations import measure, quantized_activations
from onnx2ttnn.lowering.log_extreme import log_minimum
from onnx2ttnn.passes.base import Pass, PassContext
from onnx2ttnn.reference import PCC_THRESHOLD

# the part of verify's bf16 bound (1 - PCC_THRESHOLD["bf16"]) bf16 activations may cost a quantized model; the
# rest is the weights' (--weights auto promises them a quarter of it, lowering/weight_dtype.py) and the device's
BF16_ACTIVATION_SHARE = 0.5
# operator-format quantized ops whose float32 lowering computes onnxruntime's codes and whose bf16 one cannot
# (docs/design.md §6.36: 2.6-10 % of the codes off on random models, by up to 47)
EXACT_IN_FP32 = ("QLinearMatMul", "QLinearConv")


class SettleDtype(Pass):
    name = "settle-dtype"

    def run(self, module: Module, ctx: PassContext) -> None:
        asked = ctx.options.dtype
        module.compute_dtype = "bf16" if asked == "auto" else asked
        if asked != "auto":
            return
        notes = ctx.reuse(self.name, lambda: _settle(module))  # --parallel auto's second conversion: the first's
        module.compute_dtype, module.notes[self.name] = notes["dtype"], dict(notes)


def _settle(module: Module) -> dict:
    """auto's choice for the module's model and why (the pass notes; "dtype" is the choice)."""
    codes = quantized_activations(module.graph)
    operators = sum(1 for node in module.graph.nodes if node.op in EXACT_IN_FP32)
    if operators:
        return {"dtype": "fp32", "quantizers": codes, "operators": operators,
                "why": f"{operators} QLinearMatMul / QLinearConv, onnxruntime's codes only in float32"}
    extreme = log_minimum(module.graph)
    if extreme:  # (a float model's rule: lowering/log_extreme.py)
        return {"dtype": "fp32", "why": f"{extreme}, which bf16 magnitudes move"}
    if not codes:
        return {"dtype": "bf16", "why": "no quantized activation"}
    found = measure(module.graph, module.index_rows)
    bound = (1.0 - PCC_THRESHOLD["bf16"]) * BF16_ACTIVATION_SHARE
    dtype = "fp32" if found.loss > bound else "bf16"
    cost = (f"move values of the integer output {found.output}" if found.integer and found.loss else
            f"cost {found.output} {found.loss:.4f} of PCC ({'over' if found.loss > bound else 'within'} {bound:g})")
    why = f"{codes} quantized activations; " + (found.why or f"bf16 values would {cost}")
    return {"dtype": dtype, "quantizers": codes, "loss": found.loss, "output": found.output, "values": found.values,
            "why": why}
