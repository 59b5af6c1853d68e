"""Q: which fused epilogues does ttnn 0.81.1 accept, and which kernel does each compile to?
- matmul / linear `activation=`: the strings and UnaryWithParam kinds accepted, and the SFPU chain each adds to
  the matmul kernel (is "gelu" the accurate erf kernel, gelu_tile<0u>, or the FastLut, gelu_tile<1u>?);
  with an input in the planner's height-sharded layout;
- layer_norm / rms_norm `residual_input_tensor=`: the kernel's pre-add define, layouts and memory configs;
- conv2d `Conv2dConfig(activation=UnaryWithParam(...))`: the kinds accepted and their SFPU chain;
- binary `activations=[...]` (add / multiply): accepted forms and the chain.
Same method as probe_unary_modes.py (whose helpers it uses): every case runs alone in a child process with a
fresh TT_METAL_CACHE and prints the compute kernels it added (defines and APPROX / fp32-dest / fidelity flags).
    bash tools/ttnn_mock/probes/run_probe.sh probe_epilogues.py [NAME_PART...]
"""
import os
import shutil
import subprocess
import sys

U = "ttnn.UnaryWithParam(ttnn.UnaryOpType.{})"
LIN = "ttnn.linear(x, w(), bias=b(), activation={})"
CONV = "conv(ttnn.Conv2dConfig(activation=" + U + "))"
# (case name, call source; x is a [1,1,64,64] bf16 TILE input in DRAM)
CASES = [(f'linear activation="{a}"', LIN.format(repr(a))) for a in
         ("relu", "gelu", "silu", "sigmoid", "tanh", "relu6", "gelu_tanh", "hardsigmoid", "exp", "sqrt")]
CASES += [(f"linear activation=UnaryWithParam({k})", LIN.format(U.format(k))) for k in
          ("RELU", "GELU", "GELU, 0.0", "GELU, 1.0", "GELU_TANH", "SILU", "SIGMOID", "SIGMOID, 0.0", "TANH",
           "RELU6", "HARDSWISH", "HARDSIGMOID", "LEAKY_RELU, 0.1", "ELU, 1.0")]
CASES += [
    ('matmul activation="relu"', 'ttnn.matmul(x, w(), activation="relu")'),
    ("matmul activation=UnaryWithParam(GELU, 0.0)", "ttnn.matmul(x, w(), activation=" + U.format("GELU, 0.0") + ")"),
    ("linear activation=GELU,0.0 no bias", "ttnn.linear(x, w(), activation=" + U.format("GELU, 0.0") + ")"),
    ("linear activation=GELU,0.0 height-sharded input", "sharded_linear(" + U.format("GELU, 0.0") + ")"),
    ("linear activation=GELU,0.0 core_grid 8x8", "ttnn.linear(x, w(), bias=b(), core_grid=ttnn.CoreGrid(y=8, x=8), "
     "activation=" + U.format("GELU, 0.0") + ")"),
    ('linear activation="relu" core_grid 8x8', 'ttnn.linear(x, w(), bias=b(), core_grid=ttnn.CoreGrid(y=8, x=8), '
     'activation="relu")'),
    ("linear (no activation)", "ttnn.linear(x, w(), bias=b())"),
    ("linear activation=GELU,0.0 dtype=float32", "ttnn.linear(x, w(), bias=b(), dtype=ttnn.float32, activation="
     + U.format("GELU, 0.0") + ")"),
    ("layer_norm (no residual)", "ttnn.layer_norm(x, weight=g(), bias=g(), epsilon=1e-5)"),
    ("layer_norm residual DRAM", "ttnn.layer_norm(x, residual_input_tensor=y(), weight=g(), bias=g(), epsilon=1e-5)"),
    ("layer_norm residual no weight", "ttnn.layer_norm(x, residual_input_tensor=y(), epsilon=1e-5)"),
    ("layer_norm residual in L1, input DRAM, out L1", "ttnn.layer_norm(x, residual_input_tensor=y(L1), weight=g(),"
     " bias=g(), epsilon=1e-5, memory_config=L1)"),
    ("layer_norm residual broadcast [1,1,1,64]", "ttnn.layer_norm(x, residual_input_tensor=y(shape=(1, 1, 1, 64)),"
     " weight=g(), bias=g(), epsilon=1e-5)"),
    ("layer_norm residual ROW_MAJOR", "ttnn.layer_norm(x, residual_input_tensor=y(layout=RM), weight=g(), bias=g(),"
     " epsilon=1e-5)"),
    ("layer_norm residual rank 3 [1,64,64]", "ttnn.layer_norm(x3(), residual_input_tensor=x3(), weight=g(), "
     "bias=g(), epsilon=1e-5)"),
    ("layer_norm residual float32", "ttnn.layer_norm(x, residual_input_tensor=y(dtype=ttnn.float32), weight=g(), "
     "bias=g(), epsilon=1e-5)"),
    ("layer_norm residual height-sharded", "sharded_norm('layer_norm')"),
    ("rms_norm residual DRAM", "ttnn.rms_norm(x, residual_input_tensor=y(), weight=g(), epsilon=1e-5)"),
]
CASES += [(f"conv2d Conv2dConfig activation={k}", CONV.format(k)) for k in
          ("RELU", "RELU6", "SILU", "GELU", "GELU, 0.0", "SIGMOID", "SIGMOID, 0.0", "TANH", "HARDSWISH",
           "HARDSIGMOID", "LEAKY_RELU, 0.1")]
