"""choose-activation-formats: bfloat8_b activations between matmuls and linears (--activations), within the model's
error budget.

Reads: layouts (final pages and dtypes: after decompose-layouts), the graph outputs, Options.activations and what
lower-to-ttnn noted of the weights' formats (`weight_error`: the squared relative errors their block-float formats
add; `error_budget`: the model's budget on that sum, lowering/weight_dtype.py).  Writes: on each chosen tensor a
bfp8 layout and `dtype=ttnn.bfloat8_b` on its producer; `dtype=` of its own output's dtype on each reader (a
matmul or linear whose dtype= is unset returns its input_tensor_a's dtype, docs/ttnn-facts.md §30).  Notes: the
tensors chosen, their bytes saved, the budget spent.
A candidate (docs/design.md §6.31) is a bf16 TILE device tensor that a matmul or linear writes (their dtype=
writes bfloat8_b, fused activation, core_grid, L1 or DRAM: docs/ttnn-facts.md §38), that is no graph output, and
that only matmuls and linears read (bfloat8_b input_tensor_a interleaved or height-sharded with a program
config, input_tensor_b of a batched matmul, against bf16, bfloat8_b or bfloat4_b weights: §38), directly or
through reshapes that keep its last two dims (a bfloat8_b TILE reshape returns bfloat8_b, §30: the reshapes'
results go bfloat8_b with it; GPT-2's feed-forward goes linear, reshape, reshape, linear), on one chip or a data-parallel chip (its program is the one-chip program; the
probes are single-chip), in a bf16 program (under --dtype fp32 nothing changes), and whose producer or readers
no rule pinned to a dtype (`_dtype`: the float32 logit of the output tail, lowering/accuracy.py).  `bfp8` takes
every candidate; `auto` takes them largest first while the weights' error plus ACTIVATION_ERROR² per tensor stays
within the budget (under --weights bf16 auto is bf16: that program is the program of before the block-float
options, Options.activation_format); `bf16` none (the programs of before the option).
Must run before choose-kernel-configs (a reader's fidelity follows its operands' formats) and place-memory (the
planner counts a bfloat8_b tile at 1088 bytes).
Before: `h = linear(x, w1, activation='gelu')  # tile<bf16>; y = linear(h, w2)`;
after: `h = linear(x, w1, activation='gelu', dtype=ttnn.bfloat8_b)  # tile<bfp8>;
y = linear(h, w2, dtype=ttnn.bfloat16)`.
"""
from __future__ import annotations

import onnx_graphsurgeon as gs

from onnx2ttnn.ir.graph import Module, TTNNRef, layout_of, set_layout
from onnx2ttnn.ir.layout import total_bytes
from onnx2ttnn.passes.base import Pass, PassContext

# ops whose dtype= writes bfloat8_b (ttnn-facts §38a) -> the inputs of theirs that take a bfloat8_b tensor (§38b-d)
MATRIX_OPS = {"linear": (0,), "matmul": (0, 1)}
# The relative error bfloat8_b rounding puts into an activation, taken as the same for every tensor (its values are
# unknown when converting): lowering/weight_dtype.relative_error on [128, 3072] samples gives 0.0073 for Gaussian
# values, 0.0093 after GELU, 0.0098 for Student-t(3), 0.0126 for Gaussian rows with a 20x outlier every 64
# channels (the outlier shares its 16-value group's exponent); the last, the largest, is taken.
ACTIVATION_ERROR = 0.0126


