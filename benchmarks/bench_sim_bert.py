"""How fast is the ttnn simulator?  A BERT-base encoder as ttnn calls vs the same in torch eager fp32.

12 layers, hidden 768, 12 heads, seq 128, batch 1; the simulated program keeps everything in bf16 TILE
DRAM and deallocates each intermediate after its last use, like a generated program.  Prints one line, e.g.
    bert-base seq128 x12 layers: sim 0.105 s, torch fp32 0.178 s, ratio 0.59x (target <= 3x); pcc ...
Usage: python benchmarks/bench_sim_bert.py [--layers N] [--repeats R]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import onnx2ttnn.sim as ttnn  # noqa: E402
from onnx2ttnn.sim import runtime  # noqa: E402

HIDDEN, HEADS, SEQ, FF = 768, 12, 128, 3072
HEAD = HIDDEN // HEADS


def make_weights(layers: int, seed: int = 0) -> list[dict]:
    """Random BERT-like parameters (torch fp32), one dict per layer."""
    g = torch.Generator().manual_seed(seed)

    def rnd(*shape, scale=0.02):
        return torch.randn(*shape, generator=g) * scale

    return [{
        "wq": rnd(HIDDEN, HIDDEN), "bq": rnd(HIDDEN), "wk": rnd(HIDDEN, HIDDEN), "bk": rnd(HIDDEN),
        "wv": rnd(HIDDEN, HIDDEN), "bv": rnd(HIDDEN), "wo": rnd(HIDDEN, HIDDEN), "bo": rnd(HIDDEN),
        "g1": 1 + rnd(HIDDEN), "b1": rnd(HIDDEN), "w1": rnd(HIDDEN, FF), "c1": rnd(FF),
        "w2": rnd(FF, HIDDEN), "c2": rnd(HIDDEN), "g2": 1 + rnd(HIDDEN), "b2": rnd(HIDDEN),
    } for _ in range(layers)]


def torch_encoder(x: torch.Tensor, mask: torch.Tensor, weights: list[dict]) -> torch.Tensor:
    """The reference: plain torch eager in fp32."""
    for p in weights:
        q = (x @ p["wq"] + p["bq"]).reshape(1, SEQ, HEADS, HEAD).permute(0, 2, 1, 3)
        k = (x @ p["wk"] + p["bk"]).reshape(1, SEQ, HEADS, HEAD).permute(0, 2, 3, 1)
        v = (x @ p["wv"] + p["bv"]).reshape(1, SEQ, HEADS, HEAD).permute(0, 2, 1, 3)
        probs = torch.softmax(q @ k * (1.0 / HEAD ** 0.5) + mask, dim=-1)
        ctx = (probs @ v).permute(0, 2, 1, 3).reshape(1, SEQ, HIDDEN)
        h = torch.nn.functional.layer_norm(ctx @ p["wo"] + p["bo"] + x, (HIDDEN,), p["g1"], p["b1"], 1e-12)
        ff = torch.nn.functional.gelu(h @ p["w1"] + p["c1"]) @ p["w2"] + p["c2"]
        x = torch.nn.functional.layer_norm(ff + h, (HIDDEN,), p["g2"], p["b2"], 1e-12)
    return x


def to_device_weights(device, weights: list[dict]) -> list[dict]:
    """Parameters as bf16 TILE DRAM device tensors."""
    return [{k: ttnn.from_torch(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                                memory_config=ttnn.DRAM_MEMORY_CONFIG) for k, v in p.items()} for p in weights]


def ttnn_encoder(x, mask, weights: list[dict]):
    """The encoder written as a generated program would call ttnn (deallocating after last uses)."""
    dram = ttnn.DRAM_MEMORY_CONFIG
    for p in weights:
        heads = []
        for w, b, order in (("wq", "bq", (0, 2, 1, 3)), ("wk", "bk", (0, 2, 3, 1)), ("wv", "bv", (0, 2, 1, 3))):
            t = ttnn.linear(x, p[w], bias=p[b], memory_config=dram)
            r = ttnn.reshape(t, (1, SEQ, HEADS, HEAD), memory_config=dram)
            ttnn.deallocate(t)
            heads.append(ttnn.permute(r, order, memory_config=dram))
            ttnn.deallocate(r)
        q, kt, v = heads
        scores = ttnn.matmul(q, kt, memory_config=dram)
        ttnn.deallocate(q)
        ttnn.deallocate(kt)
        scaled = ttnn.multiply(scores, 1.0 / HEAD ** 0.5, memory_config=dram)
        ttnn.deallocate(scores)
        masked = ttnn.add(scaled, mask, memory_config=dram)
        ttnn.deallocate(scaled)
        probs = ttnn.softmax(masked, dim=-1, memory_config=dram)
        ttnn.deallocate(masked)
        ctx = ttnn.matmul(probs, v, memory_config=dram)
        ttnn.deallocate(probs)
        ttnn.deallocate(v)
        ctx_p = ttnn.permute(ctx, (0, 2, 1, 3), memory_config=dram)
        ttnn.deallocate(ctx)
        ctx_r = ttnn.reshape(ctx_p, (1, SEQ, HIDDEN), memory_config=dram)
        ttnn.deallocate(ctx_p)
        attn = ttnn.linear(ctx_r, p["wo"], bias=p["bo"], memory_config=dram)
        ttnn.deallocate(ctx_r)
        res = ttnn.add(attn, x, memory_config=dram)
        ttnn.deallocate(attn)
        ttnn.deallocate(x)
        h = ttnn.layer_norm(res, epsilon=1e-12, weight=p["g1"], bias=p["b1"], memory_config=dram)
        ttnn.deallocate(res)
        ff1 = ttnn.linear(h, p["w1"], bias=p["c1"], activation="gelu", memory_config=dram)
        ff2 = ttnn.linear(ff1, p["w2"], bias=p["c2"], memory_config=dram)
        ttnn.deallocate(ff1)
        res2 = ttnn.add(ff2, h, memory_config=dram)
        ttnn.deallocate(ff2)
        ttnn.deallocate(h)
        x = ttnn.layer_norm(res2, epsilon=1e-12, weight=p["g2"], bias=p["b2"], memory_config=dram)
        ttnn.deallocate(res2)
    return x


def best_time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    weights = make_weights(args.layers)
    x = torch.randn(1, SEQ, HIDDEN)
    mask = torch.zeros(1, 1, 1, SEQ)
    mask[..., SEQ - 8:] = -10000.0

    with torch.no_grad():
        torch_encoder(x, mask, weights)  # warm-up
        t_torch = best_time(lambda: torch_encoder(x, mask, weights), args.repeats)
        reference = torch_encoder(x, mask, weights)

    runtime.configure("n150")
    device = ttnn.open_device(device_id=0, l1_small_size=16384)
    dev_weights = to_device_weights(device, weights)
    dev_mask = ttnn.from_torch(mask, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    def run_sim():
        xin = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        out = ttnn_encoder(xin, dev_mask, dev_weights)
        result = ttnn.to_torch(out)
        ttnn.deallocate(out)
        return result

    run_sim()  # warm-up
    t_sim = best_time(run_sim, args.repeats)
    out = run_sim().float()
    pcc = torch.corrcoef(torch.stack([out.flatten(), reference.flatten()]))[0, 1].item()
    peak_dram = runtime.memory_stats(device)["DRAM"].peak_per_bank
    for p in dev_weights:
        for t in p.values():
            ttnn.deallocate(t)
    ttnn.deallocate(dev_mask)
    ttnn.close_device(device)
    leaks = len(runtime.leaks(device))
    ratio = t_sim / t_torch
    print(f"bert-base seq{SEQ} x{args.layers} layers: sim {t_sim:.3f} s, torch fp32 {t_torch:.3f} s, "
          f"ratio {ratio:.2f}x (target <= 3x); pcc {pcc:.4f}, DRAM peak {peak_dram} B/bank, leaks {leaks}")
    return ratio


if __name__ == "__main__":
    main()
