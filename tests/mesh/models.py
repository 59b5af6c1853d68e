"""Models for the multi-chip tests: zoo entries (reduced) exported with a dynamic batch dim, so that the
per-chip program (the model at batch / chips) and onnxruntime's reference (at the whole batch) both run."""
from __future__ import annotations

import os


def export_dynamic_batch(name: str, folder: str) -> str:
    """The reduced zoo entry `name` exported (dynamo, opset 18) with dim 0 of every input dynamic."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from models import zoo
    from models.export import OPSET, _Outputs

    entry = zoo.get(name)
    module, config = zoo.build_model(entry, "reduced")
    inputs = zoo.example_inputs(entry, config, "reduced")
    inputs = {key: torch.cat([value, value]) for key, value in inputs.items()}  # batch 2: not a special size
    batch = torch.export.Dim("batch", min=1, max=64)
    path = os.path.join(folder, f"{name}_dynamic_batch.onnx")
    with torch.no_grad():
        torch.onnx.export(_Outputs(module, entry.outputs), tuple(inputs.values()), path, input_names=list(inputs),
                          output_names=list(entry.outputs), opset_version=OPSET, dynamo=True, verbose=False,
                          dynamic_shapes=(tuple({0: batch} for _ in inputs),))
    return path
