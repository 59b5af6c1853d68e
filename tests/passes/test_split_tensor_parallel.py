"""split-tensor-parallel (passes/split_tensor_parallel.py): per-chip shapes and `_tp` notes of a feed-forward
pair, zero-padded widths, heads padded to a multiple of the chips, a vocab projection split over its columns (and
linears that are not one left whole), and the refusal of a model with no pair.
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
    assert module.notes["split-tensor-parallel"] == {"chips": 8, "row_parallel": 1, "embeddings": 0,
                                                     "vocab_parallel": 0}


def _readers(tensor) -> list:
    return [n for n in tensor.outputs if n.op != "deallocate"]


def test_a_vocab_projection_is_padded_with_zero_columns_gathered_and_cut(tmp_path):
    """A head [64, 500] over n300's 2 chips: weight and bias padded to 512 columns (zeros), 256 per chip
    (`_tp` on the last dim), then all_gather and a slice back to 500 columns, which the download reads."""
    module = onnx2ttnn.convert(_mlp(tmp_path, vocab=500), device="n300", parallel="tp", weights="bf16").module
    head = [n for n in module.graph.nodes if n.op == "linear"][-1]
    assert head.attrs["_tp"] == (2,) and list(head.outputs[0].shape) == [1, 32, 256]
    weight, bias = (np.asarray(t.inputs[0].inputs[0].values) for t in head.inputs[1:3])
    assert weight.shape == (64, 512) and not weight[:, 500:].any() and weight[:, :500].any()
    assert bias.shape[-1] == 512 and not bias[..., 500:].any()
    (gather,) = _readers(head.outputs[0])
    assert gather.op == "all_gather" and gather.attrs["dim"] == -1 and gather.attrs["cluster_axis"] == 1
    (cut,) = _readers(gather.outputs[0])
    assert cut.op == "slice" and list(cut.attrs["slice_end"]) == [1, 32, 500]
    assert [n.op for n in _readers(cut.outputs[0])] == ["to_torch"]
    assert module.notes["split-tensor-parallel"]["vocab_parallel"] == 1


@pytest.mark.parametrize("vocab,why", [(64, "square, as a pooler"), (16, "narrower than the model")])
def test_a_projection_that_does_not_widen_the_model_stays_whole(tmp_path, vocab, why):
    module = onnx2ttnn.convert(_mlp(tmp_path, vocab=vocab), device="n300", parallel="tp", weights="bf16").module
    head = [n for n in module.graph.nodes if n.op == "linear"][-1]
    assert not head.attrs.get("_tp") and list(head.outputs[0].shape) == [1, 32, vocab], why
    assert not [n for n in module.graph.nodes if n.op in ("all_gather", "slice")]
    assert module.notes["split-tensor-parallel"]["vocab_parallel"] == 0


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
