"""models/export.py: the dynamic-batch export (for multi-chip programs) leaves dim 0 of every input and output
symbolic, is cached apart from the entry's fixed-batch export, and is refused where it cannot be made."""
from __future__ import annotations

import os

import onnx
import pytest

from models import export, zoo


def _dims(values) -> dict:
    return {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim] for v in values}


def test_a_dynamic_batch_export_leaves_dim_0_symbolic_and_is_cached_apart():
    entry = zoo.get("bert")
    path = export.export(entry, "reduced", "dynamo", log=lambda _: None, dynamic_batch=True)
    model = onnx.load(path, load_external_data=False)
    inputs, outputs = _dims(model.graph.input), _dims(model.graph.output)
    assert inputs == {"input_ids": ["batch", 16], "attention_mask": ["batch", 16]}
    assert outputs == {"last_hidden_state": ["batch", 16, 64], "pooler_output": ["batch", 64]}
    assert os.path.dirname(path) != export.cache_dir(entry, "reduced", "dynamo")
    assert os.path.dirname(path) == export.cache_dir(entry, "reduced", "dynamo" + export.DYNAMIC_BATCH)
    # a second call finds it in the cache (nothing is exported: the log stays empty)
    said = []
    assert export.export(entry, "reduced", "dynamo", log=said.append, dynamic_batch=True) == path and not said


@pytest.mark.parametrize("name,exporter", [("bert", "torchscript"), ("vit_qdq", "dynamo")])
def test_a_dynamic_batch_is_refused_without_dynamo_or_a_torch_model(name, exporter):
    with pytest.raises(ValueError, match="dynamic batch"):
        export.export(zoo.get(name), "reduced", exporter, log=lambda _: None, dynamic_batch=True)
