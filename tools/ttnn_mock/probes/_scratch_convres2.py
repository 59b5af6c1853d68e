from _common import *
d = open_dev()
FULL = ttnn.Conv2dL1FullSliceConfig
HIFI2 = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi2, fp32_dest_acc_en=False,
                                         packer_l1_acc=False, math_approx_mode=False)
C = OC = 960; H = W = 7; k = 3; g = 960


def run_conv(x, w, b):
    return ttnn.conv2d(input_tensor=x, weight_tensor=w, bias_tensor=b, in_channels=C, out_channels=OC, device=d,
                       kernel_size=(k, k), stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=g, batch_size=1,
                       input_height=H, input_width=W, conv_config=ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat8_b),
                       compute_config=HIFI2, return_weights_and_bias=True, memory_config=L1, slice_config=FULL)


def fresh():
    x = dev(d, (1, 1, H * W, C), mc=L1)
    w0 = ttnn.from_torch(torch.randn(OC, C // g, k, k), dtype=ttnn.float32)
    b0 = ttnn.from_torch(torch.randn(1, 1, 1, OC), dtype=ttnn.float32)
    y, (pw, pb) = run_conv(x, w0, b0)
    ttnn.deallocate(y)
    return pw, pb


for how, move in (("clone", lambda t: ttnn.clone(t, memory_config=L1)),
                  ("host round trip", lambda t: ttnn.to_device(ttnn.from_device(t), d, memory_config=L1)),
                  ("to_memory_config + reshape to the padded shape",
                   lambda t: ttnn.reshape(ttnn.to_memory_config(t, L1), t.shape, t.padded_shape))):
    pw, pb = fresh()
    pw_l1 = step(f"{how}: weight", lambda: move(pw))
    pb_l1 = step(f"{how}: bias", lambda: move(pb))
    if pw_l1 is None or pb_l1 is None:
        continue
    ttnn.deallocate(pw)
    ttnn.deallocate(pb)
    x = dev(d, (1, 1, H * W, C), mc=L1)
    r = step(f"{how}: second call", lambda: run_conv(x, pw_l1, pb_l1))
    for t in (pw_l1, pb_l1):
        if t.is_allocated():
            ttnn.deallocate(t)
done(d)
