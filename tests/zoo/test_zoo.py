"""Every zoo model: export (cached), convert, run on the simulator against onnxruntime (PCC >= 0.99 per
output, no leaks), then run the same program on real ttnn 0.81.1 (mock n150): it must complete and leave
only parameters and outputs allocated. Reduced configs in CI; `--zoo-full` for the published sizes."""
from __future__ import annotations

import pytest

from models import zoo
from models.evaluate import evaluate


def _cases(full: bool):
    cases = []
    for entry in zoo.selected(full=full):
        for exporter in (entry.exporters if entry.exported else ("-",)):
            cases.append(pytest.param(entry, exporter, id=f"{entry.name}-{exporter}" if exporter != "-" else entry.name))
    return cases


def pytest_generate_tests(metafunc):
    if "zoo_case" in metafunc.fixturenames:
        full = metafunc.config.getoption("--zoo-full")
        metafunc.parametrize("zoo_case", [(p.values, p.id) for p in _cases(full)], ids=[p.id for p in _cases(full)])


def test_zoo_model(zoo_case, ttnn_mock, tmp_path, request):
    (entry, exporter), _ = zoo_case
    size = "full" if request.config.getoption("--zoo-full") and entry.exported else "reduced"
    result = evaluate(entry, size, exporter, mock=ttnn_mock, workdir=str(tmp_path))
    assert result.status == "pass", f"{entry.name} ({size}, {exporter}) failed at {result.stage}: {result.error}"
    assert result.real_ttnn == "ok"
    if entry.kind == "torch":  # the recurrent entries: every LSTM / GRU runs on the device, no host node
        assert result.fallback_ops == 0, result.fallback_detail


def test_the_zoo_has_what_the_issue_asks():
    architectures = {e.architecture for e in zoo.MODELS if e.ci}
    assert len(architectures) >= 20
    assert all(e.full or e.kind != "transformers" or e.config for e in zoo.MODELS)


QUANTIZED = [e for e in zoo.MODELS if e.kind == "quantized" and e.ci]


@pytest.mark.parametrize("entry", QUANTIZED, ids=[e.name for e in QUANTIZED])
def test_quantized_models_verify_in_bf16_too(entry, tmp_path):
    """`--dtype auto` (the default, test_zoo_model) may compute a quantized model in float32 (the reduced ViT
    QDQ: design §6.40); its `--dtype bf16` program passes the same bound against the quantized file, no leaks."""
    result = evaluate(entry, "reduced", "-", workdir=str(tmp_path), dtype="bf16")
    assert result.status == "pass", f"{entry.name} (bf16) failed at {result.stage}: {result.error}"
    assert result.min_pcc >= 0.99 and result.leaks == 0


QDQ = [e for e in zoo.MODELS if e.kind == "quantized" and e.quantization == "qdq" and e.ci]


@pytest.mark.parametrize("entry", QDQ, ids=[e.name for e in QDQ])
def test_qdq_models_run_on_the_device_with_block_float_weights(entry):
    """A QDQ model: no host node, its weights dequantized on import and mostly uploaded as bfloat8_b (the rest
    in bf16, each with its reason in the summary: per-channel conv weights whose bfloat8_b groups, which run
    along the out channels, mix scales too far apart; MobileNetV2's depthwise convs are the worst, 33 of 52)."""
    import onnx2ttnn
    from models import export

    conversion = onnx2ttnn.convert(export.export(entry, "reduced", "-", log=lambda line: None))
    assert conversion.fallback_counts() == {}
    weights = conversion.quantized_weights()
    block = [name for name, (dtype, _) in weights.items() if dtype == "bfp8"]
    assert weights and len(block) >= 0.6 * len(weights), weights
    assert all(why for dtype, why in weights.values() if dtype != "bfp8")


def test_a_qdq_resnet_reads_at_most_0_6_of_the_float_models_dram_bytes():
    """`report`'s DRAM bytes per forward of the QDQ ResNet-50 against the float file it was quantized from."""
    import onnx2ttnn
    from models import export
    from onnx2ttnn.report import placement_report

    entry = zoo.get("light_resnet50_qdq")
    quantized = placement_report(onnx2ttnn.convert(export.export(entry, "reduced", "-", log=lambda line: None)))
    original = placement_report(onnx2ttnn.convert(zoo.get(entry.base).path, weights="bf16"))
    assert quantized.dram_bytes <= 0.6 * original.dram_bytes, (quantized.dram_bytes, original.dram_bytes)
