"""The machinery the LSTM, GRU and RNN rules (lowering/recurrent.py) share: one recurrent node unrolled
over its static sequence length, whatever its cell.

`UnrolledNode` checks the node and prepares its weights on the host at conversion, uploaded once: W of every
direction transposed and side by side, `[input, directions * gates * hidden]`, with the biases that add to
the input projection folded into one row (Wb + Rb, less what a cell keeps on the recurrent side), and R of
each direction transposed, `[hidden, gates * hidden]`.  The program then computes:

- the input projection of every time step and every direction as one `ttnn.linear` over X seen as
  `[seq * batch, input]` (layout 1 is permuted to sequence-first once, on the device);
- per step and direction: one row slice of that projection, then the cell's `step` (its recurrent
  `ttnn.linear`, column slices per gate, gate activations and state update as ttnn eltwise ops); the state
  never leaves the device;
- Y as one `ttnn.concat` of the step states (`[seq * directions, batch, hidden]`, reshaped to
  `[seq, directions, batch, hidden]`, permuted for layout 1), Y_h and Y_c from the last states.

Without initial_h (or initial_c) the first step skips the terms of a zero state rather than uploading zeros.
`clip` bounds the input of every gate's activation, as the spec says; LSTM's h(Ct) takes Ct unclipped, as
onnxruntime computes it (fuzz seed 73 case 1731: clipping it too was 0.12 off onnxruntime).
Activations: Sigmoid, Tanh, Relu, Softsign, Softplus, and LeakyRelu, ThresholdedRelu, Elu, HardSigmoid, Affine,
ScaledTanh with their parameters from activation_alpha / activation_beta, which the parameterised activations
consume in order (`activation_list`, which the host fallback reads too).

Declined here (with the reason): runtime W / R / B / P (a model with trained weights has them as
initializers), sequence_lens that is not a constant equal to the sequence length for every batch entry, an
activation not listed, and more unrolled steps than the budget.

Budget: the unrolled program has about 15 ttnn calls per LSTM step and direction (GRU 16, RNN 5), each a
line of the program and a dispatch at run time.  MAX_UNROLLED_STEPS bounds seq_len × directions summed
over the model's recurrent nodes (so stacked layers count together): 2048 steps is about 30,000 calls,
the size of a 24-layer transformer's program, and covers CRNN recognizers (sequences of 25-80 steps, two
bidirectional layers) and speech encoders of a few seconds.  Beyond it the node declines, naming the count.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError, NotLowerable
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.weight_dtype import recurrent_weight_dtype

MAX_UNROLLED_STEPS = 2048  # seq_len x directions over all recurrent nodes of a model (see the docstring)
BUDGET_KEY = "recurrent_steps"

# activation -> (parameters it takes from activation_alpha / activation_beta)
ACTIVATIONS = {
    "Sigmoid": "", "Tanh": "", "Relu": "", "Softsign": "", "Softplus": "",
    "LeakyRelu": "a", "ThresholdedRelu": "a", "Elu": "a", "HardSigmoid": "ab", "Affine": "ab", "ScaledTanh": "ab",
}
DEFAULTS = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh"), "RNN": ("Tanh", "Tanh")}
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


@dataclass(frozen=True)
class Activation:
    name: str
    alpha: float = 0.0
    beta: float = 0.0


def direction_count(node: gs.Node) -> int:
    return 2 if _text(node.attrs.get("direction", "forward")) == "bidirectional" else 1


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _optional(node: gs.Node, index: int) -> Optional[gs.Tensor]:
    return node.inputs[index] if len(node.inputs) > index and node.inputs[index].name else None


def _output(node: gs.Node, index: int) -> Optional[gs.Tensor]:
    return node.outputs[index] if len(node.outputs) > index and node.outputs[index].name else None


def activation_list(node: gs.Node, op: str, directions: int) -> list[list[Activation]]:
    """The activations of each direction ([f, g, h] for LSTM, [f, g] for GRU, [f] for RNN) with their
    parameters; NotLowerable (its reason) for a list this module cannot compute (the host fallback reads
    the same list)."""
    per = len(DEFAULTS[op]) if op != "RNN" else 1
    names = [_text(a) for a in node.attrs.get("activations", [])] or list(DEFAULTS[op][:per]) * directions
    if len(names) != per * directions:
        raise NotLowerable(f"{op} with {directions} direction(s) takes {per * directions} activations, "
                           f"got {len(names)}")
    alphas = [float(a) for a in node.attrs.get("activation_alpha", [])]
    betas = [float(b) for b in node.attrs.get("activation_beta", [])]
    acts = []
    for name in names:
        if name not in ACTIVATIONS:
            raise NotLowerable(f"{op} activation {name!r} has no ttnn lowering (supported: "
                               f"{', '.join(ACTIVATIONS)})")
        params = ACTIVATIONS[name]
        alpha = alphas.pop(0) if "a" in params and alphas else None
        beta = betas.pop(0) if "b" in params and betas else None
        if ("a" in params and alpha is None) or ("b" in params and beta is None):
            raise NotLowerable(f"{op} activation {name!r} needs its parameters in activation_alpha/activation_beta")
        acts.append(Activation(name, alpha or 0.0, beta or 0.0))
    return [acts[d * per:(d + 1) * per] for d in range(directions)]


class UnrolledNode:
    """Emits the ttnn ops of one recurrent node; a subclass per cell gives its `step`."""

    op = ""  # the ONNX op type (set by each cell)
    cell_state = False  # whether the cell has a cell state c beside h (LSTM: its Y_c output)

    def __init__(self, ctx: LoweringContext, node: gs.Node) -> None:
        self.ctx, self.node, op = ctx, node, self.op
        x, w, r = node.inputs[0], node.inputs[1], node.inputs[2]
        self.base = (_output(node, 1) or _output(node, 0) or _output(node, 2) or node.outputs[0]).name
        self.layout = int(node.attrs.get("layout", 0))
        direction = _text(node.attrs.get("direction", "forward"))
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ConversionError(f"node {ctx.source!r}: {op} direction {direction!r} is not one of forward, "
                                  "reverse, bidirectional")
        self.reverse = [direction == "reverse"] if direction != "bidirectional" else [False, True]
        self.dirs = len(self.reverse)
        wv, rv = ctx.constant(w), ctx.constant(r)
        if wv is None or rv is None:
            ctx.decline(f"{op} W and R must be constants (they are prepared on the host and uploaded once)")
        self.gates = GATES[op]
        self.hidden = int(rv.shape[-1])
        seq, batch = (x.shape[0], x.shape[1]) if self.layout == 0 else (x.shape[1], x.shape[0])
        self.seq, self.batch, self.inputs = int(seq), int(batch), int(x.shape[2])
        if tuple(wv.shape) != (self.dirs, self.gates * self.hidden, self.inputs) or \
                tuple(rv.shape) != (self.dirs, self.gates * self.hidden, self.hidden):
            raise ConversionError(f"node {ctx.source!r}: {op} W {list(wv.shape)} / R {list(rv.shape)} do not fit "
                                  f"{self.dirs} direction(s), {self.gates} gate(s), hidden size {self.hidden} "
                                  f"and input size {self.inputs}")
        if "hidden_size" in node.attrs and int(node.attrs["hidden_size"]) != self.hidden:
            raise ConversionError(f"node {ctx.source!r}: {op} hidden_size {int(node.attrs['hidden_size'])} does not "
                                  f"match R {list(rv.shape)}")
        self.w, self.r = wv.astype(np.float32), rv.astype(np.float32)
        self.b = self._constant(3, "B", (self.dirs, 2 * self.gates * self.hidden))
        self.clip = float(node.attrs["clip"]) if "clip" in node.attrs else None
        if self.clip is not None and not self.clip > 0:
            raise ConversionError(f"node {ctx.source!r}: {op} clip must be positive, got {self.clip}")
        try:
            self.acts = activation_list(node, op, self.dirs)
        except NotLowerable as exc:
            ctx.decline(exc.reason)
        self._check_sequence_lens()

    def _constant(self, index: int, what: str, shape) -> Optional[np.ndarray]:
        tensor = _optional(self.node, index)
        if tensor is None:
            return None
        value = self.ctx.constant(tensor)
        if value is None:
            self.ctx.decline(f"{self.op} {what} must be a constant (prepared on the host and uploaded once)")
        if tuple(value.shape) != tuple(shape):
            raise ConversionError(f"node {self.ctx.source!r}: {self.op} {what} has shape {list(value.shape)}, "
                                  f"expected {list(shape)}")
        return value.astype(np.float32)

    def _check_sequence_lens(self) -> None:
        tensor = _optional(self.node, 4)
        if tensor is None:
            return
        lens = self.ctx.constant(tensor)
        if lens is None:
            self.ctx.decline(f"{self.op} sequence_lens is a runtime tensor (the unrolled program needs every "
                             "length known at conversion)")
        lens = lens.reshape(-1)
        if lens.size != self.batch or np.any(lens != self.seq):
            self.ctx.decline(f"{self.op} sequence_lens {lens.tolist()[:8]} are not all the sequence length "
                             f"{self.seq} (unequal lengths are not unrolled)")

    def reserve_budget(self) -> None:
        steps = self.seq * self.dirs
        used = self.ctx.count(BUDGET_KEY, steps)
        if used > MAX_UNROLLED_STEPS:
            self.ctx.decline(f"{self.op} would unroll to {used} steps with the model's earlier recurrent nodes "
                             f"(seq_len {self.seq} x {self.dirs} direction(s) here), more than the "
                             f"budget of {MAX_UNROLLED_STEPS}")

    # --- small op helpers ---------------------------------------------------------------------------------
    def name(self, *parts) -> str:
        return "_".join([self.base] + [str(p) for p in parts])

    def slice_cols(self, x: gs.Variable, start: int, end: int, name: str) -> gs.Variable:
        rows, cols = x.shape
        if (start, end) == (0, cols):
            return x
        return self.ctx.op("slice", [x], (rows, end - start), name=name, slice_start=[0, start],
                           slice_end=[rows, end], slice_step=[1, 1])

    def binary(self, op: str, a: gs.Variable, b: gs.Variable, name: str) -> gs.Variable:
        shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        return self.ctx.op(op, [a, b], shape, name=name)

    def scalar(self, op: str, x: gs.Variable, value: float, name: str) -> gs.Variable:
        return self.ctx.op(op, [x], x.shape, name=name, input_tensor_b=float(value))

    def activate(self, act: Activation, x: gs.Variable, name: str, clipped: bool = True) -> gs.Variable:
        """act(x), x clipped to +-clip first when the node has one and `clipped` (every gate's input; not the
        LSTM cell state's input to h(), which onnxruntime passes unclipped)."""
        ctx = self.ctx
        if self.clip is not None and clipped:
            x = ctx.op("clip", [x], x.shape, name=name + "_clipped", min=-self.clip, max=self.clip)
        simple = {"Sigmoid": ("sigmoid", {}), "Tanh": ("tanh", {}), "Relu": ("relu", {}),
                  "Softsign": ("softsign", {}), "Softplus": ("softplus", dict(beta=1.0, threshold=20.0)),
                  "LeakyRelu": ("leaky_relu", dict(negative_slope=act.alpha)),
                  "ThresholdedRelu": ("threshold", dict(threshold=act.alpha, value=0.0)),
                  "Elu": ("elu", dict(alpha=act.alpha))}
        if act.name in simple:
            op, attrs = simple[act.name]
            return ctx.op(op, [x], x.shape, name=name, **attrs)
        if act.name == "ScaledTanh":  # alpha * tanh(beta * x)
            return self.scalar("multiply", ctx.op("tanh", [self.scalar("multiply", x, act.beta, name + "_in")],
                                                  x.shape, name=name + "_tanh"), act.alpha, name)
        y = self.scalar("add", self.scalar("multiply", x, act.alpha, name + "_scaled"), act.beta,
                        name + ("_affine" if act.name == "HardSigmoid" else ""))
        if act.name == "HardSigmoid":  # max(0, min(1, alpha * x + beta))
            y = ctx.op("clip", [y], y.shape, name=name, min=0.0, max=1.0)
        return y

    # --- the node ----------------------------------------------------------------------------------------
    def input_bias(self) -> Optional[np.ndarray]:
        """[directions, gates * hidden]: what adds to the input projection (None when there is no B)."""
        if self.b is None:
            return None
        gh = self.gates * self.hidden
        wb, rb = self.b[:, :gh], self.b[:, gh:].copy()
        return wb + self.folded_recurrent_bias(rb)

    def folded_recurrent_bias(self, rb: np.ndarray) -> np.ndarray:
        """The part of the recurrent bias Rb (a copy, [directions, gates * hidden]) that adds to the input
        projection: all of it, unless a cell keeps some on the recurrent side (zeroed here)."""
        return rb


    def projection(self) -> gs.Variable:
        """X @ [W_0^T | W_1^T] (+ bias) for every step: [seq * batch, directions * gates * hidden]."""
        ctx, x = self.ctx, self.node.inputs[0]
        xv = ctx.value(x)
        if self.layout == 1:
            xv = ctx.op("permute", [xv], (self.seq, self.batch, self.inputs), name=self.name("x_seq_first"),
                        dims=(1, 0, 2))
        rows = self.seq * self.batch
        xv = ctx.op("reshape", [xv], (rows, self.inputs), name=self.name("x_rows"), shape=(rows, self.inputs))
        weight = np.concatenate([self.w[d].T for d in range(self.dirs)], axis=1)
        inputs = [xv, ctx.float_param(weight, self.name("w"), key=(self.base, "recurrent_w"),
                                      dtype=recurrent_weight_dtype(ctx, self.node.inputs[1].name, weight))]
        bias = self.input_bias()
        if bias is not None and np.any(bias):
            inputs.append(ctx.float_param(bias.reshape(1, -1), self.name("b"), key=(self.base, "recurrent_b")))
        return ctx.op("linear", inputs, (rows, weight.shape[1]), name=self.name("x_proj"))

    def initial(self, index: int, what: str) -> list[Optional[gs.Variable]]:
        """initial_h / initial_c of each direction as [batch, hidden] (None when absent or all zero)."""
        tensor = _optional(self.node, index)
        if tensor is None:
            return [None] * self.dirs
        value = self.ctx.constant(tensor)
        if value is not None and not np.any(value):
            return [None] * self.dirs
        full = self.ctx.value(tensor)
        out = []
        for d in range(self.dirs):
            if self.dirs == 1:
                part = full
            elif self.layout == 0:
                part = self.ctx.op("slice", [full], (1, self.batch, self.hidden), name=self.name(what, d),
                                   slice_start=[d, 0, 0], slice_end=[d + 1, self.batch, self.hidden],
                                   slice_step=[1, 1, 1])
            else:
                part = self.ctx.op("slice", [full], (self.batch, 1, self.hidden), name=self.name(what, d),
                                   slice_start=[0, d, 0], slice_end=[self.batch, d + 1, self.hidden],
                                   slice_step=[1, 1, 1])
            out.append(self.ctx.op("reshape", [part], (self.batch, self.hidden), name=self.name(what, d, "rows"),
                                   shape=(self.batch, self.hidden)))
        return out

    def step_input(self, proj: gs.Variable, d: int, t: int) -> gs.Variable:
        """The input projection of step t, direction d: [batch, gates * hidden]."""
        gh = self.gates * self.hidden
        return self.ctx.op("slice", [proj], (self.batch, gh), name=self.name("x", d, t),
                           slice_start=[t * self.batch, d * gh], slice_end=[(t + 1) * self.batch, (d + 1) * gh],
                           slice_step=[1, 1])

    def recurrent_weight(self, d: int, rows: slice, tag: str) -> gs.Variable:
        weight = self.r[d][rows].T  # [hidden, k * hidden]
        return self.ctx.float_param(weight, self.name("r", tag, d), key=(self.base, "recurrent_r", tag, d),
                                    dtype=recurrent_weight_dtype(self.ctx, self.node.inputs[2].name, weight))

    def initial_states(self) -> tuple[list[Optional[gs.Variable]], list[Optional[gs.Variable]]]:
        """initial_h and (for a cell with one) initial_c of each direction; None where absent or zero."""
        return self.initial(5, "h0"), [None] * self.dirs

    def step(self, d: int, t: int, x: gs.Variable, h: Optional[gs.Variable], c: Optional[gs.Variable]):
        """The states (h, c) after step t of direction d from its input projection x ([batch, gates * hidden])
        and the states before it (None: zero); c is None for a cell without a cell state."""
        raise NotImplementedError

    def run(self) -> None:
        ctx, node = self.ctx, self.node
        proj = self.projection()
        hs, cs = self.initial_states()
        ys: list[list[gs.Variable]] = []  # per direction, the state after each step in time order
        last_h, last_c = [], []
        for d in range(self.dirs):
            h, c = hs[d], cs[d]
            states: dict[int, gs.Variable] = {}
            for t in (reversed(range(self.seq)) if self.reverse[d] else range(self.seq)):
                h, c = self.step(d, t, self.step_input(proj, d, t), h, c)
                states[t] = h
            ys.append([states[t] for t in range(self.seq)])
            last_h.append(h)
            last_c.append(c)
        y, y_h, y_c = _output(node, 0), _output(node, 1), _output(node, 2) if self.cell_state else None
        if y is not None:
            ctx.bind(y, self.assemble_y(ys))
        if y_h is not None:
            ctx.bind(y_h, self.assemble_last(last_h, "y_h"))
        if y_c is not None:
            ctx.bind(y_c, self.assemble_last(last_c, "y_c"))

    # --- outputs -------------------------------------------------------------------------------------------
    def stack(self, pieces: list[gs.Variable], name: str) -> gs.Variable:
        """[len(pieces), batch, hidden] from [batch, hidden] pieces."""
        ctx, shape = self.ctx, (1, self.batch, self.hidden)
        rows = [ctx.op("reshape", [p], shape, name=f"{name}_{k}", shape=shape) for k, p in enumerate(pieces)]
        if len(rows) == 1:
            return rows[0]
        return ctx.op("concat", rows, (len(rows), self.batch, self.hidden), name=name, dim=0)

    def assemble_y(self, ys: list[list[gs.Variable]]) -> gs.Variable:
        ctx = self.ctx
        stacked = self.stack([ys[d][t] for t in range(self.seq) for d in range(self.dirs)], self.name("y_rows"))
        shape = (self.seq, self.dirs, self.batch, self.hidden)
        y = ctx.op("reshape", [stacked], shape, name=self.name("y"), shape=shape)
        if self.layout == 1:
            y = ctx.op("permute", [y], (self.batch, self.seq, self.dirs, self.hidden), name=self.name("y_batch_first"),
                       dims=(2, 0, 1, 3))
        return y

    def assemble_last(self, states: list[gs.Variable], tag: str) -> gs.Variable:
        y = self.stack(states, self.name(tag))
        if self.layout == 1:
            y = self.ctx.op("permute", [y], (self.batch, self.dirs, self.hidden), name=self.name(tag, "batch_first"),
                            dims=(1, 0, 2))
        return y
