"""Matmul program configs chosen by ir/program_config.choose: does real ttnn accept each, does it compute the
same as the call without one, and how much L1 per bank does the configured call need beyond its inputs.

Each case: input_tensor_a's shape and the planner's sharded layout for it (ir/placements.py height_shard_layout /
width_shard_layout), b a 2-D weight in DRAM or a batched activation in L1 interleaved, the output in L1
interleaved.  The chooser's config is built from its repr (what the program writes) and passed as
program_config=; the call is refused or accepted (AGREE when the chooser gave a config and ttnn accepted it, or
gave none), and its result compared with the unconfigured call's (max abs difference; a mock device computes
no values, so 0 there says nothing: the simulator's tests check values).  Then the L1 need:
a blocker takes all of L1 but F bytes per bank below a and b (probe_conv_cb.py's method), and a binary search
finds the least F (to 4 KiB) with which the configured call runs: its circular buffers and its output; MODEL
is ir/program_config.circular_buffer_bytes, which must not be under NEED less the output's bytes per bank.
Prints `AGREE|DISAGREE ok|err name: config ... | NEED F` per case and a summary line."""
import sys

from _common import *

converter_ir_on_path()
from onnx2ttnn.ir.layout import TTNNLayout  # noqa: E402
from onnx2ttnn.ir.placements import height_shard_layout, width_shard_layout  # noqa: E402
from onnx2ttnn.ir.program_config import choose, circular_buffer_bytes  # noqa: E402

d = open_dev()
RESERVE = 320 * 1024  # memory/budget.py OP_SCRATCH_RESERVE: the L1 the planner keeps free at every op


def free_per_bank():
    return int(ttnn.get_memory_view(d, ttnn.BufferType.L1).largest_contiguous_bytes_free_per_bank)


def _block(per_bank):
    pages = max(1, per_bank // 64) * 64
    return dev(d, (1, 1, pages, 32), layout=RM, mc=L1)


# (name, a shape, "height" | "width" | "batch" (height, one batch per shard), b shape, b in "dram" | "l1",
#  the kernel config's fp32_dest_acc_en)
CASES = [
    # the reduced zoo's sharded matmuls (attention, one batch per shard)
    ("bert/gpt2 reduced q@kT", (1, 4, 16, 16), "height", (1, 4, 16, 16), "l1", True),
    ("vit reduced q@kT", (1, 4, 17, 16), "height", (1, 4, 16, 17), "l1", True),
    ("vit reduced p@v", (1, 4, 17, 17), "height", (1, 4, 17, 16), "l1", True),
    ("batched 8 heads 128x64", (1, 8, 128, 64), "batch", (1, 8, 64, 128), "l1", True),
    ("batched 4 heads 64x32 bf16 dest", (1, 4, 64, 32), "batch", (1, 4, 32, 64), "l1", False),
    # linears on a height-sharded activation (BERT-base / ViT-B / GPT-2 widths)
    ("h 128x768 @ 768x768", (1, 128, 768), "height", (768, 768), "dram", True),
    ("h 128x768 @ 768x3072", (1, 128, 768), "height", (768, 3072), "dram", True),
    ("h 128x3072 @ 3072x768", (1, 128, 3072), "height", (3072, 768), "dram", True),
    ("h 197x768 @ 768x2304 (uneven rows)", (1, 197, 768), "height", (768, 2304), "dram", True),
    ("h 2048x64 @ 64x96", (1, 1, 2048, 64), "height", (64, 96), "dram", True),
    ("h 416x64 @ 64x96 (uneven 7 cores)", (1, 1, 416, 64), "height", (64, 96), "dram", False),
    ("h 3136x64 @ 64x256 (r50 1x1 as matmul)", (1, 1, 3136, 64), "height", (64, 256), "dram", False),
    # linears on a width-sharded activation
    ("w 32x768 @ 768x768", (1, 32, 768), "width", (768, 768), "dram", True),
    ("w 32x1024 @ 1024x1000", (1, 1, 32, 1024), "width", (1024, 1024), "dram", True),
    ("w 64x256 @ 256x512", (1, 64, 256), "width", (256, 512), "dram", False),
]


def sharded(shape, kind):
    if kind == "width":
        layout = width_shard_layout(shape, TTNNLayout(), 8, 8)
    else:
        batches = 1
        for dim in shape[:-2]:
            batches *= dim
        layout = height_shard_layout(shape, TTNNLayout(), 8, 8, max_cores=batches if kind == "batch" else None)
    return layout, shard_memory_config(layout)


def run(a_shape, kind, b_shape, b_where, config, fp32, free=None):
    """The call's result as torch (None when ttnn refused it), with `free` bytes per bank left below."""
    layout, mc = sharded(a_shape, kind)
    torch.manual_seed(0)
    a = dev(d, a_shape, mc=mc)
    b = dev(d, b_shape, mc=DR if b_where == "dram" else L1)
    blocker = None
    kcc = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, math_approx_mode=False,
                                           fp32_dest_acc_en=fp32, packer_l1_acc=False)
    try:
        if free is not None and free_per_bank() > free:
            blocker = _block(free_per_bank() - free)
        extra = {} if config is None else {"program_config": config}
        out = ttnn.matmul(a, b, memory_config=L1, compute_kernel_config=kcc, **extra)
        result = ttnn.to_torch(out).float()
        ttnn.deallocate(out)
        return result, ""
    except Exception as e:  # noqa: BLE001
        return None, f"{type(e).__name__}: {errtext(e, 2)}"
    finally:
        for t in (blocker, a, b):
            if t is not None and t.is_allocated():
                ttnn.deallocate(t)


