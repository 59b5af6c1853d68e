"""Q4: conv2d input forms, channel counts, groups, stride/padding, memory configs, Conv2dConfig activation,
return tuple, reuse of prepared weights."""
from _common import *

d = open_dev()


def w_host(OC, Cg, k=3, dtype=ttnn.float32):
    return ttnn.from_torch(torch.randn(OC, Cg, k, k), dtype=dtype)


def b_host(OC, dtype=ttnn.float32):
    return ttnn.from_torch(torch.randn(1, 1, 1, OC), dtype=dtype)


def conv(x, C, OC, N, H, W, wt=None, bt=None, k=3, stride=1, padding=(1, 1), groups=1, **kw):
    wt = wt if wt is not None else w_host(OC, C // groups, k)
    bt = bt if bt is not None else b_host(OC)
    return ttnn.conv2d(input_tensor=x, weight_tensor=wt, bias_tensor=bt, in_channels=C, out_channels=OC, device=d,
                       kernel_size=(k, k), stride=(stride, stride), padding=padding, dilation=(1, 1), groups=groups,
                       batch_size=N, input_height=H, input_width=W, **kw)


def out_desc(r):
    if isinstance(r, tuple):
        return "tuple(" + ", ".join(desc(v) if isinstance(v, ttnn.Tensor) else (
            "(" + ", ".join(desc(u) if isinstance(u, ttnn.Tensor) else repr(u) for u in v) + ")" if isinstance(v, tuple) else repr(v)) for v in r) + ")"
    return desc(r)


def cstep(name, fn):
    try:
        r = fn()
        print(f"OK   {name}: {out_desc(r)}", flush=True)
        return r
    except Exception as e:  # noqa: BLE001
        print(f"ERR  {name}: {type(e).__name__}: {errtext(e)}", flush=True)
        return None


N, H, W = 1, 16, 16
# return forms
x = dev(d, (1, 1, N * H * W, 32), layout=RM)
cstep("conv C=32 OC=64 default returns", lambda: conv(x, 32, 64, N, H, W))
cstep("conv return_output_dim=True", lambda: conv(x, 32, 64, N, H, W, return_output_dim=True))
r = cstep("conv return_output_dim=True return_weights_and_bias=True", lambda: conv(
    x, 32, 64, N, H, W, return_output_dim=True, return_weights_and_bias=True))
if r is not None:
    o, (oh, ow), (pw, pb) = r
    print("     prepared weight:", desc(pw), "| prepared bias:", desc(pb), flush=True)
    cstep("conv again with the prepared (device) weight+bias", lambda: conv(x, 32, 64, N, H, W, wt=pw, bt=pb,
                                                                             return_output_dim=True))
    pw_host = ttnn.from_device(pw)
    cstep("conv with prepared weight moved back to host", lambda: conv(x, 32, 64, N, H, W, wt=pw_host, bt=pb))
    cstep("conv with prepared weight but different input (C=32, H=8)", lambda: conv(
        dev(d, (1, 1, 64, 32), layout=RM), 32, 64, 1, 8, 8, wt=pw, bt=pb))
cstep("conv weights bf16 on host (from_torch dtype=bfloat16 RM)", lambda: conv(
    x, 32, 64, N, H, W, wt=w_host(64, 32, dtype=ttnn.bfloat16), bt=b_host(64, dtype=ttnn.bfloat16)))
cstep("conv weights on device (from_torch ... device=d)", lambda: conv(
    x, 32, 64, N, H, W, wt=ttnn.from_torch(torch.randn(64, 32, 3, 3), dtype=ttnn.bfloat16, device=d),
    bt=b_host(64)))
cstep("conv without bias", lambda: ttnn.conv2d(input_tensor=x, weight_tensor=w_host(64, 32), in_channels=32,
                                               out_channels=64, device=d, kernel_size=(3, 3), stride=(1, 1),
                                               padding=(1, 1), batch_size=N, input_height=H, input_width=W))

# input forms / layouts / buffers
for C in (3, 16, 64):
    for OC in (8, 64):
        for lname, layout in (("RM", RM), ("TILE", TILE)):
            for mname, mc in (("DRAM", DR), ("L1", L1)):
                for form in ("flat", "nhwc"):
                    shape = (1, 1, N * H * W, C) if form == "flat" else (N, H, W, C)
                    xi = dev(d, shape, layout=layout, mc=mc)
                    cstep(f"conv C={C} OC={OC} in={form} {lname}/{mname}", lambda: conv(xi, C, OC, N, H, W))
                    ttnn.deallocate(xi)
x3h = ttnn.from_torch(torch.randn(1, H, W, 3), dtype=ttnn.bfloat16)
cstep("conv C=3 OC=64 input on HOST (NHWC RM bf16, not on device)", lambda: conv(x3h, 3, 64, N, H, W))
x3f = dev(d, (1, H, W, 3), dtype=ttnn.float32, layout=RM)
cstep("conv C=3 input float32 RM DRAM", lambda: conv(x3f, 3, 64, N, H, W))
# output memory configs
for mname, mc in (("DRAM", DR), ("L1", L1)):
    cstep(f"conv C=32 OC=64 memory_config={mname}", lambda: conv(x, 32, 64, N, H, W, memory_config=mc))
# strides / padding / groups
cstep("conv stride 2 padding (1,1)", lambda: conv(x, 32, 64, N, H, W, stride=2, return_output_dim=True))
cstep("conv padding 4 ints (1,1,1,1)", lambda: conv(x, 32, 64, N, H, W, padding=(1, 1, 1, 1), return_output_dim=True))
cstep("conv padding 4 ints asymmetric (0,1,0,1) stride 2", lambda: conv(x, 32, 64, N, H, W, padding=(0, 1, 0, 1),
                                                                        stride=2, return_output_dim=True))
cstep("conv 1x1 padding 0", lambda: conv(x, 32, 64, N, H, W, k=1, padding=(0, 0)))
cstep("conv 7x7 stride 2 pad 3 C=3 (resnet stem 64x64)", lambda: conv(
    dev(d, (1, 64, 64, 3), layout=RM), 3, 64, 1, 64, 64, k=7, stride=2, padding=(3, 3), return_output_dim=True))
for C in (32, 16, 64):
    xd = dev(d, (1, 1, N * H * W, C), layout=RM)
    cstep(f"depthwise conv groups=C={C} OC=C", lambda: conv(xd, C, C, N, H, W, groups=C))
    cstep(f"depthwise conv groups=C={C} stride 2", lambda: conv(xd, C, C, N, H, W, groups=C, stride=2))
cstep("grouped conv groups=2 C=32 OC=64", lambda: conv(x, 32, 64, N, H, W, groups=2))
cstep("conv batch 2 flat [1,1,2*16*16,32]", lambda: conv(dev(d, (1, 1, 2 * H * W, 32), layout=RM), 32, 64, 2, H, W))
# Conv2dConfig / activation
U = ttnn.UnaryWithParam
cstep("Conv2dConfig(activation='relu') (string)", lambda: conv(x, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(
    weights_dtype=ttnn.bfloat16, activation="relu")))
for nm, act in (("RELU", lambda: U(ttnn.UnaryOpType.RELU)), ("RELU6", lambda: U(ttnn.UnaryOpType.RELU6)),
                ("RELU_MAX 6.0", lambda: U(ttnn.UnaryOpType.RELU_MAX, 6.0)),
                ("SILU", lambda: U(ttnn.UnaryOpType.SILU)), ("GELU", lambda: U(ttnn.UnaryOpType.GELU)),
                ("SIGMOID", lambda: U(ttnn.UnaryOpType.SIGMOID)), ("HARDTANH?", lambda: U(ttnn.UnaryOpType.HARDTANH)),
                ("CLAMP?", lambda: U(ttnn.UnaryOpType.CLAMP_TSS, [0.0, 6.0]))):
    def run(act=act):
        return conv(x, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat16, activation=act()))
    cstep(f"Conv2dConfig(activation=UnaryWithParam({nm}))", run)
