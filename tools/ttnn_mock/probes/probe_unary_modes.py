"""Q: which SFPU kernel does each accuracy variant of the unary ops compile to (sigmoid's `mode` and
`vector_mode`, sigmoid_accurate, exp / erf / tanh `fast_and_approximate_mode`, gelu `variant` and its legacy
alias), and with which APPROX / DST_ACCUM_MODE (fp32 dest) flags, for bfloat16, float32 and bfloat8_b inputs?
Also: does a conv2d / matmul asked for a float32 output accumulate in fp32 dest?

Mock mode JIT-builds every kernel with a stand-in compiler, but tt-metal still writes each compute kernel's
generated defines (`defines_generated.h`: the SFPU_OP_CHAIN the op runs) and flags (`chlkc_descriptors.h`)
into TT_METAL_CACHE.  The driver runs the cases in a child process with a fresh cache (the firmware copied
from the shared one) and reads the compute kernels each call adds.  A call whose kernel an earlier case
already built adds none: those cases run again, alone in their own round, until each shows its kernel.
    bash tools/ttnn_mock/probes/run_probe.sh probe_unary_modes.py [NAME_PART...]
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

BF16, F32, BF8 = "bfloat16", "float32", "bfloat8_b"
SIG, GV = "ttnn.SigmoidMode", "ttnn.GeluVariant"
# (case name, dtype of the [1,1,32,64] TILE input, call source with x the input)
CASES = [
    ("sigmoid default", BF16, "ttnn.sigmoid(x)"),
    ("sigmoid mode=Accurate", BF16, f"ttnn.sigmoid(x, mode={SIG}.Accurate)"),
    ("sigmoid mode=AccurateWithFastExp", BF16, f"ttnn.sigmoid(x, mode={SIG}.AccurateWithFastExp)"),
    ("sigmoid mode=FastApproximate", BF16, f"ttnn.sigmoid(x, mode={SIG}.FastApproximate)"),
    ("sigmoid vector_mode=2", BF16, "ttnn.sigmoid(x, vector_mode=2)"),
    ("sigmoid fp32 default", F32, "ttnn.sigmoid(x)"),
    ("sigmoid fp32 mode=FastApproximate", F32, f"ttnn.sigmoid(x, mode={SIG}.FastApproximate)"),
    ("sigmoid bf8_b default", BF8, "ttnn.sigmoid(x)"),
    ("sigmoid_accurate default", BF16, "ttnn.sigmoid_accurate(x)"),
    ("sigmoid_accurate fast_and_approximate_mode=True", BF16, "ttnn.sigmoid_accurate(x, True)"),
    ("sigmoid_accurate fp32 default", F32, "ttnn.sigmoid_accurate(x)"),
    ("exp default", BF16, "ttnn.exp(x)"),
    ("exp fast_and_approximate_mode=True", BF16, "ttnn.exp(x, fast_and_approximate_mode=True)"),
    ("exp fp32 default", F32, "ttnn.exp(x)"),
    ("exp fp32 fast_and_approximate_mode=True", F32, "ttnn.exp(x, fast_and_approximate_mode=True)"),
    ("gelu default", BF16, "ttnn.gelu(x)"),
    ("gelu variant=Accurate", BF16, f"ttnn.gelu(x, variant={GV}.Accurate)"),
    ("gelu variant=FastLut", BF16, f"ttnn.gelu(x, variant={GV}.FastLut)"),
    ("gelu variant=Tanh", BF16, f"ttnn.gelu(x, variant={GV}.Tanh)"),
    ("gelu fast_and_approximate_mode=True", BF16, "ttnn.gelu(x, fast_and_approximate_mode=True)"),
    ("gelu fast_and_approximate_mode=False", BF16, "ttnn.gelu(x, fast_and_approximate_mode=False)"),
    ("gelu fp32 default", F32, "ttnn.gelu(x)"),
    ("gelu fp32 variant=Tanh", F32, f"ttnn.gelu(x, variant={GV}.Tanh)"),
    ("tanh default", BF16, "ttnn.tanh(x)"),
    ("tanh fast_and_approximate_mode=True", BF16, "ttnn.tanh(x, fast_and_approximate_mode=True)"),
    ("tanh fp32 default", F32, "ttnn.tanh(x)"),
    ("tanh bf8_b default", BF8, "ttnn.tanh(x)"),
    ("erf default", BF16, "ttnn.erf(x)"),
    ("erf fast_and_approximate_mode=True", BF16, "ttnn.erf(x, fast_and_approximate_mode=True)"),
    ("erf fp32 default", F32, "ttnn.erf(x)"),
    ("silu default", BF16, "ttnn.silu(x)"),
    ("softmax dim=-1 default", BF16, "ttnn.softmax(x, dim=-1)"),
    ("softmax dim=-1 compute_kernel_config math_approx_mode=False HiFi4 fp32 dest", BF16,
     "ttnn.softmax(x, dim=-1, compute_kernel_config=ttnn.WormholeComputeKernelConfig("
     "math_fidelity=ttnn.MathFidelity.HiFi4, math_approx_mode=False, fp32_dest_acc_en=True))"),
    ("typecast bf16->fp32", BF16, "ttnn.typecast(x, ttnn.float32)"),
    ("conv2d 1x1 8->32, bf16 in, dtype=float32 out", BF16, "conv(x, ttnn.float32)"),
    ("conv2d 1x1 8->32, bf16 in, default dtype", BF16, "conv(x, None)"),
    ("conv2d 1x1 8->32, dtype=float32, compute_config fp32_dest_acc_en HiFi4", BF16, "conv(x, ttnn.float32, fp32=True)"),
    ("conv_transpose2d 2x2/2 8->32, dtype=float32", BF16, "convt(x, ttnn.float32)"),
    ("conv_transpose2d 2x2/2 8->32, dtype=float32, compute_config fp32_dest_acc_en HiFi4", BF16,
     "convt(x, ttnn.float32, fp32=True)"),
    ("matmul bf16 [1,1,32,64]@[64,64] dtype=float32", BF16, "ttnn.matmul(x, w(x), dtype=ttnn.float32)"),
    ("matmul bf16 default dtype", BF16, "ttnn.matmul(x, w(x))"),
    ("linear bf16 + bias dtype=float32", BF16, "ttnn.linear(x, w(x), bias=b(x), dtype=ttnn.float32)"),
]


def compute_kernels(cache):
    """{kernel dir: summary} of the compute kernels under `cache` (those with a chlkc_math.cpp)."""
    found = {}
    for math in glob.glob(os.path.join(cache, "*", "kernels", "*", "*", "chlkc_math.cpp")):
        kdir = os.path.dirname(math)
        flags = {}
        for line in open(os.path.join(kdir, "chlkc_descriptors.h")):
            for key in ("APPROX", "DST_ACCUM_MODE", "MATH_FIDELITY"):
                if line.startswith(f"constexpr bool {key} =") or (key == "MATH_FIDELITY" and "MATH_FIDELITY =" in line):
                    flags[key] = line.split("=", 1)[1].strip().rstrip(";")
        chain = []
        defines = os.path.join(kdir, "defines_generated.h")
        if os.path.exists(defines):
            for line in open(defines):
                parts = line.split(None, 2)
                if len(parts) == 3 and parts[1].startswith("SFPU_OP_CHAIN_0_"):
                    chain.append(parts[2].strip())  # the op chain's init and call
                elif len(parts) == 3 and ("_INCLUDE" in parts[1] or "APPROX" in parts[1]):
                    chain.append(f"{parts[1]}={parts[2].strip()}")
        name = os.path.basename(os.path.dirname(kdir))
        fidelity = flags.get("MATH_FIDELITY", "").replace("static_cast<ckernel::MathFidelity>", "")
        found[kdir] = (f"{name}#{os.path.basename(kdir)} APPROX={flags.get('APPROX')} "
                       f"DST_ACCUM_MODE={flags.get('DST_ACCUM_MODE')} MATH_FIDELITY={fidelity} | " + " ".join(chain))
    return found


def child(names):
    """Run the named cases in this process (TT_METAL_CACHE already set) and print one line each."""
    from _common import desc, errtext, open_dev
    import torch
    import ttnn

    d = open_dev()
    cache = os.environ["TT_METAL_CACHE"]

    def make(dtype):
        return ttnn.from_torch(torch.randn(1, 1, 32, 64), dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT,
                               device=d)

    def extra(dtype, fp32):
        out = {} if dtype is None else {"dtype": dtype}
        if fp32:
            out["compute_config"] = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4,
                                                                     fp32_dest_acc_en=True)
        return out

    def conv(x, dtype, fp32=False):
        wt = ttnn.from_torch(torch.randn(32, 8, 1, 1), dtype=ttnn.float32)
        inp = ttnn.from_torch(torch.randn(1, 1, 64, 8), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=d)
        return ttnn.conv2d(input_tensor=inp, weight_tensor=wt, in_channels=8, out_channels=32, device=d,
                           kernel_size=(1, 1), stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                           batch_size=1, input_height=8, input_width=8, **extra(dtype, fp32))

    def convt(x, dtype, fp32=False):
        wt = ttnn.from_torch(torch.randn(8, 32, 2, 2), dtype=ttnn.float32)
        inp = ttnn.from_torch(torch.randn(1, 1, 64, 8), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=d)
        return ttnn.conv_transpose2d(input_tensor=inp, weight_tensor=wt, in_channels=8, out_channels=32, device=d,
                                     kernel_size=(2, 2), stride=(2, 2), padding=(0, 0), output_padding=(0, 0),
                                     dilation=(1, 1), groups=1, batch_size=1, input_height=8, input_width=8,
                                     **extra(dtype, fp32))

    def w(x):
        return ttnn.from_torch(torch.randn(64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=d)

    def b(x):
        return ttnn.from_torch(torch.randn(1, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=d)

    for name in names:
        _, dtype, source = next(c for c in CASES if c[0] == name)
        x = make(dtype)
        before = compute_kernels(cache)
        try:
            out = eval(source, {"ttnn": ttnn, "x": x, "conv": conv, "convt": convt, "w": w, "b": b})  # noqa: S307 (fixed table)
            result = f"OK   {name}: {desc(out)}"
        except Exception as e:  # noqa: BLE001
            result = f"ERR  {name}: {type(e).__name__}: {errtext(e)}"
        new = [v for k, v in compute_kernels(cache).items() if k not in before]
        kernels = " || ".join(sorted(new)) if new else "NO NEW COMPUTE KERNEL"
        print(f"{result}\n     kernels: {kernels}", flush=True)
    ttnn.close_device(d)
    sys.stdout.flush()
    os._exit(0)


def fresh_cache(shared):
    """A new TT_METAL_CACHE holding only the shared cache's prebuilt firmware (no kernels)."""
    root = tempfile.mkdtemp(prefix="probe_unary_modes_")
    for entry in glob.glob(os.path.join(shared, "*")):
        target = os.path.join(root, os.path.basename(entry))
        if os.path.isdir(os.path.join(entry, "firmware")):
            shutil.copytree(os.path.join(entry, "firmware"), os.path.join(target, "firmware"))
        elif os.path.isdir(entry):
            shutil.copytree(entry, target)
    return root + "/"


