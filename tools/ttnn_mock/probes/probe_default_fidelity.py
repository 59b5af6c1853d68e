"""Q: which math fidelity and fp32-dest mode does each compute op compile to when the call passes no
compute_kernel_config (compute_config for conv2d)?  The cost model needs the answer for programs that pass none
(issue #14's baseline): it prices a matmul's compute by its fidelity's pass count.

Method (that of probe_unary_modes.py, whose helpers this probe reuses): mock mode still JIT-builds each kernel
and writes its flags (chlkc_descriptors.h: MATH_FIDELITY, DST_ACCUM_MODE) into TT_METAL_CACHE; each case runs
alone in a child process with a fresh cache, and the compute kernels it added are read back.
MATH_FIDELITY values: 0 LoFi, 2 HiFi2, 3 HiFi3, 4 HiFi4 (tt-metal's MathFidelity enum).
    bash tools/ttnn_mock/probes/run_probe.sh probe_default_fidelity.py [--device p150]
"""
import os
import shutil
import subprocess
import sys

from probe_unary_modes import compute_kernels, fresh_cache

CASES = {
    "matmul [1,1,64,128]@[128,128], no config": "ttnn.matmul(x, w())",
    "linear + bias, no config": "ttnn.linear(x, w(), bias=b())",
    "linear + bias, core_grid 8x8, no config": "ttnn.linear(x, w(), bias=b(), core_grid=ttnn.CoreGrid(y=8, x=8))",
    "linear, HiFi2 config (control)": "ttnn.linear(x, w(), compute_kernel_config=ttnn.WormholeComputeKernelConfig("
                                      "math_fidelity=ttnn.MathFidelity.HiFi2))",
    "conv2d 3x3 16->32, no compute_config": "conv()",
    "layer_norm, no config": "ttnn.layer_norm(x, weight=g(), bias=g())",
    "softmax, no config": "ttnn.softmax(x, dim=-1)",
    "scaled_dot_product_attention, no config": "sdpa()",
}


def child(name):
    from _common import desc, errtext, open_dev
    import torch
    import ttnn

    d = open_dev()

    def tile(*shape, dtype=ttnn.bfloat16):
        return ttnn.from_torch(torch.randn(*shape), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=d)

    def w():
        return tile(128, 128)

    def b():
        return tile(1, 128)

    def g():
        return tile(1, 128)

    def conv():
        wt = ttnn.from_torch(torch.randn(32, 16, 3, 3), dtype=ttnn.float32)
        inp = ttnn.from_torch(torch.randn(1, 1, 64, 16), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=d)
        return ttnn.conv2d(input_tensor=inp, weight_tensor=wt, in_channels=16, out_channels=32, device=d,
                           kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=1,
                           batch_size=1, input_height=8, input_width=8)

    def sdpa():
        q, k, v = tile(1, 2, 64, 64), tile(1, 2, 64, 64), tile(1, 2, 64, 64)
        return ttnn.transformer.scaled_dot_product_attention(q, k, v, is_causal=True)

    x = tile(1, 1, 64, 128)
    cache = os.environ["TT_METAL_CACHE"]
    before = compute_kernels(cache)
    try:
        out = eval(CASES[name], {"ttnn": ttnn, "x": x, "w": w, "b": b, "g": g, "conv": conv, "sdpa": sdpa})  # noqa: S307
        result = f"OK   {name}: {desc(out)}"
    except Exception as e:  # noqa: BLE001
        result = f"ERR  {name}: {type(e).__name__}: {errtext(e)}"
    new = [v for k, v in compute_kernels(cache).items() if k not in before]
    print(f"{result}\n     kernels: {' || '.join(sorted(new)) if new else 'NO NEW COMPUTE KERNEL'}", flush=True)
    sys.stdout.flush()
    os._exit(0)


def driver():
    shared = os.environ["TT_METAL_CACHE"]
    for name in CASES:
        cache = fresh_cache(shared)
        run = subprocess.run([sys.executable, __file__, "--child", name], env=dict(os.environ, TT_METAL_CACHE=cache),
                             capture_output=True, text=True, timeout=900)
        shutil.rmtree(cache, ignore_errors=True)
        lines = [ln for ln in run.stdout.splitlines() if ln.startswith(("OK ", "ERR ", "     kernels"))]
        print("\n".join(lines) if lines else f"ERR  {name}: the child printed nothing (rc {run.returncode})", flush=True)
    os._exit(0)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        driver()
