"""Models for the multi-chip tests: zoo entries (reduced; full size for benchmarks/bench_mesh.py --full) exported
with a dynamic batch dim, so that the per-chip program (the model at batch / chips) and onnxruntime's reference
(at the whole batch) both run.  Exports are cached like the zoo's (models/export.py: keyed by entry, size,
exporter and library versions)."""
from __future__ import annotations

import os

import onnx
import pytest

from tests.conftest import MODELS


def export_dynamic_batch(name: str, size: str = "reduced") -> str:
    """The zoo entry `name` at `size` exported (dynamo, opset 18) with dim 0 of every input dynamic
    (models/export.py, cached)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from models import zoo
    from models.export import export

    return export(zoo.get(name), size, "dynamo", log=lambda _: None, dynamic_batch=True)


def cnn_dynamic_batch(folder: str) -> str:
    """models/cnn.onnx with its batch dim (input and output) made symbolic."""
    model = onnx.load(os.path.join(MODELS, "cnn.onnx"))
    for value in list(model.graph.input) + list(model.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "batch"
    path = os.path.join(folder, "cnn_dynamic_batch.onnx")
    onnx.save(model, path)
    return path


def dynamic_model(name: str, folder: str, size: str = "reduced") -> str:
    """`name` (DP_MODELS) with a dynamic batch dim (cnn has one size: models/cnn.onnx)."""
    return cnn_dynamic_batch(folder) if name == "cnn" else export_dynamic_batch(name, size)


def batch_shapes(path: str, batch: int) -> dict:
    """--input-shape values putting `batch` in dim 0 of every input (the other dims as the model has them)."""
    model = onnx.load(path, load_external_data=False)
    return {value.name: (batch,) + tuple(d.dim_value for d in value.type.tensor_type.shape.dim[1:])
            for value in model.graph.input}


DP_MODELS = ("bert", "vit", "gpt2", "cnn")


@pytest.fixture(scope="session")
def dp_model(tmp_path_factory):
    """dp_model(name) -> the path of the model `name` (DP_MODELS) with a dynamic batch dim (import this
    fixture into a test module to use it)."""
    folder = tmp_path_factory.mktemp("dp_models")
    cache: dict[str, str] = {}

    def get(name: str) -> str:
        if name not in cache:
            cache[name] = dynamic_model(name, str(folder))
        return cache[name]
    return get


# Models with host steps, batch dim symbolic: a host fallback between device ops (Det), a host fallback reading a
# graph input and returning a graph output, and a host region (Col2Im: onnxruntime on the host)
HOST_MODELS = {
    "det": """
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[N, 4, 3, 3] x) => (float[N, 4] y) {
            r = Relu (x)
            d = Det (r)
            y = Sigmoid (d)
        }""",
    "det_edges": """
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[N, 4, 3, 3] x) => (float[N, 4] y, float[N, 4] z) {
            d = Det (x)
            y = Sigmoid (d)
            z = Det (x)
        }""",
    "col2im": """
        <ir_version: 8, opset_import: ["" : 18]>
        g (float[N, 4, 3] x) => (float[N, 1, 2, 4] y) {
            a = Relu (x)
            image = Constant <value = int64[2] {2, 4}> ()
            block = Constant <value = int64[2] {2, 2}> ()
            b = Col2Im (a, image, block)
            y = Sigmoid (b)
        }""",
}


def host_model(name: str, folder) -> str:
    """HOST_MODELS[name] saved in `folder`; its path."""
    from onnx import parser

    path = os.path.join(str(folder), f"{name}.onnx")
    onnx.save(parser.parse_model(HOST_MODELS[name]), path)
    return path
