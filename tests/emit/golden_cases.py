"""The golden programs: which models, how each is converted, and the command that regenerates the files.

    python -m tests.emit.golden_cases            # compare every case with its golden file, print diffs
    python -m tests.emit.golden_cases --update   # rewrite tests/emit/golden/ from the current emitter

Each case is a small model converted under each memory policy (auto, dram, l1). Its generated program is
checked in as `tests/emit/golden/<case>@<policy>.py`, and the sha256 of its weights sidecar (the .npz bytes
`convert` writes) as one line of `tests/emit/golden/weights.sha256`; the weights themselves are not checked
in. tests/emit/test_golden.py converts every case and compares.

The program text must be the same on every checkout, so every path it names is relative: each model is
converted as `<folder>/<case>.onnx -> <folder>/<case>_ttnn.py` (the program names `<case>.onnx` and
`<case>_ttnn.npz`, relative to its own folder; convert.py `_source_reference`). The example models come
from models/; the others are built here with onnx.helper (no torch, no network, weights from integer
arithmetic so they are the same bytes on any machine) and saved to a temporary folder.
"""
from __future__ import annotations

import argparse
import difflib
import hashlib
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(REPO, "tests", "emit", "golden")
WEIGHTS_SHA256 = os.path.join(GOLDEN, "weights.sha256")
POLICIES = ("auto", "dram", "l1")
UPDATE = "python -m tests.emit.golden_cases --update"
OPSET = 17


def _values(shape, scale: float, salt: int) -> np.ndarray:
    """Deterministic weights in [-scale, scale): integer arithmetic, then one exact division per value."""
    k = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    return (((k * 7919 + salt * 104729) % 257 - 128) / 128.0 * scale).astype(np.float32).reshape(shape)


def _model(nodes, name, inputs, outputs, inits, domains=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)] +
                              [helper.make_opsetid(d, 1) for d in domains], producer_name="onnx2ttnn-golden")
    onnx.checker.check_model(model)
    return model


def bert1(seq: int = 16, hidden: int = 64, heads: int = 4, ffn: int = 128, vocab: int = 64) -> onnx.ModelProto:
    """A one-layer BERT encoder with a pooler, in the shape exporters write it.

    Embeddings (word Gather + position and token-type constants) -> LayerNorm; the mask
    (1 - mask) * -10000 broadcast over heads; Q/K/V projections, split into heads, scaled scores + mask,
    Softmax, context merged back and projected; residual + LayerNorm; an Erf-GELU feed-forward; residual +
    LayerNorm; the pooler takes token 0 through Gemm + Tanh.
    """
    head = hidden // heads
    inits, salt = [], iter(range(1, 100))

    def weight(name, shape, scale=0.05):
        inits.append(numpy_helper.from_array(_values(shape, scale, next(salt)), name))
        return name

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    nodes = []

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def linear(x, name, n_in, n_out):
        y = node("MatMul", [x, weight(f"{name}.weight", (n_in, n_out))], f"{name}.matmul")
        return node("Add", [y, weight(f"{name}.bias", (n_out,), 0.01)], f"{name}.out")

    def layer_norm(x, name, output=None):
        inits.append(numpy_helper.from_array(1 + _values((hidden,), 0.1, next(salt)), f"{name}.weight"))
        return node("LayerNormalization", [x, f"{name}.weight", weight(f"{name}.bias", (hidden,), 0.01)],
                    output or f"{name}.out", axis=-1, epsilon=1e-12)

    words = node("Gather", [weight("embeddings.word", (vocab, hidden), 0.5), "input_ids"], "embeddings.words")
    positions = node("Add", [words, weight("embeddings.position", (1, seq, hidden), 0.1)], "embeddings.positions")
    types = node("Add", [positions, weight("embeddings.token_type", (hidden,), 0.1)], "embeddings.types")
    x = layer_norm(types, "embeddings.norm")

    mask = node("Cast", ["attention_mask"], "mask.float", to=TensorProto.FLOAT)
    inverted = node("Sub", [const("mask.one", np.float32(1.0)), mask], "mask.inverted")
    bias = node("Mul", [inverted, const("mask.scale", np.float32(-10000.0))], "mask.bias")
    bias = node("Unsqueeze", [bias, const("mask.axes", np.array([1, 2], np.int64))], "mask.heads")

    split = const("attention.split_shape", np.array([1, seq, heads, head], np.int64))
    q, k, v = (node("Reshape", [linear(x, f"attention.{p}", hidden, hidden), split], f"attention.{p}.heads")
               for p in "qkv")
    q = node("Transpose", [q], "attention.q.t", perm=[0, 2, 1, 3])
    k = node("Transpose", [k], "attention.k.t", perm=[0, 2, 3, 1])
    v = node("Transpose", [v], "attention.v.t", perm=[0, 2, 1, 3])
    scores = node("MatMul", [q, k], "attention.scores")
    scores = node("Div", [scores, const("attention.sqrt_d", np.float32(np.sqrt(head)))], "attention.scaled")
    scores = node("Add", [scores, bias], "attention.masked")
    probs = node("Softmax", [scores], "attention.probs", axis=-1)
    context = node("MatMul", [probs, v], "attention.context")
    context = node("Transpose", [context], "attention.context.t", perm=[0, 2, 1, 3])
    context = node("Reshape", [context, const("attention.merge_shape", np.array([1, seq, hidden], np.int64))],
                   "attention.merged")
    attended = node("Add", [linear(context, "attention.output", hidden, hidden), x], "attention.residual")
    x = layer_norm(attended, "attention.norm")

    up = linear(x, "ffn.up", hidden, ffn)
    scaled = node("Div", [up, const("ffn.sqrt2", np.float32(np.sqrt(2.0)))], "ffn.gelu.scaled")
    erf = node("Add", [node("Erf", [scaled], "ffn.gelu.erf"), const("ffn.one", np.float32(1.0))], "ffn.gelu.plus1")
    half = node("Mul", [up, const("ffn.half", np.float32(0.5))], "ffn.gelu.half")
    gelu = node("Mul", [half, erf], "ffn.gelu.out")
    down = node("Add", [linear(gelu, "ffn.down", ffn, hidden), x], "ffn.residual")
    last = layer_norm(down, "ffn.norm", "last_hidden_state")
    first = node("Gather", [last, const("pooler.index", np.array(0, np.int64))], "pooler.first",
                 axis=1)
    pooled = node("Gemm", [first, weight("pooler.weight", (hidden, hidden)), weight("pooler.bias", (hidden,), 0.01)],
                  "pooler.dense", transB=1)
    node("Tanh", [pooled], "pooler_output")
    return _model(nodes, "bert1", [("input_ids", TensorProto.INT64, [1, seq]),
                                   ("attention_mask", TensorProto.INT64, [1, seq])],
                  [("last_hidden_state", TensorProto.FLOAT, [1, seq, hidden]),
                   ("pooler_output", TensorProto.FLOAT, [1, hidden])], inits)


