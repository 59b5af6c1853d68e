"""The harness's own rules: which op a case counts for, the exclusion groups, shape-operand binding."""
from __future__ import annotations

import numpy as np

from tests.node.cases import all_cases, by_name, running_cases
from tests.node.exclusions import EXCLUSIONS
from tests.node.runner import _compare, bind_shape_operands


def test_all_cases_are_classified():
    cases = all_cases()
    assert len(cases) == 1884
    assert len({c.name for c in cases}) == len(cases)


def test_expanded_case_counts_for_its_base_op():
    cases = by_name()
    assert cases["test_softmax_axis_0_expanded"].op == "Softmax"
    assert cases["test_hardsigmoid_example_expanded_ver18"].op == "HardSigmoid"
    assert cases["test_reshape_negative_dim"].op == "Reshape"
    assert cases["test_ai_onnx_ml_binarizer"].op == ""  # not the ai.onnx domain


def test_exclusion_groups_have_reasons_and_match_their_kind():
    assert all(e.reason for e in EXCLUSIONS)
    cases = by_name()
    assert cases["test_cast_FLOAT_to_DOUBLE"].exclusion.name == "float64"
    assert cases["test_cast_FLOAT_to_INT4"].exclusion.name == "sub-byte"
    assert cases["test_identity_sequence"].exclusion.name == "sequence-optional"
    assert cases["test_batchnorm_example_training_mode"].exclusion.name == "training"
    assert cases["test_training_dropout"].exclusion.name == "training"
    assert cases["test_dropout_default"].exclusion is None  # inference Dropout runs
    assert cases["test_cast_FLOAT_to_FLOAT16"].exclusion is None  # float16 is not excluded
    assert cases["test_add_uint64"].exclusion is None


def test_shape_operands_become_initializers_data_stays_runtime():
    slice_model, feeds = bind_shape_operands(by_name()["test_slice"].case)
    assert [i.name for i in slice_model.graph.input] == ["x"]
    assert sorted(t.name for t in slice_model.graph.initializer) == ["axes", "ends", "starts", "steps"]
    assert list(feeds) == ["x"]
    gather_model, feeds = bind_shape_operands(by_name()["test_gather_0"].case)
    assert sorted(feeds) == ["data", "indices"]  # indices are data, not a shape
    assert not gather_model.graph.initializer


def test_compare_checks_dtype_shape_and_tolerance():
    want = np.array([1.0, 2.0], np.float32)
    assert _compare(want.copy(), want, "fp32", 1e-3, 1e-7) == ""
    assert "dtype" in _compare(want.astype(np.float16), want, "fp32", 1e-3, 1e-7)
    assert "shape" in _compare(want[:1], want, "fp32", 1e-3, 1e-7)
    assert "tolerance" in _compare(want * 1.01, want, "fp32", 1e-3, 1e-7)
    assert _compare(want * 1.01, want, "bf16", 1e-3, 1e-7) == ""  # PCC 1.0


def test_a_case_is_claimed_only_at_an_opset_a_rule_was_checked_against():
    import dataclasses

    add = by_name()["test_add"]
    assert add.op == "Add" and add.opset >= 14 and add.claimed
    assert not dataclasses.replace(add, opset=6).claimed  # Add-6's legacy broadcasting: no rule checked
    assert not dataclasses.replace(add, opset=0).claimed  # no ai.onnx opset import


def test_running_cases_are_claimed_and_not_excluded():
    assert all(c.claimed and c.exclusion is None for c in running_cases())


def test_expanded_case_binds_the_operands_of_its_base_case():
    from tests.node.runner import base_case

    case = by_name()["test_affine_grid_2d_expanded"]
    assert base_case(case).name == "test_affine_grid_2d"
    model, feeds = bind_shape_operands(case.case, base_case(case))
    assert [t.name for t in model.graph.initializer] == ["size"]  # AffineGrid's size, read by Size and Split
    assert list(feeds) == ["theta"]
    assert base_case(by_name()["test_affine_grid_2d"]) is None


def test_resize_roi_is_bound_with_scales_and_sizes():
    model, feeds = bind_shape_operands(by_name()["test_resize_tf_crop_and_resize"].case)
    assert sorted(t.name for t in model.graph.initializer) == ["roi", "sizes"]
    assert list(feeds) == ["X"]
