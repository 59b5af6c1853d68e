"""If, Loop and Scan: rewritten before lowering, so a node that reaches lower-to-ttnn is declined, saying why.

fold-constants inlines an If whose condition folds to a constant and unrolls a Loop or Scan whose
iteration count is static, within the unroll budget (frontend/unroll_plan.py); these rules serve the
nodes that stay (a runtime condition, a data-dependent exit, a loop over the budget) by declining them
with the reason, so the conversion names it (or, with host regions, runs the node on the host).
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.frontend.unroll_plan import UNROLL_BUDGET, why_not_unrolled
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register

_VERSIONS = (1, 11, 13, 16, 19, 21, 23, 24, 25)
_ELSE = "otherwise declined, and run in a host region"
_LOOP_NOTE = (f"unrolled when the trip count folds to a constant, the condition input is constant and the "
              f"body's condition output is too, within {UNROLL_BUDGET} unrolled nodes; {_ELSE}")
_SCAN_NOTE = f"unrolled over the static sequence length within {UNROLL_BUDGET} unrolled nodes; {_ELSE}"


def _declined(ctx: LoweringContext, node: gs.Node, opset: int) -> None:
    reason = why_not_unrolled(node, opset) or \
        f"the model's other loops used up the unroll budget ({UNROLL_BUDGET} nodes)"
    ctx.decline(f"{node.op} not unrolled: {reason}")


@register("If", versions=_VERSIONS, note=f"inlined when the condition folds to a constant; {_ELSE}")
def if_(ctx: LoweringContext, node: gs.Node) -> None:
    """If-1 to 25 (11: the branches' outputs may differ in shape; later versions add types): inlined by
    fold-constants when the condition is constant; a runtime condition is declined."""
    ctx.decline("If not inlined: its condition is not a constant (it depends on the model's inputs)")


@register("Loop", versions=_VERSIONS, note=_LOOP_NOTE)
def loop(ctx: LoweringContext, node: gs.Node) -> None:
    """Loop-1 to 25 (11: M and cond optional, scan outputs' shapes may vary; later versions add types):
    unrolled by fold-constants; what stays is declined with the reason."""
    _declined(ctx, node, 11)


@register("Scan", versions=(8,), note=_SCAN_NOTE + "; batch axis 0, sequence_lens absent or all full length")
def scan_8(ctx: LoweringContext, node: gs.Node) -> None:
    """Scan-8: a batch axis 0 on every input and output, optional sequence_lens, `directions`."""
    _declined(ctx, node, 8)


@register("Scan", versions=(9, 11, 16, 19, 21, 23, 24, 25), note=_SCAN_NOTE)
def scan(ctx: LoweringContext, node: gs.Node) -> None:
    """Scan-9: no batch axis; scan_input_axes / scan_output_axes and their directions (11: negative axes;
    later versions add types)."""
    _declined(ctx, node, 9)
