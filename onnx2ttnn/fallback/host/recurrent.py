"""LSTM, GRU and RNN on the host, step by step per the ONNX equations, with per-entry sequence lengths."""
import torch


def _rec_activation(x, name, alpha, beta, clip):
    if clip is not None:
        x = torch.clamp(x, -clip, clip)
    if name == "Sigmoid":
        return torch.sigmoid(x)
    if name == "Tanh":
        return torch.tanh(x)
    if name == "Relu":
        return torch.relu(x)
    if name == "Softsign":
        return x / (1 + x.abs())
    if name == "Softplus":
        return torch.nn.functional.softplus(x)
    if name == "LeakyRelu":
        return torch.where(x >= 0, x, alpha * x)
    if name == "ThresholdedRelu":
        return torch.where(x > alpha, x, torch.zeros_like(x))
    if name == "Elu":
        return torch.where(x >= 0, x, alpha * (torch.exp(x) - 1))
    if name == "HardSigmoid":
        return torch.clamp(alpha * x + beta, 0.0, 1.0)
    if name == "Affine":
        return alpha * x + beta
    if name == "ScaledTanh":
        return alpha * torch.tanh(beta * x)
    raise ValueError(f"unknown activation {name!r}")


def host_recurrent(x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None, p=None, *, cell,
                   direction="forward", layout=0, clip=None, activations=(), linear_before_reset=0, input_forget=0):
    """(Y, Y_h[, Y_c]) of an ONNX LSTM / GRU / RNN node."""
    x, w, r = x.float(), w.float(), r.float()
    if layout:
        x = x.transpose(0, 1)
        initial_h = initial_h.transpose(0, 1) if initial_h is not None else None
        initial_c = initial_c.transpose(0, 1) if initial_c is not None else None
    seq, batch = x.shape[0], x.shape[1]
    dirs, hidden = w.shape[0], r.shape[-1]
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[cell]
    per = len(activations) // dirs
    lens = sequence_lens.long() if sequence_lens is not None else torch.full((batch,), seq, dtype=torch.long)
    y = torch.zeros(seq, dirs, batch, hidden)
    last_h, last_c = [], []
    for d in range(dirs):
        reverse = direction == "reverse" or d == 1
        acts = activations[d * per:(d + 1) * per]
        f = lambda v, k: _rec_activation(v, acts[k][0], acts[k][1], acts[k][2], clip)  # noqa: E731
        bias = b[d].float() if b is not None else torch.zeros(2 * gates * hidden)
        wb, rb = bias[:gates * hidden], bias[gates * hidden:]
        h = initial_h[d].float() if initial_h is not None else torch.zeros(batch, hidden)
        c = initial_c[d].float() if initial_c is not None else torch.zeros(batch, hidden)
        for step in range(seq):
            t = seq - 1 - step if reverse else step
            active = (t < lens).unsqueeze(1)
            xw = x[t].float() @ w[d].T + wb
            new_c = c
            if cell == "LSTM":
                pi, po, pf = (p[d].float().split(hidden) if p is not None else (torch.zeros(hidden),) * 3)
                i, o, fg, g = (xw + h @ r[d].T + rb).split(hidden, dim=1)
                i = f(i + pi * c, 0)
                fg = 1 - i if input_forget else f(fg + pf * c, 0)
                new_c = fg * c + i * f(g, 1)
                new_h = f(o + po * new_c, 0) * _rec_activation(new_c, *acts[2], None)  # (onnxruntime: no clip)
            elif cell == "GRU":
                xz, xr, xh = xw.split(hidden, dim=1)
                rz, rr, rh = r[d].split(hidden, dim=0)
                rbz, rbr, rbh = rb.split(hidden)
                z = f(xz + h @ rz.T + rbz, 0)
                reset = f(xr + h @ rr.T + rbr, 0)
                if linear_before_reset:
                    candidate = f(xh + reset * (h @ rh.T + rbh), 1)
                else:
                    candidate = f(xh + (reset * h) @ rh.T + rbh, 1)
                new_h = (1 - z) * candidate + z * h
            else:
                new_h = f(xw + h @ r[d].T + rb, 0)
            y[t, d] = torch.where(active, new_h, torch.zeros_like(new_h))
            h = torch.where(active, new_h, h)
            c = torch.where(active, new_c, c)
        last_h.append(h)
        last_c.append(c)
    y_h, y_c = torch.stack(last_h), torch.stack(last_c)
    if layout:
        y, y_h, y_c = y.permute(2, 0, 1, 3), y_h.transpose(0, 1), y_c.transpose(0, 1)
    return (y, y_h, y_c) if cell == "LSTM" else (y, y_h)
