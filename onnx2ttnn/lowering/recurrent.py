"""LSTM, GRU and RNN -> ttnn, unrolled over the static sequence length: the three cells' steps and their
rules.  What every cell shares (the weights prepared on the host, the one input projection, the initial and
final states, the activations, the budget of unrolled steps) is lowering/recurrent_unroll.py.

Per step and direction a cell gets its row slice of the input projection, `[batch, gates * hidden]`, and
emits one recurrent `ttnn.linear` of the state (GRU with linear_before_reset=0 needs a second one, for
`(r ⊙ h) Rh^T`), column slices per gate, the gate activations and the state update as ttnn eltwise ops.
Gate orders are the spec's: LSTM i, o, f, c (peepholes P in i, o, f); GRU z, r, h; RNN one gate.  `clip`
bounds the input of every gate's activation; the LSTM cell state's input to h() is not clipped, as in
onnxruntime (its kernel clips the gates only; a literal reading of the spec, "applied to the input of
activations", would clip Ct too: fuzz seed 73 case 1731 measured 0.12 between the two, seed 67 case 623
0.0017-0.003; onnxruntime is the reference, and a numpy LSTM clipping the gates only reproduces it to 1e-7;
onnx's reference evaluator ignores clip altogether).  For GRU with linear_before_reset=1 the
hidden gate's Rb stays on the recurrent side, where the reset gate multiplies it.

Declined (with the reason; a host fallback or host region computes the node): LSTM input_forget=1, and
what recurrent_unroll.py declines (runtime weights, short sequence_lens, an unknown activation, more
unrolled steps than the budget).

Versions: LSTM-7 / GRU-7 / RNN-7 (7 dropped the `output_sequence` attribute), 14 (the `layout`
attribute), 22 (bfloat16).  GRU-3 (output_sequence) and the version-1 schemas are not claimed.
"""
from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from onnx2ttnn.lowering.context import LoweringContext
from onnx2ttnn.lowering.recurrent_unroll import MAX_UNROLLED_STEPS, UnrolledNode
from onnx2ttnn.lowering.registry import register

_TTNN = ("linear", "slice", "add", "multiply", "subtract", "sigmoid", "tanh", "clip", "concat", "reshape", "permute")


class LstmCell(UnrolledNode):
    """LSTM: gates i, o, f, c; a cell state c; peepholes P."""

    op = "LSTM"
    cell_state = True

    def __init__(self, ctx: LoweringContext, node: gs.Node) -> None:
        if int(node.attrs.get("input_forget", 0)):
            ctx.decline("LSTM input_forget=1 (coupled input and forget gates) is not lowered")
        super().__init__(ctx, node)
        self.peep = None

    def initial_states(self):
        hs, cs = self.initial(5, "h0"), self.initial(6, "c0")
        self.peep = self._constant(7, "P", (self.dirs, 3 * self.hidden))
        return hs, cs

    def step(self, d, t, x, h, c):
        peep = self.peep
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
        cell = self.activate(h_act, new_c, self.name("hc", d, t), clipped=False)
        new_h = self.binary("multiply", o, cell, self.name("h", d, t))
        return new_h, new_c


class GruCell(UnrolledNode):
    """GRU: gates z, r, h; linear_before_reset 0 ((r * h) @ Rh^T) and 1 (r * (h @ Rh^T + Rbh))."""

    op = "GRU"

    def folded_recurrent_bias(self, rb: np.ndarray) -> np.ndarray:
        if int(self.node.attrs.get("linear_before_reset", 0)):
            rb[:, 2 * self.hidden:] = 0.0  # the reset gate multiplies Rbh: kept on the recurrent side
        return rb

    def step(self, d, t, x, h, c):
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
                               self.name("h", d, t)), None
        # (1 - z) * cand + z * h = cand + z * (h - cand)
        delta = self.binary("subtract", h, cand, self.name("dh", d, t))
        return self.binary("add", cand, self.binary("multiply", z, delta, self.name("zd", d, t)),
                           self.name("h", d, t)), None


class RnnCell(UnrolledNode):
    """RNN: one gate."""

    op = "RNN"

    def step(self, d, t, x, h, c):
        pre = x
        if h is not None:
            pre = self.binary("add", x, self.ctx.op("linear", [h, self.recurrent_weight(d, slice(None), "all")],
                                                    (self.batch, self.hidden), name=self.name("hr", d, t)),
                              self.name("pre", d, t))
        return self.activate(self.acts[d][0], pre, self.name("h", d, t)), None


def _lower(cell: type[UnrolledNode]):
    def rule(ctx: LoweringContext, node: gs.Node) -> None:
        unrolled = cell(ctx, node)
        unrolled.reserve_budget()
        unrolled.run()
    rule.__name__ = cell.op.lower()
    return rule


_NOTE = ("unrolled over the sequence; constant weights; sequence_lens absent or all full length; "
         f"at most {MAX_UNROLLED_STEPS} steps x directions per model")
register("LSTM", versions=(7, 14, 22), ttnn=_TTNN, note=_NOTE + "; peepholes; not input_forget")(_lower(LstmCell))
register("GRU", versions=(7, 14, 22), ttnn=_TTNN, note=_NOTE + "; linear_before_reset 0 and 1")(_lower(GruCell))
register("RNN", versions=(7, 14, 22), ttnn=_TTNN, note=_NOTE)(_lower(RnnCell))
