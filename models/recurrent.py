"""Recurrent zoo architectures written in torch (the zoo's `torch` kind): built from keyword configs with
seeded random weights, exported like the transformers entries (models/export.py).

- `CRNN`: a text-line recognizer in the usual CRNN shape: a VGG-style conv stack (conv, batchnorm, ReLU,
  max-pools that halve the height faster than the width) over a grayscale line image, the height collapsed
  into channels, a stack of bidirectional LSTMs over the width, and a Linear to per-column class logits
  (CTC's blank included).  Output `[width / 4, batch, classes]`, sequence-first as CTC decoders read it.
- `GRUEncoder`: a speech-style encoder: log-mel frames `[batch, frames, mels]`, a Linear and LayerNorm
  front end, a stack of bidirectional GRUs (batch-first), and a Linear projection of every frame.

torch is imported only by the functions below, so models/zoo.py stays importable without it.
"""
from __future__ import annotations


def _modules():
    import torch
    from torch import nn

    class CRNN(nn.Module):
        def __init__(self, height=32, channels=(16, 32, 64), hidden=64, layers=2, classes=37):
            super().__init__()
            blocks, c_in = [], 1
            for index, c_out in enumerate(channels):
                blocks += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU()]
                # the first two pools halve height and width, the later ones only the height
                blocks.append(nn.MaxPool2d(2) if index < 2 else nn.MaxPool2d((2, 1)))
                c_in = c_out
            self.features = nn.Sequential(*blocks)
            rows = height // 2 ** len(channels)
            self.rnn = nn.LSTM(c_in * rows, hidden, num_layers=layers, bidirectional=True)
            self.classifier = nn.Linear(2 * hidden, classes)

        def forward(self, pixel_values):
            f = self.features(pixel_values)  # [N, C, H', W']
            n, c, h, w = f.shape
            seq = f.reshape(n, c * h, w).permute(2, 0, 1)  # [W', N, C * H']
            y, _ = self.rnn(seq)
            return {"logits": self.classifier(y)}

    class GRUEncoder(nn.Module):
        def __init__(self, mels=40, hidden=64, layers=2, out=64):
            super().__init__()
            self.front = nn.Linear(mels, hidden)
            self.norm = nn.LayerNorm(hidden)
            self.rnn = nn.GRU(hidden, hidden, num_layers=layers, bidirectional=True, batch_first=True)
            self.proj = nn.Linear(2 * hidden, out)

        def forward(self, input_features):
            x = torch.relu(self.norm(self.front(input_features)))
            y, h = self.rnn(x)
            return {"last_hidden_state": self.proj(y), "final_state": h}

    return {"CRNN": CRNN, "GRUEncoder": GRUEncoder}


def build(name: str, config: dict):
    """The torch module `name` of this file, built from `config` (the caller seeds torch first)."""
    return _modules()[name](**config)
