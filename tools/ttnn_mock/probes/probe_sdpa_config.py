"""scaled_dot_product_attention with a compute_kernel_config and an SDPAProgramConfig, at the full-size zoo's
attention shapes (BERT-base: 12 heads of 64 over 128 tokens with a [1, 1, 128, 128] mask; GPT-2: the same,
causal; ViT-B/16: 197 tokens, no mask): which kernel configs and which q / k chunk sizes real ttnn accepts, and
how much L1 per bank the call needs beyond its inputs (its circular buffers: the output goes to DRAM).

L1 need: probe_conv_cb.py's method: a blocker takes all of L1 but F bytes per bank below q, k, v (in L1
interleaved, as the planner may place them), and a binary search finds the least F (to 4 KiB) with which the
call runs.  MODEL is ir/sdpa_config.circular_buffer_bytes, which must not be under NEED ("covered"); mode
`chosen` runs the configs ir/sdpa_config.choose makes for the cases (q, k, v in bfloat16, the 320 KiB reserve).
Prints `OK|ERR name: ... | NEED F B/bank, MODEL M` per case.  Usage: probe_sdpa_config.py [kernel|chunks|chosen]."""
import sys

from _common import *

converter_ir_on_path()
from onnx2ttnn.ir.sdpa_config import choose, circular_buffer_bytes  # noqa: E402

d = open_dev()
RESERVE = 320 * 1024  # memory/budget.py OP_SCRATCH_RESERVE
SDPA = ttnn.transformer.scaled_dot_product_attention
GRID = d.compute_with_storage_grid_size()


def free_per_bank():
    return int(ttnn.get_memory_view(d, ttnn.BufferType.L1).largest_contiguous_bytes_free_per_bank)


def _block(per_bank):
    pages = max(1, per_bank // 64) * 64
    return dev(d, (1, 1, pages, 32), layout=RM, mc=L1)


def kcc(fidelity, fp32):
    return ttnn.WormholeComputeKernelConfig(math_fidelity=getattr(ttnn.MathFidelity, fidelity), math_approx_mode=False,
                                            fp32_dest_acc_en=fp32, packer_l1_acc=not fp32)


def pcfg(q_chunk, k_chunk):
    return ttnn.SDPAProgramConfig(compute_with_storage_grid_size=ttnn.CoreCoord(GRID.x, GRID.y),
                                  q_chunk_size=q_chunk, k_chunk_size=k_chunk)


def run(case, kernel, config, free=None):
    """None when it ran, else the error's text; `free` bytes per bank left below q, k, v."""
    name, (b, n, s, dh), masked, causal = case
    torch.manual_seed(0)
    q, k, v = (dev(d, (b, n, s, dh), mc=L1) for _ in range(3))
    mask = dev(d, (b, 1, s, s)) if masked else None
    blocker = out = None
    try:
        if free is not None and free_per_bank() > free:
            blocker = _block(free_per_bank() - free)
        extra = {} if config is None else {"program_config": config}
        if kernel is not None:
            extra["compute_kernel_config"] = kernel
        out = SDPA(q, k, v, attn_mask=mask, is_causal=causal, scale=0.125, memory_config=DR, **extra)
        ttnn.to_torch(out)
        return None
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {errtext(e, 2)}"
    finally:
        for t in (blocker, out, q, k, v, mask):
            if t is not None and t.is_allocated():
                ttnn.deallocate(t)


def model(case, qc, kc, fp32):
    dh = case[1][3]
    return circular_buffer_bytes(qc // 32, kc // 32, dh // 32, 2048, fp32)


def measured(case, kernel, config, qc, kc, fp32):
    got, bound = need(case, kernel, config), model(case, qc, kc, fp32)
    return f" | NEED {got} B/bank, MODEL {bound}: {'covered' if got <= bound else 'NOT COVERED'}"


def need(case, kernel, config):
    low, high = 0, free_per_bank()
    while high - low > 4096:
        mid = (low + high) // 2
        if run(case, kernel, config, free=mid) is None:
            high = mid
        else:
            low = mid
    return high


CASES = [("bert-base masked", (1, 12, 128, 64), True, False),
         ("gpt-2 causal", (1, 12, 128, 64), False, True),
         ("vit-b/16 197 tokens", (1, 12, 197, 64), False, False)]
KERNELS = [("HiFi4 fp32_dest", kcc("HiFi4", True)), ("HiFi2 packer_l1_acc", kcc("HiFi2", False)),
           ("LoFi packer_l1_acc", kcc("LoFi", False))]
CHUNKS = [(32, 32), (64, 64), (128, 128), (32, 128), (128, 32), (64, 128), (256, 256), (96, 96), (16, 32)]
mode = sys.argv[1] if len(sys.argv) > 1 else "all"
print(f"grid {GRID.x}x{GRID.y}", flush=True)
for case in CASES:
    if mode in ("all", "kernel"):
        for kname, kernel in [("no config", None)] + KERNELS:
            err = run(case, kernel, None)
            line = f"{'OK ' if err is None else 'ERR'} {case[0]} kernel {kname}, no program config"
            if err is None:
                line += f" | NEED {need(case, kernel, None)} B/bank"
            print(line + ("" if err is None else f" | {err}"), flush=True)
    if mode in ("all", "chunks"):
        for fname, kernel in (KERNELS[0], KERNELS[1]):
            for qc, kc in CHUNKS:
                try:
                    config = pcfg(qc, kc)
                except Exception as e:  # noqa: BLE001
                    print(f"ERR {case[0]} {fname} q_chunk={qc} k_chunk={kc}: constructor: {errtext(e, 2)}", flush=True)
                    continue
                err = run(case, kernel, config)
                line = f"{'OK ' if err is None else 'ERR'} {case[0]} {fname} q_chunk={qc} k_chunk={kc}"
                if err is None:
                    line += measured(case, kernel, config, qc, kc, fname.startswith("HiFi4"))
                print(line + ("" if err is None else f" | {err}"), flush=True)
    if mode in ("all", "chosen"):
        for fname, kernel in (KERNELS[0], KERNELS[1]):
            fp32 = fname.startswith("HiFi4")
            chosen = choose(case[1], case[1], "bf16", (GRID.x, GRID.y), fp32, RESERVE)
            if isinstance(chosen, str):
                print(f"--  {case[0]} {fname} chosen: none ({chosen})", flush=True)
                continue
            config = eval(repr(chosen), {"ttnn": ttnn})  # noqa: S307 (our repr)
            err = run(case, kernel, config)
            line = f"{'OK ' if err is None else 'ERR'} {case[0]} {fname} chosen {repr(chosen).replace('ttnn.', '')}"
            if err is None:
                line += measured(case, kernel, config, chosen.q_chunk_size, chosen.k_chunk_size, fp32)
            print(line + ("" if err is None else f" | {err}"), flush=True)
ttnn.close_device(d)
sys.stdout.flush()
os._exit(0)