CASES += [
    ("conv2d Conv2dConfig activation=RELU on the L1 height-sharded path", "conv(ttnn.Conv2dConfig(activation="
     + U.format("RELU") + ", shard_layout=ttnn.TensorMemoryLayout.HEIGHT_SHARDED))"),
    ("add activations=[UnaryWithParam(RELU)]", "ttnn.add(x, y(), activations=[" + U.format("RELU") + "])"),
    ('add activations=["relu"]', 'ttnn.add(x, y(), activations=["relu"])'),
    ("add activations=[UnaryOpType.RELU]", "ttnn.add(x, y(), activations=[ttnn.UnaryOpType.RELU])"),
    ("add activations=[SILU]", "ttnn.add(x, y(), activations=[" + U.format("SILU") + "])"),
    ("add activations=[GELU, 0.0]", "ttnn.add(x, y(), activations=[" + U.format("GELU, 0.0") + "])"),
    ("add activations=[SIGMOID]", "ttnn.add(x, y(), activations=[" + U.format("SIGMOID") + "])"),
    ("add (no activation)", "ttnn.add(x, y())"),
    ("add activations=[RELU] broadcast b [1,1,1,64]", "ttnn.add(x, y(shape=(1, 1, 1, 64)), activations=["
     + U.format("RELU") + "])"),
    ("add activations=[RELU] ROW_MAJOR", "ttnn.add(y(layout=RM), y(layout=RM), activations=[" + U.format("RELU")
     + "])"),
    ("add activations=[RELU] height-sharded", "sharded_add(" + U.format("RELU") + ")"),
    ("add activations=[RELU] scalar b", "ttnn.add(x, 1.5, activations=[" + U.format("RELU") + "])"),
    ("multiply activations=[RELU]", "ttnn.multiply(x, y(), activations=[" + U.format("RELU") + "])"),
    ("subtract activations=[RELU]", "ttnn.subtract(x, y(), activations=[" + U.format("RELU") + "])"),
]


def child(name):
    """Run one case in this process (TT_METAL_CACHE already set) and print its line and kernels."""
    from _common import DR, L1, RM, TILE, converter_ir_on_path, desc, dev, errtext, open_dev, planner_height_sharded
    from probe_unary_modes import compute_kernels
    import torch
    import ttnn

    converter_ir_on_path()
    d = open_dev()
    cache = os.environ["TT_METAL_CACHE"]
    x = dev(d, (1, 1, 64, 64))

    def y(mc=DR, shape=(1, 1, 64, 64), layout=TILE, dtype=ttnn.bfloat16):
        return dev(d, shape, dtype=dtype, layout=layout, mc=mc)

    def env():
        def conv(config):
            wt = ttnn.from_torch(torch.randn(32, 8, 3, 3), dtype=ttnn.float32)
            bias = ttnn.from_torch(torch.randn(1, 1, 1, 32), dtype=ttnn.float32)
            inp = ttnn.from_torch(torch.randn(1, 1, 64, 8), dtype=ttnn.bfloat16, layout=TILE, device=d)
            return ttnn.conv2d(input_tensor=inp, weight_tensor=wt, bias_tensor=bias, in_channels=8, out_channels=32,
                               device=d, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1),
                               groups=1, batch_size=1, input_height=8, input_width=8, conv_config=config)

        def sharded(shape=(1, 1, 256, 64)):
            _, mc = planner_height_sharded(shape)
            return dev(d, shape, mc=mc)

        return {"ttnn": ttnn, "x": x, "y": y, "L1": L1, "RM": RM, "conv": conv,
                "w": lambda: dev(d, (64, 64)), "b": lambda: dev(d, (1, 64)), "g": lambda: dev(d, (1, 64)),
                "x3": lambda: dev(d, (1, 64, 64)),
                "sharded_linear": lambda act: ttnn.linear(sharded(), dev(d, (64, 64)), bias=dev(d, (1, 64)),
                                                          activation=act, memory_config=L1),
                "sharded_add": lambda act: ttnn.add(sharded(), sharded(), activations=[act]),
                "sharded_norm": lambda op: getattr(ttnn, op)(sharded(), residual_input_tensor=sharded(),
                                                             epsilon=1e-5)}

    source = dict(CASES)[name]
    scope = env()
    before = compute_kernels(cache)
    try:
        out = eval(source, scope)  # noqa: S307 (fixed table)
        result = f"OK   {name}: {desc(out)}"
    except Exception as e:  # noqa: BLE001
        result = f"ERR  {name}: {type(e).__name__}: {errtext(e)}"
    new = [v for k, v in compute_kernels(cache).items() if k not in before]
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
    else:  # optional arguments: run only the cases whose names contain one of them
        driver(sys.argv[1:])
