"""split-tensor-parallel (passes/split_tensor_parallel.py): per-chip shapes and `_tp` notes of a feed-forward
pair, zero-padded widths, heads padded to a multiple of the chips, and the refusal of a model with no pair.
(Whole programs on the simulated and mock meshes: tests/mesh/test_tensor_parallel.py, tests/real_ttnn.)"""
from __future__ import annotations

import numpy as np
import pytest

import onnx2ttnn
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.lowering.attention import SPLIT
from tests.mesh.models import batch_shapes, dp_model  # noqa: F401 (dp_model is a fixture)
from tests.mesh.test_tensor_parallel import _mlp
from tests.test_cli import CNN


def test_notes_and_padding_of_a_feed_forward_pair(tmp_path):
    module = onnx2ttnn.convert(_mlp(tmp_path, width=96), device="t3k", parallel="tp", weights="bf16").module
    first, second = [n for n in module.graph.nodes if n.op == "linear"]
    assert first.attrs["_tp"] == (2,) and second.attrs["_tp"] == ("partial",)
    # 96 columns over 8 chips: padded to 256 (one tile each); the padded rows of the second weight are zeros
    assert list(first.outputs[0].shape) == [1, 32, 32] and list(second.inputs[1].shape) == [32, 64]
    rows = np.asarray(second.inputs[1].inputs[0].inputs[0].values)
    assert rows.shape == (256, 64) and not rows[96:].any() and rows[:96].any()
    assert module.notes["split-tensor-parallel"] == {"chips": 8, "row_parallel": 1, "embeddings": 0}


def test_heads_are_padded_to_a_multiple_of_the_chips(dp_model):
    model = dp_model("bert")  # 4 heads of 32 (padded) columns
    module = onnx2ttnn.convert(model, device="t3k", parallel="tp", input_shapes=batch_shapes(model, 1)).module
    split = next(n for n in module.graph.nodes if n.op == SPLIT)
    assert split.attrs["num_heads"] == 1  # 4 heads padded to 8: one per chip
    qkv = split.inputs[0].inputs[0]
    whole = np.asarray(qkv.inputs[1].inputs[0].inputs[0].values)
    assert whole.shape[-1] == 3 * 8 * 32  # q, k and v of 8 heads, regrouped chip by chip
    chip7 = np.split(whole, 8, axis=-1)[7]
    assert not chip7.any()  # chip 7 holds a padded head of q, k and v: zeros


def test_a_model_without_a_pair_is_refused():
    with pytest.raises(ConversionError, match="no attention or feed-forward pair of linears"):
        onnx2ttnn.convert(str(CNN), device="n300", parallel="tp")


def test_the_pass_emits_the_reduction_the_cost_model_prefers(tmp_path, monkeypatch):
    """all_reduce after the row-parallel linear because the model prefers it; were the model to prefer the pair,
    the pass says so instead of emitting an all_reduce it did not choose (the pair is not built: design §6.29)."""
    from onnx2ttnn.passes import split_tensor_parallel

    module = onnx2ttnn.convert(_mlp(tmp_path), device="n300", parallel="tp", weights="bf16").module
    ccl = [n.op for n in module.graph.nodes if n.op in ("all_reduce", "reduce_scatter", "all_gather")]
    assert ccl == ["all_reduce"]
    monkeypatch.setattr(split_tensor_parallel, "cheaper_reduction", lambda *a: ("reduce_scatter", "all_gather"))
    with pytest.raises(AssertionError, match="prefers reduce_scatter \\+ all_gather to all_reduce"):
        onnx2ttnn.convert(_mlp(tmp_path), device="n300", parallel="tp", weights="bf16")
