"""Shared fixtures: the example models, and a BERT encoder exported from transformers (random weights,
dynamo exporter) for the end-to-end and real-ttnn tests.

The whole test run checks the IR after every pass (Options.verify_each, ir/verify_ir.py): the variable is
set before any test converts, so every conversion (in-process, the CLI's subprocesses, the zoo and the
real-ttnn tier's programs) is verified; ONNX2TTNN_VERIFY_EACH=0 in the environment turns it off."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("ONNX2TTNN_VERIFY_EACH", "1")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models")


@pytest.fixture(scope="session")
def mlp_path() -> str:
    return os.path.join(MODELS, "mlp.onnx")


@pytest.fixture(scope="session")
def cnn_path() -> str:
    return os.path.join(MODELS, "cnn.onnx")


@pytest.fixture(scope="session")
def bert_path(tmp_path_factory) -> str:
    """A 2-layer BERT-style encoder exported with torch.onnx.export(dynamo=True), inputs ids + mask."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=128, max_position_embeddings=64)
    model = BertModel(config).eval()
    with torch.no_grad():  # trained-model-like norms and biases: distinct values, not the ones / zeros of a fresh
        for name, param in model.named_parameters():  # init, which the exporter folds into one shared weight
            if name.endswith("bias") or "LayerNorm" in name:
                param.add_(0.1 * torch.randn_like(param))
    ids = torch.randint(0, config.vocab_size, (1, 16))
    mask = torch.ones(1, 16, dtype=torch.int64)
    path = str(tmp_path_factory.mktemp("bert") / "bert2.onnx")
    torch.onnx.export(model, (ids, mask), path, input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state", "pooler_output"], dynamo=True, opset_version=18,
                      verbose=False)
    return path