def driver(only):
    shared = os.environ["TT_METAL_CACHE"]
    pending, rounds = [c[0] for c in CASES if not only or any(word in c[0] for word in only)], 0
    while pending and rounds < 12:
        rounds += 1
        # the first round runs everything; later rounds one case each (a case alone always builds its kernel)
        batches = [pending] if rounds == 1 else [[n] for n in pending]
        pending = []
        for batch in batches:
            cache = fresh_cache(shared)
            env = dict(os.environ, TT_METAL_CACHE=cache)
            run = subprocess.run([sys.executable, __file__, "--child", *batch], env=env, capture_output=True,
                                 text=True, timeout=900)
            shutil.rmtree(cache, ignore_errors=True)
            lines = run.stdout.splitlines()
            for name in batch:
                head = next((i for i, ln in enumerate(lines) if ln[5:].startswith(name + ":")), None)
                if head is None:
                    print(f"ERR  {name}: the child printed nothing (rc {run.returncode}: "
                          f"{run.stderr.strip().splitlines()[-1:] if run.stderr.strip() else ''})", flush=True)
                    continue
                if lines[head + 1].endswith("NO NEW COMPUTE KERNEL") and rounds == 1:
                    pending.append(name)
                    continue
                print(lines[head], flush=True)
                print(lines[head + 1] + ("  (run alone)" if rounds > 1 else ""), flush=True)
    os._exit(0)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
    else:  # optional arguments: run only the cases whose names contain one of them
        driver(sys.argv[1:])