cstep("Conv2dConfig(weights_dtype=bfloat8_b)", lambda: conv(x, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(
    weights_dtype=ttnn.bfloat8_b)))
cstep("Conv2dConfig(output_layout=ROW_MAJOR)", lambda: conv(x, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(
    output_layout=RM)))
cstep("Conv2dConfig(shard_layout=HEIGHT_SHARDED)", lambda: conv(x, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(
    shard_layout=ttnn.TensorMemoryLayout.HEIGHT_SHARDED)))
cstep("Conv2dConfig(deallocate_activation=True) then x.is_allocated()", lambda: (conv(
    dev(d, (1, 1, 256, 32), layout=RM, mc=L1), 32, 64, N, H, W,
    conv_config=ttnn.Conv2dConfig(deallocate_activation=True)),))
xx = dev(d, (1, 1, 256, 32), layout=RM, mc=L1)
conv(xx, 32, 64, N, H, W, conv_config=ttnn.Conv2dConfig(deallocate_activation=True))
print("     after deallocate_activation=True: input.is_allocated() =", xx.is_allocated(), flush=True)
cstep("conv dtype=ttnn.float32 (output dtype)", lambda: conv(x, 32, 64, N, H, W, dtype=ttnn.float32))
print("UnaryOpType members with RELU/CLAMP/HARD:", [m for m in dir(ttnn.UnaryOpType) if any(s in m for s in ("RELU", "CLAMP", "HARD"))], flush=True)
done(d)
