"""Compute kernel configs: the config class (its defaults, BlackholeComputeKernelConfig, the MathFidelity
members) and every op the converter passes one to (matmul, linear, softmax, layer_norm, rms_norm,
transformer.scaled_dot_product_attention: keyword compute_kernel_config; conv2d: compute_config) with the configs the converter emits (HiFi4 + fp32 dest
accumulation; HiFi2 / LoFi + packer L1 accumulation; for convs each fidelity with neither) on bf16 / bfloat8_b /
bfloat4_b operands, interleaved and height-sharded.  Run on n150 and p150.  Prints one line per step."""
from _common import *

converter_ir_on_path()
d = open_dev()
W = ttnn.WormholeComputeKernelConfig
print(f"BlackholeComputeKernelConfig exists: {hasattr(ttnn, 'BlackholeComputeKernelConfig')}; "
      f"is WormholeComputeKernelConfig: {getattr(ttnn, 'BlackholeComputeKernelConfig', None) is W}", flush=True)
print(f"MathFidelity members: {sorted(m for m in dir(ttnn.MathFidelity) if not m.startswith('_'))}", flush=True)
default = W()
print("defaults: " + ", ".join(f"{k}={getattr(default, k)}" for k in
                               ("math_fidelity", "math_approx_mode", "fp32_dest_acc_en", "packer_l1_acc",
                                "dst_full_sync_en")), flush=True)

CONFIGS = {
    "HiFi4 fp32acc": W(math_fidelity=ttnn.MathFidelity.HiFi4, math_approx_mode=False, fp32_dest_acc_en=True,
                       packer_l1_acc=False),
    "HiFi3 fp32acc": W(math_fidelity=ttnn.MathFidelity.HiFi3, math_approx_mode=False, fp32_dest_acc_en=True,
                       packer_l1_acc=False),
    "HiFi2 l1acc": W(math_fidelity=ttnn.MathFidelity.HiFi2, math_approx_mode=False, fp32_dest_acc_en=False,
                     packer_l1_acc=True),
    "LoFi l1acc": W(math_fidelity=ttnn.MathFidelity.LoFi, math_approx_mode=False, fp32_dest_acc_en=False,
                    packer_l1_acc=True),
    "HiFi4 fp32acc l1acc": W(math_fidelity=ttnn.MathFidelity.HiFi4, math_approx_mode=False, fp32_dest_acc_en=True,
                             packer_l1_acc=True),
}
x = dev(d, (1, 1, 128, 768), mc=L1)
xf = dev(d, (1, 1, 128, 768), dtype=ttnn.float32)
weights = {"bf16": dev(d, (1, 1, 768, 1024)), "bfp8": dev(d, (1, 1, 768, 1024), dtype=ttnn.bfloat8_b),
           "bfp4": dev(d, (1, 1, 768, 1024), dtype=ttnn.bfloat4_b)}
bias = dev(d, (1, 1, 1, 1024))
for cname, cfg in CONFIGS.items():
    for wname, w in weights.items():
        step(f"linear {wname} {cname}", lambda: ttnn.linear(x, w, bias=bias, compute_kernel_config=cfg))
    step(f"matmul bf16 {cname}", lambda: ttnn.matmul(x, weights["bf16"], compute_kernel_config=cfg))
    step(f"matmul f32 x bf16 {cname}", lambda: ttnn.matmul(xf, weights["bf16"], compute_kernel_config=cfg))
    step(f"batched matmul {cname}", lambda: ttnn.matmul(dev(d, (1, 12, 128, 64)), dev(d, (1, 12, 64, 128)),
                                                         compute_kernel_config=cfg))
    step(f"softmax {cname}", lambda: ttnn.softmax(dev(d, (1, 12, 128, 128)), dim=-1, compute_kernel_config=cfg))
    step(f"layer_norm {cname}", lambda: ttnn.layer_norm(x, epsilon=1e-5, weight=dev(d, (768,)), bias=dev(d, (768,)),
                                                        compute_kernel_config=cfg))
    step(f"rms_norm {cname}", lambda: ttnn.rms_norm(x, epsilon=1e-5, weight=dev(d, (768,)),
                                                    compute_kernel_config=cfg))
    step(f"transformer.scaled_dot_product_attention {cname}", lambda: ttnn.transformer.scaled_dot_product_attention(
        *(dev(d, (1, 12, 128, 64)) for _ in range(3)), attn_mask=dev(d, (1, 1, 128, 128)), is_causal=False,
        scale=0.125, compute_kernel_config=cfg))

# height-sharded activations, as the auto planner places them (ir/placements.py height_shard_layout)
layout, hmc = planner_height_sharded((1, 1, 1024, 256))
xs = dev(d, (1, 1, 1024, 256), mc=hmc)
for cname, cfg in CONFIGS.items():
    step(f"linear height-sharded {layout.grid} {cname}",
         lambda: ttnn.linear(xs, dev(d, (1, 1, 256, 256)), compute_kernel_config=cfg))
    step(f"softmax height-sharded {cname}", lambda: ttnn.softmax(xs, dim=-1, memory_config=hmc,
                                                                  compute_kernel_config=cfg))


def conv(cfg, wdtype=ttnn.float32, **kw):
    w = ttnn.from_torch(torch.randn(64, 32, 3, 3), dtype=wdtype)
    b = ttnn.from_torch(torch.randn(1, 1, 1, 64), dtype=ttnn.float32)
    xin = dev(d, (1, 1, 256, 32))
    return ttnn.conv2d(input_tensor=xin, weight_tensor=w, bias_tensor=b, in_channels=32, out_channels=64, device=d,
                       kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=1, batch_size=1,
                       input_height=16, input_width=16, compute_config=cfg, **kw)


CONV_CONFIGS = {f"{f} bf16dest": W(math_fidelity=getattr(ttnn.MathFidelity, f), math_approx_mode=False,
                                    fp32_dest_acc_en=False, packer_l1_acc=False) for f in ("HiFi4", "HiFi2", "LoFi")}
for cname, cfg in {**CONFIGS, **CONV_CONFIGS}.items():
    step(f"conv2d {cname}", lambda: conv(cfg))
    step(f"conv2d {cname} all-in-L1", lambda: conv(cfg, memory_config=L1, slice_config=ttnn.Conv2dL1FullSliceConfig))
    step(f"conv2d {cname} bfp8 weights", lambda: conv(cfg, conv_config=ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat8_b)))
step("conv_transpose2d compute_config HiFi4 bf16dest", lambda: ttnn.conv_transpose2d(
    input_tensor=dev(d, (1, 1, 64, 32), layout=RM), weight_tensor=ttnn.from_torch(torch.randn(32, 16, 2, 2),
                                                                                   dtype=ttnn.float32),
    in_channels=32, out_channels=16, device=d, kernel_size=(2, 2), stride=(2, 2), padding=(0, 0),
    output_padding=(0, 0), dilation=(1, 1), groups=1, batch_size=1, input_height=8, input_width=8,
    compute_config=CONV_CONFIGS["HiFi4 bf16dest"]))
step("matmul compute_kernel_config=<a MathFidelity> (wrong type)",
     lambda: ttnn.matmul(x, weights["bf16"], compute_kernel_config=ttnn.MathFidelity.LoFi))
done(d)