def shards() -> onnx.ModelProto:
    """Two eltwise chains the auto policy shards over all 8x8 cores of an n150.

    A tall tensor (64 tile rows x 2 tile columns) is height-sharded, a short wide one (2 x 64 tiles)
    width-sharded: the cases tests/passes/test_place_memory.py checks placement by placement.
    """
    nodes = []
    for name, shape in (("tall", [1, 1, 2048, 64]), ("wide", [1, 1, 64, 2048])):
        chain = [name, f"{name}.relu", f"{name}.exp", f"{name}_out"]
        for op, (x, y) in zip(("Relu", "Exp", "Sigmoid"), zip(chain, chain[1:])):
            nodes.append(helper.make_node(op, [x], [y], name=y))
    return _model(nodes, "shards", [("tall", TensorProto.FLOAT, [1, 1, 2048, 64]),
                                    ("wide", TensorProto.FLOAT, [1, 1, 64, 2048])],
                  [("tall_out", TensorProto.FLOAT, [1, 1, 2048, 64]),
                   ("wide_out", TensorProto.FLOAT, [1, 1, 64, 2048])], [])


def fallback() -> onnx.ModelProto:
    """MatMul on the device -> Trilu (no ttnn lowering: a host fallback) -> Add + Relu on the device."""
    inits = [numpy_helper.from_array(_values((64, 64), 0.1, 1), "w"),
             numpy_helper.from_array(_values((64,), 0.1, 2), "b")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="project"),
             helper.make_node("Trilu", ["h"], ["upper"], name="upper", upper=1),
             helper.make_node("Add", ["upper", "b"], ["biased"], name="bias"),
             helper.make_node("Relu", ["biased"], ["y"], name="relu")]
    return _model(nodes, "fallback", [("x", TensorProto.FLOAT, [1, 32, 64])], [("y", TensorProto.FLOAT, [1, 32, 64])],
                  inits)


def region() -> onnx.ModelProto:
    """MatMul on the device -> com.microsoft Gelu (no lowering, no fallback: a host region run by onnxruntime)
    -> Add + Relu on the device."""
    inits = [numpy_helper.from_array(_values((64, 64), 0.1, 3), "w"),
             numpy_helper.from_array(_values((64,), 0.1, 4), "b")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="project"),
             helper.make_node("Gelu", ["h"], ["g"], name="contrib_gelu", domain="com.microsoft"),
             helper.make_node("Add", ["g", "b"], ["biased"], name="bias"),
             helper.make_node("Relu", ["biased"], ["y"], name="relu")]
    return _model(nodes, "region", [("x", TensorProto.FLOAT, [1, 32, 64])], [("y", TensorProto.FLOAT, [1, 32, 64])],
                  inits, domains=("com.microsoft",))


@dataclass(frozen=True)
class Case:
    """One golden model: a file in models/ (`example`) or a builder of a ModelProto (`build`)."""

    name: str
    what: str
    example: Optional[str] = None
    build: Optional[Callable[[], onnx.ModelProto]] = None

    def model_path(self, folder: str) -> str:
        """The model's path: the checked-in example, or the built model saved as `<folder>/<name>.onnx`."""
        if self.example:
            return os.path.join(REPO, "models", self.example)
        path = os.path.join(folder, f"{self.name}.onnx")
        if not os.path.exists(path):
            onnx.save(self.build(), path)
        return path


