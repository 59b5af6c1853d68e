"""Element-wise ops (onnx2ttnn/sim/ops_eltwise.py: unary; onnx2ttnn/sim/ops_binary.py: binary and where) against
torch references with dtype rounding."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F


def dev(ttnn, device, data, dtype=None, layout=None, mc=None):
    return ttnn.from_torch(data, dtype=dtype or ttnn.bfloat16, layout=layout or ttnn.TILE_LAYOUT, device=device,
                           memory_config=mc)


def bf16(x):
    return x.to(torch.bfloat16).float()


UNARY = {
    "relu": torch.relu, "relu6": lambda x: x.clamp(0, 6), "tanh": torch.tanh, "neg": torch.neg, "abs": torch.abs, "erf": torch.erf, "gelu": F.gelu,
    "sin": torch.sin, "cos": torch.cos, "floor": torch.floor, "ceil": torch.ceil, "sign": torch.sign,
    "silu": F.silu, "softplus": F.softplus, "logical_not": lambda x: (x == 0).float(),
    "isnan": lambda x: torch.isnan(x).float(), "isinf": lambda x: torch.isinf(x).float(),
    "isfinite": lambda x: torch.isfinite(x).float(), "square": torch.square, "exp2": torch.exp2,
    "expm1": torch.expm1, "tan": torch.tan, "atan": torch.atan, "sinh": torch.sinh, "cosh": torch.cosh,
    "trunc": torch.trunc, "hardsigmoid": F.hardsigmoid, "hardswish": F.hardswish, "softsign": F.softsign,
    "tanhshrink": F.tanhshrink, "elu": F.elu, "asinh": torch.asinh, "celu": F.celu, "mish": F.mish,
    "selu": lambda x: 1.0507 * torch.where(x > 0, x, 1.67326 * torch.expm1(x)),
    "softshrink": lambda x: F.softshrink(x, 0.5), "hardshrink": lambda x: F.hardshrink(x, 0.5),
    "isposinf": lambda x: torch.isposinf(x).float(), "isneginf": lambda x: torch.isneginf(x).float(),
}
POSITIVE = {"log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal,
            "log1p": torch.log1p, "log2": torch.log2, "log10": torch.log10}


@pytest.mark.parametrize("name", sorted(UNARY) + sorted(POSITIVE))
def test_unary_bf16_equals_rounded_fp32_reference(ttnn, device, name):
    torch.manual_seed(1)
    x = torch.randn(3, 45, 70) * 3  # not multiples of 32
    if name in POSITIVE:
        x = x.abs() + 0.1
    if name == "logical_not":
        x[0, 0, :5] = 0
    if name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf"):
        x[0, 0, :3] = torch.tensor([float("nan"), float("inf"), -float("inf")])
    xr = bf16(x)
    out = getattr(ttnn, name)(dev(ttnn, device, x))
    ref = (UNARY | POSITIVE)[name](xr)
    got = ttnn.to_torch(out)
    assert got.dtype is torch.bfloat16 and tuple(out.shape) == (3, 45, 70)
    assert torch.equal(got.float(), bf16(ref))


def test_unary_fp32_is_not_rounded_to_bf16(ttnn, device):
    x = torch.randn(40, 40)
    got = ttnn.to_torch(ttnn.exp(dev(ttnn, device, x, dtype=ttnn.float32)))
    assert got.dtype is torch.float32 and torch.equal(got, torch.exp(x))


def test_parametrized_unaries(ttnn, device):
    x = torch.randn(33, 65) * 4
    xr, t = bf16(x), dev(ttnn, device, x)
    assert torch.equal(ttnn.to_torch(ttnn.leaky_relu(t, 0.1)).float(), bf16(F.leaky_relu(xr, 0.1)))
    assert torch.equal(ttnn.to_torch(ttnn.hardtanh(t, min_val=-2.0, max_val=3.0)).float(), xr.clamp(-2, 3))
    assert torch.equal(ttnn.to_torch(ttnn.clip(t, -1.0, 2.0)).float(), xr.clamp(-1, 2))
    assert torch.equal(ttnn.to_torch(ttnn.clamp(t, min=0.5)).float(), xr.clamp(min=0.5))
    assert torch.equal(ttnn.to_torch(ttnn.gelu(t, variant=ttnn.GeluVariant.Tanh)).float(),
                       bf16(F.gelu(xr, approximate="tanh")))


# ---- accuracy variants (sim/_sfpu.py; docs/ttnn-facts.md §16) ------------------------------------------------

def test_accurate_sigmoid_and_exp_bf16_are_the_kernels_arithmetic(ttnn, device):
    """bfloat16 sigmoid / exp: exp_21f (+ one Newton reciprocal), rounded once: within 1.5 bf16 ulp of the
    exact value, and not simply the exact value rounded."""
    from onnx2ttnn.sim import _sfpu

    x = torch.linspace(-20, 20, 4001).reshape(1, 4001)
    xr = bf16(x)
    for name, exact, kernel in (("sigmoid", torch.sigmoid, lambda v: _sfpu.sigmoid_accurate(v, False)),
                                ("exp", torch.exp, lambda v: _sfpu.bf16_nearest(_sfpu.exp_21f(v)))):
        got = ttnn.to_torch(getattr(ttnn, name)(dev(ttnn, device, x))).float()
        assert torch.equal(got, kernel(xr)), name
        truth = exact(xr.double())
        assert ((got.double() - truth) / truth).abs().max() < 1.5 * 2 ** -8, name
        assert not torch.equal(got, bf16(exact(xr))), name


def test_accurate_sigmoid_of_a_very_negative_input_is_zero_not_nan(ttnn, device):
    """exp(-x) overflows to infinity below about -88.7; the kernel's reciprocal scales by 2**(255 - exponent
    field), so 1 / inf is 0 (a real OCR model's conv outputs reach -100: the simulator gave NaN there)."""
    x = torch.tensor([[-1000.0, -200.0, -100.0, -89.0, -88.0, -40.0]])
    got = ttnn.to_torch(ttnn.sigmoid(dev(ttnn, device, x))).float()
    assert not torch.isnan(got).any()
    assert torch.equal(got[0, :4], torch.zeros(4))
    assert (got[0, 4:] > 0).all() and (got[0, 4:] < 1e-17).all()


def test_float32_sigmoid_and_exp_run_in_an_fp32_dest(ttnn, device):
    x = torch.randn(40, 40) * 6
    t = dev(ttnn, device, x, dtype=ttnn.float32)
    assert torch.equal(ttnn.to_torch(ttnn.sigmoid(t)), torch.sigmoid(x))
    assert torch.equal(ttnn.to_torch(ttnn.exp(t)), torch.exp(x))


def test_fast_approximate_sigmoid_is_the_three_piece_lut(ttnn, device):
    x = torch.tensor([[-14.0, -2.5, -2.0, -1.5, -0.5, 0.0, 0.5, 1.5, 2.0, 2.5, 14.0]])
    got = ttnn.to_torch(ttnn.sigmoid(dev(ttnn, device, x), mode=ttnn.SigmoidMode.FastApproximate)).float()
    slope_1, slope_2 = 0.2265625, 0.265625
    want = torch.tensor([[0.0, 0.0, 0.0, 0.5 - (slope_2 * 1.5 - 0.046875), 0.5 - slope_1 * 0.5, 0.5,
                          0.5 + slope_1 * 0.5, 0.5 + slope_2 * 1.5 - 0.046875, 1.0, 1.0, 1.0]])
    assert torch.equal(got, _truncated(want))


def _truncated(x):
    return (x.contiguous().view(torch.int32) & ~0xFFFF).view(torch.float32)


def test_fast_exp_and_fast_exp_sigmoid_are_coarse_but_close(ttnn, device):
    x = torch.linspace(-12, 0.5, 2001).reshape(1, 2001)
    xr, t = bf16(x), dev(ttnn, device, x)
    fast = ttnn.to_torch(ttnn.exp(t, fast_and_approximate_mode=True)).float()
    rel = ((fast.double() - torch.exp(xr.double())) / torch.exp(xr.double())).abs()
    assert 0.01 < rel.max() < 0.045  # Schraudolph's exp: a few per cent, never exact
    for call in (lambda: ttnn.sigmoid(t, mode=ttnn.SigmoidMode.AccurateWithFastExp),
                 lambda: ttnn.sigmoid_accurate(t, True)):
        got = ttnn.to_torch(call()).float().double()
        rel = ((got - torch.sigmoid(xr.double())) / torch.sigmoid(xr.double())).abs()
        assert 0.01 < rel.max() < 0.045
    assert torch.equal(ttnn.to_torch(ttnn.sigmoid_accurate(t)), ttnn.to_torch(ttnn.sigmoid(t)))


def test_sigmoid_vector_mode_c_computes_the_left_half_of_each_tile(ttnn, device):
    x = torch.randn(2, 64)
    got = ttnn.to_torch(ttnn.sigmoid(dev(ttnn, device, x), vector_mode=2)).float()
    full = ttnn.to_torch(ttnn.sigmoid(dev(ttnn, device, x))).float()
    left = (torch.arange(64) % 32) < 16
    assert torch.equal(got[:, left], full[:, left]) and torch.equal(got[:, ~left], bf16(x)[:, ~left])


def test_lookup_table_variants_the_simulator_does_not_model_say_so(ttnn, device):
    t = dev(ttnn, device, torch.randn(4, 4))
    for call in (lambda: ttnn.gelu(t, variant=ttnn.GeluVariant.FastLut),
                 lambda: ttnn.tanh(t, fast_and_approximate_mode=True),
                 lambda: ttnn.erf(t, fast_and_approximate_mode=True)):
        with pytest.raises(RuntimeError, match="does not model"):
            call()


def test_unary_rejects_unsupported_dtypes(ttnn, device):
    ints = dev(ttnn, device, torch.arange(64, dtype=torch.int32).reshape(2, 32), dtype=ttnn.int32)
    with pytest.raises(RuntimeError, match="unsupported dtype DataType::INT32"):
        ttnn.exp(ints)
    assert ttnn.to_torch(ttnn.relu(ints)).dtype is torch.int32  # relu supports INT32


BINARY = {"add": torch.add, "subtract": torch.sub, "multiply": torch.mul, "divide": torch.div,
          "maximum": torch.maximum, "minimum": torch.minimum}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shape_b", [(3, 45, 70), (1, 1, 70), (45, 1), (70,)])
def test_binary_broadcasting_and_rounding(ttnn, device, name, shape_b):
    torch.manual_seed(2)
    a, b = torch.randn(3, 45, 70), torch.randn(shape_b) + 3
    out = getattr(ttnn, name)(dev(ttnn, device, a), dev(ttnn, device, b))
    assert tuple(out.shape) == (3, 45, 70)
    assert torch.equal(ttnn.to_torch(out).float(), bf16(BINARY[name](bf16(a), bf16(b))))


def test_binary_with_scalars_rounds_the_scalar_to_bf16(ttnn, device):
    a = torch.randn(32, 64)
    t = dev(ttnn, device, a)
    got = ttnn.to_torch(ttnn.multiply(t, 0.1)).float()
    assert torch.equal(got, bf16(bf16(a) * bf16(torch.tensor(0.1))))
    assert torch.equal(ttnn.to_torch(ttnn.subtract(1.0, t)).float(), bf16(1.0 - bf16(a)))
    assert torch.equal(ttnn.to_torch(ttnn.pow(t, 2.0)).float(), bf16(bf16(a) ** 2))
    p = dev(ttnn, device, torch.rand(32, 64) + 0.5)
    e = dev(ttnn, device, torch.rand(32, 64))
    assert torch.allclose(ttnn.to_torch(ttnn.pow(p, e)).float(),
                          bf16(ttnn.to_torch(p).float() ** ttnn.to_torch(e).float()))


def test_binary_output_dtype_and_placement(ttnn, device):
    a = dev(ttnn, device, torch.randn(64, 64), mc=ttnn.L1_MEMORY_CONFIG)
    b = dev(ttnn, device, torch.randn(64, 64))
    out = ttnn.add(a, b, dtype=ttnn.float32)
    assert out.dtype is ttnn.float32 and out.memory_config() == ttnn.L1_MEMORY_CONFIG  # follows input a
    assert ttnn.add(a, b, memory_config=ttnn.DRAM_MEMORY_CONFIG).memory_config() == ttnn.DRAM_MEMORY_CONFIG
    ints = dev(ttnn, device, torch.randint(0, 5, (1, 32, 32), dtype=torch.int32), dtype=ttnn.int32)
    assert torch.equal(ttnn.to_torch(ttnn.add(ints, 1)), ttnn.to_torch(ints) + 1)


def test_binary_rejects_incompatible_shapes(ttnn, device):
    with pytest.raises(RuntimeError, match="not broadcastable"):
        ttnn.add(dev(ttnn, device, torch.randn(4, 32)), dev(ttnn, device, torch.randn(5, 32)))


@pytest.mark.parametrize("name,fn", [("eq", torch.eq), ("ne", torch.ne), ("gt", torch.gt), ("ge", torch.ge),
                                     ("lt", torch.lt), ("le", torch.le)])
def test_comparisons_return_one_and_zero_in_the_input_dtype(ttnn, device, name, fn):
    a = torch.randint(-2, 3, (40, 33)).float()
    b = torch.randint(-2, 3, (40, 33)).float()
    out = getattr(ttnn, name)(dev(ttnn, device, a), dev(ttnn, device, b))
    assert out.dtype is ttnn.bfloat16
    assert torch.equal(ttnn.to_torch(out).float(), fn(a, b).float())
    assert torch.equal(ttnn.to_torch(getattr(ttnn, name)(dev(ttnn, device, a), 0.0)).float(), fn(a, 0.0).float())


def test_logical_and_or(ttnn, device):
    a, b = (torch.rand(32, 32) > 0.5).float(), (torch.rand(32, 32) > 0.5).float()
    ta, tb = dev(ttnn, device, a), dev(ttnn, device, b)
    assert torch.equal(ttnn.to_torch(ttnn.logical_and(ta, tb)).float(), (a * b))
    assert torch.equal(ttnn.to_torch(ttnn.logical_or(ta, tb)).float(), ((a + b) > 0).float())


def test_where_with_tensors_and_scalars(ttnn, device):
    x = torch.randn(1, 40, 50)
    t = dev(ttnn, device, x)
    xr = bf16(x)
    got = ttnn.to_torch(ttnn.where(ttnn.gt(t, 0.0), t, ttnn.multiply(t, 0.5))).float()
    assert torch.equal(got, torch.where(xr > 0, xr, bf16(xr * 0.5)))
    got = ttnn.to_torch(ttnn.where(ttnn.gt(t, 0.0), 1.0, -1.0)).float()
    assert torch.equal(got, torch.where(xr > 0, 1.0, -1.0))
    rm = dev(ttnn, device, x, layout=ttnn.ROW_MAJOR_LAYOUT)
    with pytest.raises(RuntimeError, match="TILE"):
        ttnn.where(rm, rm, rm)


def test_eltwise_on_bfloat8_b_rounds_to_blocks(ttnn, device):
    x = torch.randn(32, 64)
    t = dev(ttnn, device, x, dtype=ttnn.bfloat8_b)
    out = ttnn.relu(t)
    from onnx2ttnn.sim._rounding import bfp8_round
    assert out.dtype is ttnn.bfloat8_b
    assert torch.equal(ttnn.to_torch(out), bfp8_round(torch.relu(ttnn.to_torch(t))))


def test_eltwise_needs_device_tensors(ttnn):
    host = ttnn.from_torch(torch.ones(4, 4), dtype=ttnn.bfloat16)
    with pytest.raises(RuntimeError, match="must be on device"):
        ttnn.relu(host)


@pytest.mark.parametrize("name,fn", [("asin", torch.asin), ("acos", torch.acos)])
def test_inverse_trig_in_domain(ttnn, device, name, fn):
    x = torch.rand(33, 40) * 1.8 - 0.9
    got = ttnn.to_torch(getattr(ttnn, name)(dev(ttnn, device, x))).float()
    assert torch.equal(got, bf16(fn(bf16(x))))


def test_parametrised_activations_use_their_parameters(ttnn, device):
    x = torch.randn(33, 65) * 4
    xr, t = bf16(x), dev(ttnn, device, x)
    cases = [
        (ttnn.selu(t, scale=3.0, alpha=2.0), 3.0 * torch.where(xr > 0, xr, 2.0 * torch.expm1(xr))),
        (ttnn.celu(t, alpha=2.5), F.celu(xr, 2.5)),
        (ttnn.elu(t, alpha=0.5), F.elu(xr, 0.5)),
        (ttnn.threshold(t, 1.0, -2.0), torch.where(xr > 1.0, xr, torch.tensor(-2.0))),
        (ttnn.softshrink(t, lambd=1.5), F.softshrink(xr, 1.5)),
        (ttnn.hardshrink(t, lambd=1.5), F.hardshrink(xr, 1.5)),
        (ttnn.softplus(t, beta=2.0, threshold=5.0), F.softplus(xr, 2.0, 5.0)),
    ]
    for got, want in cases:
        assert torch.equal(ttnn.to_torch(got).float(), bf16(want))


@pytest.mark.parametrize("name,fn,low,high", [("acosh", torch.acosh, 1.0, 5.0), ("atanh", torch.atanh, -0.95, 0.95)])
def test_inverse_hyperbolics_in_domain(ttnn, device, name, fn, low, high):
    x = torch.rand(33, 40) * (high - low) + low
    got = ttnn.to_torch(getattr(ttnn, name)(dev(ttnn, device, x, dtype=ttnn.float32)))
    assert torch.equal(got, fn(x))


def test_round_halves_to_even_and_checks_decimals(ttnn, device):
    x = torch.tensor([[0.5, 1.5, 2.5, -0.5, -2.5, 1.25, 3.14159, -7.7]])
    t = dev(ttnn, device, x, dtype=ttnn.float32)
    assert ttnn.to_torch(ttnn.round(t)).tolist() == [[0.0, 2.0, 2.0, -0.0, -2.0, 1.0, 3.0, -8.0]]
    assert torch.equal(ttnn.to_torch(ttnn.round(t, decimals=2)), torch.round(x, decimals=2))
    with pytest.raises(RuntimeError, match="decimals"):
        ttnn.round(t, decimals=9)


def test_divide_rounding_modes(ttnn, device):
    a = dev(ttnn, device, torch.tensor([[7.0, -7.0, 9.0, -1.0]]), dtype=ttnn.float32)
    b = dev(ttnn, device, torch.tensor([[2.0, 2.0, 3.0, 4.0]]), dtype=ttnn.float32)
    assert ttnn.to_torch(ttnn.divide(a, b)).tolist() == [[3.5, -3.5, 3.0, -0.25]]
    assert ttnn.to_torch(ttnn.divide(a, b, rounding_mode="trunc")).tolist() == [[3.0, -3.0, 3.0, -0.0]]
    assert ttnn.to_torch(ttnn.divide(a, b, rounding_mode="floor")).tolist() == [[3.0, -4.0, 3.0, -1.0]]
    assert ttnn.to_torch(ttnn.divide(a, 2.0, rounding_mode="floor")).tolist() == [[3.0, -4.0, 4.0, -1.0]]
    with pytest.raises(RuntimeError, match="rounding_mode"):
        ttnn.divide(a, b, rounding_mode="round")


def test_fmod_and_remainder_sign_conventions(ttnn, device):
    a = torch.tensor([[-4.0, 7.0, 5.0, 4.0, -7.0, 8.0]])
    b = torch.tensor([[3.0, -3.0, 8.0, -3.0, 3.0, 5.0]])
    ta, tb = dev(ttnn, device, a, dtype=ttnn.float32), dev(ttnn, device, b, dtype=ttnn.float32)
    assert ttnn.to_torch(ttnn.fmod(ta, tb)).tolist() == [[-1.0, 1.0, 5.0, 1.0, -1.0, 3.0]]  # dividend's sign
    assert ttnn.to_torch(ttnn.remainder(ta, tb)).tolist() == [[2.0, -2.0, 5.0, -2.0, 2.0, 3.0]]  # divisor's
    assert ttnn.to_torch(ttnn.remainder(ta, 3.0)).tolist() == [[2.0, 1.0, 2.0, 1.0, 2.0, 2.0]]
    u16 = dev(ttnn, device, torch.ones(32, 32, dtype=torch.int32), dtype=ttnn.uint16)
    with pytest.raises(RuntimeError, match="unsupported dtype DataType::UINT16"):
        ttnn.fmod(u16, u16)


def test_logical_xor(ttnn, device):
    a, b = (torch.rand(32, 32) > 0.5).float(), (torch.rand(32) > 0.5).float()
    got = ttnn.to_torch(ttnn.logical_xor(dev(ttnn, device, a), dev(ttnn, device, b))).float()
    assert torch.equal(got, (a != b).float())
