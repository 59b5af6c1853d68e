"""Q: can an activation QuantizeLinear -> DequantizeLinear pair (divide, round, clip, multiply today) run as
fewer ttnn calls?
- binary `input_tensor_a_activations=[...]` (the activations applied to input a before the op) with ROUND and a
  clamp (HARDTANH min/max, RELU_MIN / RELU_MAX): accepted on multiply by a number?  Which SFPU chain and which
  intermediate format does the kernel use (the defines it generates)?  The same SFPU call as ttnn.round's?
- the same lists as post `activations=` on divide, for comparison;
- ttnn.quantize / dequantize: the kernel each compiles (the SFPU op; the numerics are read from tt-llk).
Same method as probe_epilogues.py: each case alone in a child process with a fresh TT_METAL_CACHE, printing the
compute kernels it added; here with every define the kernel was built with (not only the SFPU chain).
    bash tools/ttnn_mock/probes/run_probe.sh probe_qdq_pair.py [NAME_PART...]
"""
import glob
import os
import shutil
import subprocess
import sys

U = "ttnn.UnaryWithParam(ttnn.UnaryOpType.{})"
ROUND, HT = U.format("ROUND, 0"), U.format("HARDTANH, -128.0, 127.0")
RMIN, RMAX = U.format("RELU_MIN, -128.0"), U.format("RELU_MAX, 127.0")
# (case name, call source; x is a [1,1,64,64] bf16 TILE input in DRAM)
CASES = [
    ("round (standalone)", "ttnn.round(x)"),
    ("round decimals=0 (standalone)", "ttnn.round(x, decimals=0)"),
    ("clip -128..127 (standalone)", "ttnn.clip(x, min=-128.0, max=127.0)"),
    ("hardtanh -128..127 (standalone)", "ttnn.hardtanh(x, min_val=-128.0, max_val=127.0)"),
    ("multiply by 0.05 (no activation)", "ttnn.multiply(x, 0.05)"),
    ("divide by 0.05 (no activation)", "ttnn.divide(x, 0.05)"),
    ("multiply a_activations=[ROUND]", f"ttnn.multiply(x, 0.05, input_tensor_a_activations=[{ROUND}])"),
    ("multiply a_activations=[ROUND, HARDTANH]",
     f"ttnn.multiply(x, 0.05, input_tensor_a_activations=[{ROUND}, {HT}])"),
    ("multiply a_activations=[HARDTANH, ROUND]",
     f"ttnn.multiply(x, 0.05, input_tensor_a_activations=[{HT}, {ROUND}])"),
    ("multiply a_activations=[ROUND, RELU_MIN, RELU_MAX]",
     f"ttnn.multiply(x, 0.05, input_tensor_a_activations=[{ROUND}, {RMIN}, {RMAX}])"),
    ("multiply a_activations=[ROUND, HARDTANH] L1 in, L1 out",
     f"ttnn.multiply(y(L1), 0.05, input_tensor_a_activations=[{ROUND}, {HT}], memory_config=L1)"),
    ("multiply a_activations=[ROUND, HARDTANH] height-sharded",
     f"sharded_multiply([{ROUND}, {HT}])"),
    ("multiply a_activations=[ROUND, HARDTANH] float32",
     f"ttnn.multiply(y(dtype=ttnn.float32), 0.05, input_tensor_a_activations=[{ROUND}, {HT}])"),
    ("multiply a_activations=[ROUND, HARDTANH] rank 3 [1,64,64]",
     f"ttnn.multiply(x3(), 0.05, input_tensor_a_activations=[{ROUND}, {HT}])"),
    ("divide activations=[ROUND, HARDTANH] (post)", f"ttnn.divide(x, 0.05, activations=[{ROUND}, {HT}])"),
    ("quantize 0.05 zp 3", "ttnn.quantize(x, 0.05, 3)"),
    ("quantize 0.05 zp 3 dtype=uint8", "ttnn.quantize(x, 0.05, 3, dtype=ttnn.uint8)"),
    ("dequantize(quantize) 0.05 zp 3", "ttnn.dequantize(ttnn.quantize(x, 0.05, 3), 0.05, 3)"),
]


def kernels(cache):
    """{kernel dir: summary with every generated define} of the compute kernels under `cache`."""
    from probe_unary_modes import compute_kernels

    found = compute_kernels(cache)
    for kdir in list(found):
        defines = os.path.join(kdir, "defines_generated.h")
        extra = []
        if os.path.exists(defines):
            for line in open(defines):
                parts = line.split(None, 2)
                if len(parts) == 3 and parts[0] == "#define" and not parts[1].startswith("SFPU_OP_CHAIN_0_") \
                        and "_INCLUDE" not in parts[1]:
                    extra.append(f"{parts[1]}={parts[2].strip()}")
        found[kdir] += " | defines: " + " ".join(extra)
    return found


def child(name):
    from _common import DR, L1, TILE, converter_ir_on_path, desc, dev, errtext, open_dev, planner_height_sharded
    import ttnn

    converter_ir_on_path()
    d = open_dev()
    cache = os.environ["TT_METAL_CACHE"]
    x = dev(d, (1, 1, 64, 64))

    def y(mc=DR, shape=(1, 1, 64, 64), dtype=ttnn.bfloat16):
        return dev(d, shape, dtype=dtype, layout=TILE, mc=mc)

    def sharded_multiply(acts, shape=(1, 1, 256, 64)):
        _, mc = planner_height_sharded(shape)
        return ttnn.multiply(dev(d, shape, mc=mc), 0.05, input_tensor_a_activations=acts, memory_config=mc)

    scope = {"ttnn": ttnn, "x": x, "y": y, "L1": L1, "x3": lambda: dev(d, (1, 64, 64)),
             "sharded_multiply": sharded_multiply}
    before = kernels(cache)
    try:
        out = eval(dict(CASES)[name], scope)  # noqa: S307 (fixed table)
        result = f"OK   {name}: {desc(out)}"
    except Exception as e:  # noqa: BLE001
        result = f"ERR  {name}: {type(e).__name__}: {errtext(e)}"
    new = [v for k, v in kernels(cache).items() if k not in before]
    print(result + "\n     kernels: " + (" || ".join(sorted(new)) if new else "NO NEW COMPUTE KERNEL"), flush=True)
    ttnn.close_device(d)
    sys.stdout.flush()
    os._exit(0)


def driver(only):
    from probe_unary_modes import fresh_cache

    shared = os.environ["TT_METAL_CACHE"]
    for name, _ in CASES:
        if only and not any(word in name for word in only):
            continue
        cache = fresh_cache(shared)
        run = subprocess.run([sys.executable, __file__, "--child", name], env=dict(os.environ, TT_METAL_CACHE=cache),
                             capture_output=True, text=True, timeout=900)
        shutil.rmtree(cache, ignore_errors=True)
        lines = run.stdout.strip().splitlines()
        if not lines:
            tail = run.stderr.strip().splitlines()[-1:] if run.stderr.strip() else ""
            lines = [f"ERR  {name}: the child printed nothing (rc {run.returncode}: {tail})"]
        print("\n".join(lines), flush=True)
    os._exit(0)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        driver(sys.argv[1:])