CASES = (
    Case("mlp", "the example MLP (Gemm, Relu, MatMul + Add, Softmax)", example="mlp.onnx"),
    Case("cnn", "the example CNN (conv + batchnorm + relu, pools, a residual, Gemm)", example="cnn.onnx"),
    Case("bert1", "a one-layer BERT encoder with a pooler", build=bert1),
    Case("shards", "height- and width-sharded eltwise chains under auto", build=shards),
    Case("fallback", "a Trilu between device ops: a host fallback", build=fallback),
    Case("region", "a com.microsoft Gelu between device ops: a host region", build=region),
)
KEYS = tuple(f"{case.name}@{policy}" for case in CASES for policy in POLICIES)


def generate(case: Case, policy: str, folder: str) -> tuple[str, str]:
    """(program text, sha256 of the weights sidecar) of `case` converted under `policy`."""
    import onnx2ttnn
    from onnx2ttnn.emit.weights import npz_bytes

    model = case.model_path(folder)
    conversion = onnx2ttnn.convert(model, os.path.join(os.path.dirname(model), f"{case.name}_ttnn.py"),
                                   memory=policy)
    return conversion.source, hashlib.sha256(npz_bytes(conversion.program.weights)).hexdigest()


def golden_path(key: str) -> str:
    return os.path.join(GOLDEN, f"{key}.py")


def read_golden(key: str) -> Optional[str]:
    """The checked-in program of `key` (`case@policy`), or None when there is none."""
    path = golden_path(key)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def read_weight_hashes() -> dict[str, str]:
    """`case@policy` -> sha256 of its weights sidecar, from tests/emit/golden/weights.sha256."""
    if not os.path.exists(WEIGHTS_SHA256):
        return {}
    with open(WEIGHTS_SHA256, encoding="utf-8") as handle:
        pairs = (line.split() for line in handle if line.strip())
        return {name.removesuffix(".npz"): digest for digest, name in pairs}


def diff(key: str, expected: Optional[str], actual: str) -> str:
    """A unified diff from the golden file to the program the emitter writes now."""
    lines = difflib.unified_diff((expected or "").splitlines(keepends=True), actual.splitlines(keepends=True),
                                 f"tests/emit/golden/{key}.py", f"{key} as generated now")
    return "".join(lines)


def update(folder: str) -> list[str]:
    """Rewrite every golden program and the weights hashes; remove golden files of cases that no longer exist.
    Returns the keys whose files changed."""
    os.makedirs(GOLDEN, exist_ok=True)
    changed, hashes = [], {}
    for case in CASES:
        for policy in POLICIES:
            key = f"{case.name}@{policy}"
            source, hashes[key] = generate(case, policy, folder)
            if read_golden(key) != source or read_weight_hashes().get(key) != hashes[key]:
                changed.append(key)
            with open(golden_path(key), "w", encoding="utf-8", newline="") as handle:
                handle.write(source)
    for stale in sorted(set(stale_files())):
        os.unlink(os.path.join(GOLDEN, stale))
        changed.append(stale)
    with open(WEIGHTS_SHA256, "w", encoding="utf-8") as handle:
        handle.writelines(f"{hashes[key]}  {key}.npz\n" for key in KEYS)
    return changed


def stale_files() -> list[str]:
    """Program files in tests/emit/golden/ that no case generates."""
    wanted = {f"{key}.py" for key in KEYS}
    return [f for f in sorted(os.listdir(GOLDEN)) if f.endswith(".py") and f not in wanted] \
        if os.path.isdir(GOLDEN) else []


def check(folder: str) -> int:
    """Print the diff of every case that differs from its golden files; the number of such cases."""
    hashes, failures = read_weight_hashes(), 0
    for case in CASES:
        for policy in POLICIES:
            key = f"{case.name}@{policy}"
            source, digest = generate(case, policy, folder)
            expected = read_golden(key)
            if expected != source:
                failures += 1
                print(diff(key, expected, source) if expected is not None else f"{key}: no golden file")
            elif hashes.get(key) != digest:
                failures += 1
                print(f"{key}: weights sha256 {digest}, golden {hashes.get(key)}")
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="rewrite tests/emit/golden/ from the emitter")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="onnx2ttnn-golden-") as folder:
        if args.update:
            changed = update(folder)
            print(f"{len(changed)} golden files changed" + (f": {', '.join(changed)}" if changed else ""))
            return 0
        failures = check(folder)
    for stale in stale_files():
        print(f"tests/emit/golden/{stale}: a golden file of no case")
    print(f"{len(KEYS) - failures} of {len(KEYS)} golden cases match"
          + (f"; to accept the programs as they are now: {UPDATE}" if failures or stale_files() else ""))
    return 1 if failures or stale_files() else 0


if __name__ == "__main__":
    sys.exit(main())
