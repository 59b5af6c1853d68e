"""The support table, generated from the lowering registry (what `onnx2ttnn ops` prints)."""
from __future__ import annotations

from onnx2ttnn.fallback import all_fallbacks
from onnx2ttnn.lowering import all_rules


def support_table() -> str:
    rows = ["| ONNX op | domain | since opset | ttnn ops | notes |", "|---|---|---|---|---|"]
    for rule in all_rules():
        rows.append(f"| {rule.op_type} | {rule.domain or 'ai.onnx'} | {rule.since} | "
                    f"{', '.join(rule.ttnn_ops) or '(none)'} | {rule.note} |")
    lowered = {(r.domain, r.op_type) for r in all_rules()}
    for fb in all_fallbacks():  # ops only a host fallback computes (others fall back when their rule declines)
        if (fb.domain, fb.op_type) not in lowered:
            note = "; ".join(n for n in ("torch on the host", fb.note) if n)
            rows.append(f"| {fb.op_type} | {fb.domain or 'ai.onnx'} | {fb.since} | (host fallback) | {note} |")
    return "\n".join(rows)
