"""Writes tiny_ttnn.npz (seeded) next to this file: the weights of tiny_ttnn.py."""
import os
import numpy as np

rng = np.random.default_rng(0)
here = os.path.dirname(os.path.abspath(__file__))
np.savez(os.path.join(here, "tiny_ttnn.npz"),
         W1=rng.standard_normal((48, 64)).astype(np.float32) * 0.1,
         b1=rng.standard_normal((64,)).astype(np.float32) * 0.1,
         emb=rng.standard_normal((50, 48)).astype(np.float32))
print("wrote", os.path.join(here, "tiny_ttnn.npz"))