class ChooseActivationFormats(Pass):
    name = "choose-activation-formats"

    def run(self, module: Module, ctx: PassContext) -> None:
        mode = ctx.options.activation_format()
        lowered = module.notes.get("lower-to-ttnn", {})
        budget = float(lowered.get("error_budget", 0.0))
        spent = float(lowered.get("weight_error", 0.0))
        # a data-parallel chip runs the one-chip program (at its share of the batch); tensor-parallel splits are
        # left in bf16 (their all_reduce inputs and split weights were not probed with bfloat8_b)
        found = candidates(module.graph) if mode != "bf16" and module.compute_dtype == "bf16" and \
            module.tp == 1 else []
        found.sort(key=lambda c: -c[1])  # largest saving first
        chosen, saved = [], 0
        for chain, saving in found:
            cost = ACTIVATION_ERROR ** 2
            if mode == "auto" and spent + cost > budget:
                break
            chosen.append(chain)
            saved += saving
            spent += cost if mode == "auto" else 0.0
        apply_bfp8(chosen)
        module.notes[self.name] = {"candidates": len(found), "bfp8": len(chosen), "bytes_saved": saved,
                                   "error_spent": round(spent, 6), "error_budget": budget}


def candidates(graph: gs.Graph) -> list[tuple[list[gs.Variable], int]]:
    """(tensors, bytes bfloat8_b saves) of every tensor that may be bfloat8_b (module doc), with the reshapes of
    it its matmul / linear readers read through (views of one buffer: all bfloat8_b or none)."""
    outputs = {id(t) for t in graph.outputs}
    found = []
    for node in graph.nodes:
        if node.op not in MATRIX_OPS or len(node.outputs) != 1 or node.attrs.get("_dtype"):
            continue
        out = node.outputs[0]
        chain = _chain(out, outputs)
        if chain:
            layout = layout_of(out)
            found.append((chain, total_bytes(out.shape, layout) - total_bytes(out.shape, layout.with_(dtype="bfp8"))))
    return found


def _chain(tensor: gs.Tensor, outputs: set[int]) -> list[gs.Tensor]:
    """`tensor` and the reshapes of it that only matmuls and linears read in the end ([] when one is read by
    anything else, is a graph output, or is not a bf16 TILE device tensor)."""
    chain, todo = [], [tensor]
    while todo:
        t = todo.pop()
        layout = layout_of(t)
        if (id(t) in outputs or layout is None or not layout.on_device or not layout.is_tile
                or layout.dtype != "bf16" or not t.outputs):
            return []
        chain.append(t)
        for reader in t.outputs:
            if _keeps_tiles(reader, t):
                todo.append(reader.outputs[0])
            elif not _reads_bfp8(reader, t):
                return []
    return chain


def _keeps_tiles(reader: gs.Node, tensor: gs.Tensor) -> bool:
    """A reshape of `tensor` that keeps its last two dims: only the dims in front change (a bfloat8_b TILE
    reshape returns bfloat8_b, docs/ttnn-facts.md §30)."""
    if reader.op != "reshape" or reader.inputs[0] is not tensor or len(reader.outputs) != 1:
        return False
    before, after = list(tensor.shape), list(reader.outputs[0].shape)
    return len(before) >= 2 and len(after) >= 2 and before[-2:] == after[-2:]


def _reads_bfp8(reader: gs.Node, tensor: gs.Tensor) -> bool:
    """Whether `reader` takes `tensor` in bfloat8_b at every input it reads it at, its output dtype kept by
    dtype= (a matmul or linear no rule pinned)."""
    if reader.op not in MATRIX_OPS or reader.attrs.get("_dtype"):
        return False
    out = layout_of(reader.outputs[0]) if reader.outputs else None
    if out is None or out.dtype not in ("bf16", "bfp8"):
        return False
    return all(i in MATRIX_OPS[reader.op] for i, t in enumerate(reader.inputs) if t is tensor)


def apply_bfp8(chosen: list[list[gs.Variable]]) -> None:
    """Each chain's tensors bfloat8_b and its producer's dtype= so; each matmul / linear reader's dtype= its own
    output's dtype."""
    for chain in chosen:
        for tensor in chain:
            set_layout(tensor, layout_of(tensor).with_(dtype="bfp8"))
        chain[0].inputs[0].attrs["dtype"] = TTNNRef("bfloat8_b")
    for chain in chosen:
        for tensor in chain:
            for reader in tensor.outputs:
                if reader.op in MATRIX_OPS:
                    reader.attrs.setdefault("dtype", TTNNRef(layout_of(reader.outputs[0]).ttnn_dtype))
