"""Autoregressive decoders written in torch and scripted (the zoo's `torch` kind, exported by TorchScript only):
their loops stay ONNX Loops, which is what they are here to exercise.

- `TableDecoder`: a table-structure recognizer in the shape of the image-to-markup decoders that ship as
  ONNX (issue 13's table decoder): a small conv encoder over the page image, projected to a memory of
  `hidden`-wide vectors, then a greedy decode of structure tokens for at most `max_steps` steps.  Each step
  attends over the memory with the state, updates the state (tanh of a linear map of the previous token's
  embedding, the step's position embedding, the attention context and the state), and takes the argmax
  token; a cell token (`cell`) also predicts the cell's box (sigmoid of a linear map), other tokens a zero
  box; the decode stops after the end token (`end`).  Exported, this is one Loop with trip count
  `max_steps`, a data-dependent exit and two Ifs in its body (box or no box; break or not), followed by the
  slices that cut the token and box buffers to the decoded length: outputs `structure` [n] int64 and
  `cells` [n, 4].  With the seeded random weights (`end_bias` 0) the decode of verify's seeded random image
  ends after 16 steps, that of an all-zero memory (the real mock's device values) after 7.

torch is imported only by the functions below, so models/zoo.py stays importable without it.
"""
from __future__ import annotations


def _modules():
    import torch
    from torch import nn

    class TableDecoder(nn.Module):
        def __init__(self, channels=(16, 32), hidden=32, vocab=8, max_steps=1024, end=1, cell=2, end_bias=0.0):
            super().__init__()
            blocks, c_in = [], 3
            for c_out in channels:
                blocks += [nn.Conv2d(c_in, c_out, 3, stride=2, padding=1), nn.ReLU()]
                c_in = c_out
            self.encoder = nn.Sequential(*blocks)
            self.project = nn.Linear(c_in, hidden)
            self.embed = nn.Parameter(torch.randn(vocab, hidden))
            self.position = nn.Parameter(torch.randn(max_steps, hidden))
            self.update = nn.Linear(4 * hidden, hidden)
            self.classify = nn.Linear(hidden, vocab)
            with torch.no_grad():
                self.classify.bias[end] += end_bias
            self.box = nn.Linear(hidden, 4)
            self.max_steps, self.end, self.cell = max_steps, end, cell

        def forward(self, pixel_values):
            features = self.encoder(pixel_values)
            memory = self.project(features.flatten(2).transpose(1, 2))[0]  # [positions, hidden]
            state = memory.mean(0)
            token = torch.zeros((), dtype=torch.long)
            tokens = torch.zeros(self.max_steps, dtype=torch.long)
            boxes = torch.zeros(self.max_steps, 4)
            n = 0
            for i in range(self.max_steps):
                context = torch.softmax(memory @ state, 0) @ memory
                state = torch.tanh(self.update(torch.cat([self.embed[token], self.position[i], context, state])))
                token = torch.argmax(self.classify(state))
                if bool(token == self.cell):
                    box = torch.sigmoid(self.box(state))
                else:
                    box = torch.zeros(4)
                tokens[i] = token
                boxes[i] = box
                n = i + 1
                if bool(token == self.end):
                    break
            return tokens[:n], boxes[:n]

    return {"TableDecoder": TableDecoder}


NAMES = ("TableDecoder",)


def build(name: str, config: dict):
    """The module `name` of this file built from `config` and scripted (the caller seeds torch first)."""
    import torch

    return torch.jit.script(_modules()[name](**config))
