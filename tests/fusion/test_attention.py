"""fusion/attention.py: one small inline model per pattern variant, fused into one Attention node and run on the
simulator against onnxruntime (PCC >= 0.99, no leaks); near misses are rejected with their reason."""
from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn import convert
from onnx2ttnn.frontend.importer import import_model
from onnx2ttnn.ir.graph import layout_of
from onnx2ttnn.options import Options
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.fuse_patterns import FusePatterns
from onnx2ttnn.verify import verify

B, S = 1, 16


def _attention_model(heads=2, dh=32, *, mask=None, guard=False, key="torchscript", out_proj=True,
                     scale_on="qk", seq=S, gpt2=False, mask_rows=None) -> onnx.ModelProto:
    """x [1, seq, heads * dh] -> self-attention as an exporter writes it.  `mask`: None, "input" (an additive
    [1, 1, mask_rows or seq, seq] graph input) or "causal" (a constant); `key`: how the key's transpose is written
    ("torchscript": one Transpose [0, 2, 3, 1]; "dynamo": through rank 3); `scale_on`: "qk" (sqrt of the scale
    on q and on k) or "scores" (Div of the scores); `gpt2`: one Gemm computes q, k, v (split after it) and a Gemm
    the output projection, each between Reshapes to and from rank 2."""
    rng = np.random.default_rng(0)
    h = heads * dh
    inits = {f"w{p}": rng.standard_normal((h, h)) / math.sqrt(h) for p in "qkvo"}
    inits.update({f"b{p}": rng.standard_normal(h) * 0.1 for p in "qkvo"})
    inits.update(split=np.array([B, seq, heads, dh], np.int64), joined=np.array([B, seq, h], np.int64),
                 root=np.float32((1 / math.sqrt(dh)) ** 0.5), sqrt_dh=np.float32(math.sqrt(dh)),
                 zero=np.float32(0))
    nodes = []
    if gpt2:
        inits.update(w_qkv=np.concatenate([inits[f"w{p}"] for p in "qkv"], axis=1),
                     b_qkv=np.concatenate([inits[f"b{p}"] for p in "qkv"]), rows=np.array([-1, h], np.int64),
                     back3=np.array([B, seq, 3 * h], np.int64))
        nodes += [helper.make_node("Reshape", ["x", "rows"], ["x2d"]),
                  helper.make_node("Gemm", ["x2d", "w_qkv", "b_qkv"], ["qkv2d"]),
                  helper.make_node("Reshape", ["qkv2d", "back3"], ["qkv"]),
                  helper.make_node("Split", ["qkv"], ["q_lin", "k_lin", "v_lin"], axis=2, num_outputs=3)]
    for p in "qkv":
        if not gpt2:
            nodes += [helper.make_node("MatMul", ["x", f"w{p}"], [f"{p}_mm"]),
                      helper.make_node("Add", [f"b{p}", f"{p}_mm"], [f"{p}_lin"])]
        nodes.append(helper.make_node("Reshape", [f"{p}_lin", "split"], [f"{p}_4d"]))
    nodes += [helper.make_node("Transpose", ["q_4d"], ["q_h"], perm=[0, 2, 1, 3]),
              helper.make_node("Transpose", ["v_4d"], ["v_h"], perm=[0, 2, 1, 3])]
    if key == "torchscript":
        nodes.append(helper.make_node("Transpose", ["k_4d"], ["k_h"], perm=[0, 2, 3, 1]))
    else:
        inits.update(flat=np.array([B * heads, seq, dh], np.int64), back=np.array([B, heads, dh, seq], np.int64))
        nodes += [helper.make_node("Transpose", ["k_4d"], ["k_t"], perm=[0, 2, 1, 3]),
                  helper.make_node("Reshape", ["k_t", "flat"], ["k_3d"]),
                  helper.make_node("Transpose", ["k_3d"], ["k_3t"], perm=[0, 2, 1]),
                  helper.make_node("Reshape", ["k_3t", "back"], ["k_h"])]
    if scale_on == "qk":
        nodes += [helper.make_node("Mul", ["q_h", "root"], ["q_s"]), helper.make_node("Mul", ["k_h", "root"], ["k_s"]),
                  helper.make_node("MatMul", ["q_s", "k_s"], ["scores"])]
    else:
        nodes += [helper.make_node("MatMul", ["q_h", "k_h"], ["raw"]),
                  helper.make_node("Div", ["raw", "sqrt_dh"], ["scores"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, seq, h])]
    if mask is not None:
        if mask == "causal":
            inits["mask"] = np.triu(np.full((seq, seq), -np.inf, np.float32), 1).reshape(1, 1, seq, seq)
        else:
            inputs.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT, [B, 1, mask_rows or seq, seq]))
        nodes.append(helper.make_node("Add", ["scores", "mask"], ["masked"]))
    nodes.append(helper.make_node("Softmax", ["masked" if mask is not None else "scores"], ["p"], axis=-1))
    if guard:
        nodes += [helper.make_node("IsNaN", ["p"], ["nan"]), helper.make_node("Where", ["nan", "zero", "p"], ["pg"])]
    nodes += [helper.make_node("MatMul", ["pg" if guard else "p", "v_h"], ["o"]),
              helper.make_node("Transpose", ["o"], ["o_t"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["o_t", "joined"], ["y" if not out_proj else "o_j"])]
    if out_proj and gpt2:
        nodes += [helper.make_node("Reshape", ["o_j", "rows"], ["o_2d"]),
                  helper.make_node("Gemm", ["o_2d", "wo", "bo"], ["o_mm"]),
                  helper.make_node("Reshape", ["o_mm", "joined"], ["y"])]
    elif out_proj:
        nodes += [helper.make_node("MatMul", ["o_j", "wo"], ["o_mm"]), helper.make_node("Add", ["o_mm", "bo"], ["y"])]
    graph = helper.make_graph(nodes, "attention", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                                                          [B, seq, h])],
                              [numpy_helper.from_array(np.asarray(v, np.asarray(v).dtype if np.asarray(v).dtype
                                                                  == np.int64 else np.float32), k)
                               for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _fuse(model, dtype="bf16"):
    module = import_model(model, {})
    module.compute_dtype = dtype  # what settle-dtype would have settled
    FusePatterns().run(module, PassContext(Options(dtype=dtype)))
    return module


def _fused(model) -> list[str]:
    return [n.op for n in _fuse(model).graph.nodes]


def _check_on_simulator(model, inputs=None, memory="auto"):
    report = verify(model, inputs=inputs, memory=memory)
    assert report.passed, report.text()
    return report.conversion.op_counts()


@pytest.mark.parametrize("key", ["torchscript", "dynamo"])
@pytest.mark.parametrize("scale_on", ["qk", "scores"])
def test_encoder_attention_without_a_mask_becomes_sdpa(key, scale_on):
    model = _attention_model(key=key, scale_on=scale_on, guard=True)  # no mask: the guard is dropped
    assert _fused(model) == ["Attention"]
    counts = _check_on_simulator(model)
    assert counts["transformer.scaled_dot_product_attention"] == 1
    assert counts["transformer.split_query_key_value_and_split_heads"] == 1
    assert counts["transformer.concatenate_heads"] == 1 and counts["linear"] == 2  # QKV and the output projection
    assert "isnan" not in counts and "softmax" not in counts and "permute" not in counts


def _masked_inputs(rows: int):
    """x and an additive mask [1, 1, rows, S]: causal-like -inf entries, and row 2 (or the only row) blocking
    some keys; with `rows` S, row 2 sees no key at all (NaN in the softmax, zeros after the exporter's guard)."""
    mask = np.zeros((B, 1, rows, S), np.float32)
    mask[..., 5:] = -np.inf if rows == 1 else 0
    if rows > 1:
        mask[..., 3:, 5:] = -np.inf
        mask[..., 2, :] = -np.inf
    return {"x": np.random.default_rng(1).standard_normal((B, S, 64)).astype(np.float32), "mask": mask}


@pytest.mark.parametrize("memory", ["auto", "l1"])
def test_a_mask_from_the_inputs_goes_to_sdpa_and_fully_masked_rows_give_zeros(memory):
    model = _attention_model(mask="input", guard=True)
    module = _fuse(model)
    node = next(n for n in module.graph.nodes if n.op == "Attention")
    assert node.attrs["guard"] == 1
    assert module.notes["fuse-patterns"]["applied"] == {"attention (mask from the inputs, fully masked rows zeroed)": 1}
    report = verify(model, inputs=_masked_inputs(S), memory=memory)  # SDPA reads its mask from DRAM only
    assert report.passed, report.text()
    sdpa = next(n for n in report.conversion.module.graph.nodes if n.op == "transformer.scaled_dot_product_attention")
    assert layout_of(sdpa.inputs[3]).buffer == "dram" and layout_of(sdpa.inputs[0]).buffer == "l1"
    counts = report.conversion.op_counts()
    assert counts["transformer.scaled_dot_product_attention"] == 1
    assert counts["clip"] == counts["max"] == counts["isfinite"] == counts["multiply"] == 1
    assert "isnan" not in counts and "transformer.attention_softmax" not in counts


def test_a_key_padding_mask_from_the_inputs_keeps_the_guard_on_attention_softmax():
    model = _attention_model(mask="input", guard=True, mask_rows=1)  # [1, 1, 1, S]: SDPA refuses it
    counts = _check_on_simulator(model, inputs=_masked_inputs(1))
    assert counts["transformer.attention_softmax"] == 1 and counts["isnan"] == 1 and counts["where"] == 1
    assert "transformer.scaled_dot_product_attention" not in counts


@pytest.mark.parametrize("gpt2", [False, True])
def test_a_constant_causal_mask_becomes_is_causal_and_drops_the_guard(gpt2):
    model = _attention_model(mask="causal", guard=True, key="dynamo", gpt2=gpt2)
    node = next(n for n in _fuse(model).graph.nodes if n.op == "Attention")
    assert node.attrs["causal"] == 1 and node.attrs["guard"] == 0 and not node.inputs[3].name
    conversion = convert(model)
    assert "is_causal=True" in conversion.source
    counts = _check_on_simulator(model)
    assert counts["transformer.scaled_dot_product_attention"] == 1 and "isnan" not in counts


def test_heads_of_16_are_padded_to_32_through_the_output_projection():
    model = _attention_model(heads=4, dh=16, seq=17)  # ViT-like: 17 tokens, heads of 16
    module = _fuse(model)
    node = next(n for n in module.graph.nodes if n.op == "Attention")
    assert node.inputs[1].values.shape == (64, 3 * 4 * 32) and node.inputs[4].values.shape == (4 * 32, 64)
    counts = _check_on_simulator(model)
    assert counts["transformer.scaled_dot_product_attention"] == 1


def test_near_misses_are_rejected_with_their_reason():
    module = _fuse(_attention_model(heads=4, dh=16, out_proj=False))
    assert "Attention" not in [n.op for n in module.graph.nodes]
    assert module.notes["fuse-patterns"]["rejected"] == {
        "attention: head size 16 is not a multiple of 32 and no output projection takes the zero padding": 1}
    exposed = _attention_model()
    exposed.graph.output.append(helper.make_tensor_value_info("p", TensorProto.FLOAT, [B, 2, S, S]))  # the probs
    module = _fuse(exposed)
    assert "Attention" not in [n.op for n in module.graph.nodes] and module.notes["fuse-patterns"]["rejected"] == {
        "attention: an intermediate of the pattern is a graph output": 1}
    fp32 = _fuse(_attention_model(), dtype="fp32")  # SDPA refuses float32: not fused in fp32 programs
    assert "Attention" not in [n.op for n in fp32.graph.nodes]


def test_sdpa_is_costed_as_its_two_matrix_products():
    from onnx2ttnn.ir.cost import node_cost
    from onnx2ttnn.ir.device import get_device

    conversion = convert(_attention_model(heads=2, dh=32, seq=40))
    node = next(n for n in conversion.module.graph.nodes if n.op == "transformer.scaled_dot_product_attention")
    cost = node_cost(node, get_device("n150"))
    # q @ k^T and p @ v over tile-padded shapes: 2 * (2 * [1, 2, 64, 32] * 64 keys)
    assert cost.flops == 4 * (1 * 2 * 64 * 32) * 64 and cost.bound and cost.time_s > 0


@pytest.mark.parametrize("gpt2", [False, True])
def test_the_fused_weights_take_the_weights_option_s_format(gpt2):
    from onnx2ttnn.lowering.weight_dtype import count_weight_layers

    model = _attention_model(gpt2=gpt2)
    assert count_weight_layers(_fuse(model).graph) == 2  # the fused QKV weight and the output projection's
    formats = convert(model).weight_formats()  # --weights auto: Gaussian weights take bfloat8_b
    assert sorted(name.rsplit("_", 2)[-2] for name in formats) == ["out", "qkv"]
    assert {fmt for fmt, _ in formats.values()} == {"bfp8"}
    report = verify(model)
    assert report.passed, report.text()
    assert report.conversion.source.count("dtype=ttnn.bfloat8_b") == 2
    assert "bfloat8_b" not in convert(model, weights="bf16").source
