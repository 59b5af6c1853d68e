"""LSTM, GRU and RNN -> ttnn, unrolled over the static sequence length.

Per node, the weights are prepared on the host at conversion and uploaded once: W of every direction
transposed and side by side, `[input, directions * gates * hidden]`, with the biases that add to the input
projection folded into one row (Wb + Rb; for GRU with linear_before_reset=1 the hidden gate's Rb stays on
the recurrent side, where the reset gate multiplies it), and R of each direction transposed,
`[hidden, gates * hidden]`.  The program then computes:

- the input projection of every time step and every direction as one `ttnn.linear` over X seen as
  `[seq * batch, input]` (layout 1 is permuted to sequence-first once, on the device);
- per step and direction: one row slice of that projection, one recurrent `ttnn.linear` of the state (GRU
  with linear_before_reset=0 needs a second one, for `(r ⊙ h) Rh^T`), column slices per gate, the gate
  activations and the state update as ttnn eltwise ops; the state never leaves the device;
- Y as one `ttnn.concat` of the step states (`[seq * directions, batch, hidden]`, reshaped to
  `[seq, directions, batch, hidden]`, permuted for layout 1), Y_h and Y_c from the last states.

Without initial_h (or initial_c) the first step skips the terms of a zero state rather than uploading zeros.
Gate orders are the spec's: LSTM i, o, f, c (peepholes P in i, o, f); GRU z, r, h; RNN one gate.  `clip`
bounds the input of every activation, as the spec says: the gates', and for LSTM the cell state's input to
h() too (the tests agree with onnxruntime on clipped gates).  Activations: Sigmoid, Tanh, Relu, Softsign, Softplus, and LeakyRelu, ThresholdedRelu,
Elu, HardSigmoid, Affine, ScaledTanh with their parameters from activation_alpha / activation_beta, which
the parameterised activations consume in order.

Declined (with the reason; a host fallback or host region computes the node): runtime W / R / B / P (a
model with trained weights has them as initializers), sequence_lens that is not a constant equal to the
sequence length for every batch entry, LSTM input_forget=1, an activation not listed, and more unrolled
steps than the budget.

Budget: the unrolled program has about 15 ttnn calls per LSTM step and direction (GRU 16, RNN 5), each a
line of the program and a dispatch at run time.  MAX_UNROLLED_STEPS bounds seq_len × directions summed
over the model's recurrent nodes (so stacked layers count together): 2048 steps is about 30,000 calls,
the size of a 24-layer transformer's program, and covers CRNN recognizers (sequences of 25-80 steps, two
bidirectional layers) and speech encoders of a few seconds.  Beyond it the rule declines, naming the count.

Versions: LSTM-7 / GRU-7 / RNN-7 (7 dropped the `output_sequence` attribute), 14 (the `layout`
attribute), 22 (bfloat16).  GRU-3 (output_sequence) and the version-1 schemas are not claimed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.errors import ConversionError, NotLowerable
from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.registry import register
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
_TTNN = ("linear", "slice", "add", "multiply", "subtract", "sigmoid", "tanh", "clip", "concat", "reshape", "permute")


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


class _Cell:
    """Emits the ttnn ops of one recurrent node."""

    def __init__(self, ctx: LoweringContext, node: gs.Node, op: str) -> None:
        self.ctx, self.node, self.op = ctx, node, op
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

    def activate(self, act: Activation, x: gs.Variable, name: str) -> gs.Variable:
        ctx = self.ctx
        if self.clip is not None:
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
        if self.op == "GRU" and int(self.node.attrs.get("linear_before_reset", 0)):
            rb[:, 2 * self.hidden:] = 0.0  # the reset gate multiplies Rbh: kept on the recurrent side
        return wb + rb

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

    def run(self) -> None:
        ctx, node = self.ctx, self.node
        proj = self.projection()
        hs = self.initial(5, "h0")
        cs = self.initial(6, "c0") if self.op == "LSTM" else [None] * self.dirs
        peep = self._constant(7, "P", (self.dirs, 3 * self.hidden)) if self.op == "LSTM" else None
        ys: list[list[gs.Variable]] = []  # per direction, the state after each step in time order
        last_h, last_c = [], []
        for d in range(self.dirs):
            h, c = hs[d], cs[d]
            states: dict[int, gs.Variable] = {}
            for t in (reversed(range(self.seq)) if self.reverse[d] else range(self.seq)):
                x = self.step_input(proj, d, t)
                if self.op == "LSTM":
                    h, c = self.lstm_step(d, t, x, h, c, peep)
                elif self.op == "GRU":
                    h = self.gru_step(d, t, x, h)
                else:
                    h = self.rnn_step(d, t, x, h)
                states[t] = h
            ys.append([states[t] for t in range(self.seq)])
            last_h.append(h)
            last_c.append(c)
        y, y_h, y_c = _output(node, 0), _output(node, 1), _output(node, 2) if self.op == "LSTM" else None
        if y is not None:
            ctx.bind(y, self.assemble_y(ys))
        if y_h is not None:
            ctx.bind(y_h, self.assemble_last(last_h, "y_h"))
        if y_c is not None:
            ctx.bind(y_c, self.assemble_last(last_c, "y_c"))

    # --- the cells -----------------------------------------------------------------------------------------
    def lstm_step(self, d, t, x, h, c, peep):
        H, f_act, g_act, h_act = self.hidden, *self.acts[d]
        pre = x
        if h is not None:
            pre = self.binary("add", x, self.ctx.op("linear", [h, self.recurrent_weight(d, slice(None), "all")],
                                                    (self.batch, 4 * H), name=self.name("hr", d, t)),
                              self.name("gates", d, t))
        gate = {g: self.slice_cols(pre, k * H, (k + 1) * H, self.name(g + "_pre", d, t))
                for k, g in enumerate("iofc")}
        pi, po, pf = ((self.ctx.float_param(peep[d, k * H:(k + 1) * H].reshape(1, H), self.name("p", g, d),
                                            key=(self.base, "peephole", g, d)) if np.any(peep[d, k * H:(k + 1) * H])
                       else None) for k, g in enumerate("iof")) if peep is not None else (None, None, None)
        if c is not None and pi is not None:
            gate["i"] = self.binary("add", gate["i"], self.binary("multiply", c, pi, self.name("pc_i", d, t)),
                                    self.name("i_peep", d, t))
        if c is not None and pf is not None:
            gate["f"] = self.binary("add", gate["f"], self.binary("multiply", c, pf, self.name("pc_f", d, t)),
                                    self.name("f_peep", d, t))
        i = self.activate(f_act, gate["i"], self.name("i", d, t))
        g = self.activate(g_act, gate["c"], self.name("g", d, t))
        new_c = self.binary("multiply", i, g, self.name("ig", d, t))
        if c is not None:
            f = self.activate(f_act, gate["f"], self.name("f", d, t))
            new_c = self.binary("add", self.binary("multiply", f, c, self.name("fc", d, t)), new_c,
                                self.name("c", d, t))
        o_pre = gate["o"]
        if po is not None:
            o_pre = self.binary("add", o_pre, self.binary("multiply", new_c, po, self.name("pc_o", d, t)),
                                self.name("o_peep", d, t))
        o = self.activate(f_act, o_pre, self.name("o", d, t))
        new_h = self.binary("multiply", o, self.activate(h_act, new_c, self.name("hc", d, t)), self.name("h", d, t))
        return new_h, new_c

    def gru_step(self, d, t, x, h):
        H, f_act, g_act = self.hidden, *self.acts[d]
        before_reset = int(self.node.attrs.get("linear_before_reset", 0))
        zr = self.slice_cols(x, 0, 2 * H, self.name("x_zr", d, t))
        xh = self.slice_cols(x, 2 * H, 3 * H, self.name("x_h", d, t))
        rbh = self.b[d, 5 * H:6 * H] if self.b is not None and before_reset else None
        rbh = self.ctx.float_param(rbh.reshape(1, H), self.name("rbh", d), key=(self.base, "rbh", d)) \
            if rbh is not None and np.any(rbh) else None
        hr = None
        if h is not None:
            if before_reset:  # one matmul for all three gates: h @ R^T (+ Rbh on the hidden gate)
                hr = self.ctx.op("linear", [h, self.recurrent_weight(d, slice(None), "all")], (self.batch, 3 * H),
                                 name=self.name("hr", d, t))
                zr = self.binary("add", zr, self.slice_cols(hr, 0, 2 * H, self.name("hr_zr", d, t)),
                                 self.name("zr", d, t))
            else:
                zr = self.binary("add", zr, self.ctx.op("linear", [h, self.recurrent_weight(d, slice(0, 2 * H), "zr")],
                                                        (self.batch, 2 * H), name=self.name("hr_zr", d, t)),
                                 self.name("zr", d, t))
        z = self.activate(f_act, self.slice_cols(zr, 0, H, self.name("z_pre", d, t)), self.name("z", d, t))
        r = self.activate(f_act, self.slice_cols(zr, H, 2 * H, self.name("r_pre", d, t)), self.name("r", d, t))
        if before_reset:
            reset = None  # r * (h @ Rh^T + Rbh)
            if hr is not None:
                rec = self.slice_cols(hr, 2 * H, 3 * H, self.name("hr_h", d, t))
                if rbh is not None:
                    rec = self.binary("add", rec, rbh, self.name("hr_hb", d, t))
                reset = self.binary("multiply", r, rec, self.name("r_hr", d, t))
            elif rbh is not None:
                reset = self.binary("multiply", r, rbh, self.name("r_hr", d, t))
        else:
            reset = None  # (r * h) @ Rh^T
            if h is not None:
                reset = self.ctx.op("linear", [self.binary("multiply", r, h, self.name("rh", d, t)),
                                               self.recurrent_weight(d, slice(2 * H, 3 * H), "h")],
                                    (self.batch, H), name=self.name("r_hr", d, t))
        if reset is not None:
            xh = self.binary("add", xh, reset, self.name("h_pre", d, t))
        cand = self.activate(g_act, xh, self.name("cand", d, t))
        if h is None:  # (1 - z) * cand
            return self.binary("subtract", cand, self.binary("multiply", z, cand, self.name("zc", d, t)),
                               self.name("h", d, t))
        # (1 - z) * cand + z * h = cand + z * (h - cand)
        delta = self.binary("subtract", h, cand, self.name("dh", d, t))
        return self.binary("add", cand, self.binary("multiply", z, delta, self.name("zd", d, t)),
                           self.name("h", d, t))

    def rnn_step(self, d, t, x, h):
        pre = x
        if h is not None:
            pre = self.binary("add", x, self.ctx.op("linear", [h, self.recurrent_weight(d, slice(None), "all")],
                                                    (self.batch, self.hidden), name=self.name("hr", d, t)),
                              self.name("pre", d, t))
        return self.activate(self.acts[d][0], pre, self.name("h", d, t))

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


def _lower(op: str):
    def rule(ctx: LoweringContext, node: gs.Node) -> None:
        if op == "LSTM" and int(node.attrs.get("input_forget", 0)):
            ctx.decline("LSTM input_forget=1 (coupled input and forget gates) is not lowered")
        cell = _Cell(ctx, node, op)
        cell.reserve_budget()
        cell.run()
    rule.__name__ = op.lower()
    return rule


_NOTE = ("unrolled over the sequence; constant weights; sequence_lens absent or all full length; "
         f"at most {MAX_UNROLLED_STEPS} steps x directions per model")
register("LSTM", versions=(7, 14, 22), ttnn=_TTNN, note=_NOTE + "; peepholes; not input_forget")(_lower("LSTM"))
register("GRU", versions=(7, 14, 22), ttnn=_TTNN, note=_NOTE + "; linear_before_reset 0 and 1")(_lower("GRU"))
register("RNN", versions=(7, 14, 22), ttnn=_TTNN, note=_NOTE)(_lower("RNN"))