def need(a_shape, kind, b_shape, b_where, config, fp32):
    """The least free L1 per bank (to 4 KiB) with which the call runs."""
    low, high = 0, free_per_bank()
    while high - low > 4096:
        mid = (low + high) // 2
        if run(a_shape, kind, b_shape, b_where, config, fp32, free=mid)[0] is not None:
            high = mid
        else:
            low = mid
    return high


agree = disagree = 0
for name, a_shape, kind, b_shape, b_where, fp32 in CASES:
    layout, _ = sharded(a_shape, kind)
    chosen = choose(a_shape, layout, b_shape, fp32_dest=fp32, l1_limit=RESERVE)
    config = None if isinstance(chosen, str) else eval(repr(chosen), {"ttnn": ttnn})  # noqa: S307 (our repr)
    plain, plain_err = run(a_shape, kind, b_shape, b_where, None, fp32)
    got, err = run(a_shape, kind, b_shape, b_where, config, fp32)
    ok = got is not None
    verdict = "AGREE" if ok or config is None else "DISAGREE"
    agree += verdict == "AGREE"
    disagree += verdict == "DISAGREE"
    placed = f"{kind} {layout.grid[0]}x{layout.grid[1]} shard={layout.shard[0]}x{layout.shard[1]}"
    what = chosen if isinstance(chosen, str) else repr(chosen).replace("ttnn.", "")
    line = f"{verdict:8} {'ok ' if ok else 'err'} {name} [{placed}, b {b_where}, fp32_dest={fp32}]: {what}"
    if not ok:
        line += f" | {err}"
    elif config is None:
        line += " | no config: ttnn's own program ran" if plain is not None else f" | ttnn's own refused: {plain_err}"
    elif plain is not None:
        line += f" | max|configured - default| = {float((got - plain).abs().max()):.3g}"
        out_tiles = got[..., 0, 0].numel() * -(-got.shape[-2] // 32) * -(-got.shape[-1] // 32)
        output = -(-out_tiles // 64) * 2048  # the bf16 output's bytes per bank (64 banks, interleaved)
        model = circular_buffer_bytes(chosen.per_core_M, chosen.per_core_N, chosen.in0_block_w,
                                      -(-b_shape[-2] // 32), 2048)
        measured = need(a_shape, kind, b_shape, b_where, config, fp32)
        covered = "covered" if measured - output <= model <= RESERVE else "NOT COVERED"
        line += f" | NEED {measured} B/bank, MODEL {model} + output {output}: {covered}"
        disagree += covered != "covered"
    else:
        line += f" | default program refused: {plain_err}"
    print(line, flush=True)
# configs the simulator refuses (sim/_program_config.py): each must be refused by real ttnn too
from dataclasses import replace  # noqa: E402

BROKEN = [  # (name, case index, field overrides)
    ("per_core_M under the shard height", 11, dict(per_core_M=1, out_subblock_h=1)),
    ("per_core_M over the shard height", 9, dict(per_core_M=2)),
    ("in0_block_w not dividing K", 5, dict(in0_block_w=5)),
    ("subblock over 4 tiles with fp32_dest_acc_en", 5, dict(out_subblock_w=8, out_subblock_h=1)),
    ("subblock over 8 tiles", 11, dict(out_subblock_h=2, out_subblock_w=8)),
    ("out_subblock_w not dividing per_core_N", 9, dict(out_subblock_w=2)),
    ("batched: per_core_M not one batch", 3, dict(per_core_M=2, out_subblock_h=1)),
    ("batched: per_core_N under N", 3, dict(per_core_N=2, out_subblock_w=1)),
    ("1-D: per_core_N under N (mcast_in0=False)", 5, dict(per_core_N=12, out_subblock_w=4)),
]
for name, index, fields in BROKEN:
    _, a_shape, kind, b_shape, b_where, fp32 = CASES[index]
    layout, _ = sharded(a_shape, kind)
    broken = replace(choose(a_shape, layout, b_shape, fp32_dest=fp32, l1_limit=RESERVE), **fields)
    got, err = run(a_shape, kind, b_shape, b_where, eval(repr(broken), {"ttnn": ttnn}), fp32)  # noqa: S307
    verdict = "AGREE" if got is None else "DISAGREE"
    agree += verdict == "AGREE"
    disagree += verdict == "DISAGREE"
    print(f"{verdict:8} {'ok ' if got is not None else 'err'} refused? {name} ({CASES[index][0]}): "
          f"{repr(broken).replace('ttnn.', '')} | {err}", flush=True)
print(f"program configs: {agree} agree, {disagree} disagree", flush=True)
ttnn.close_device(d)
sys.stdout.flush()
os._exit(0 if disagree == 0 else 1)
