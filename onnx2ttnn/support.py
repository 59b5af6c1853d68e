"""The support table, generated from the lowering registry (what `onnx2ttnn ops` prints)."""
from __future__ import annotations

from onnx2ttnn.lowering import all_rules


def support_table() -> str:
    rows = ["| ONNX op | domain | since opset | ttnn ops | notes |", "|---|---|---|---|---|"]
    for rule in all_rules():
        rows.append(f"| {rule.op_type} | {rule.domain or 'ai.onnx'} | {rule.since} | "
                    f"{', '.join(rule.ttnn_ops) or '(none)'} | {rule.note} |")
    return "\n".join(rows)
