"""choose-program-configs: a matmul / linear reading a sharded input_tensor_a carries the program config
ir/program_config.choose makes, or the reason it has none; interleaved calls carry neither; the program
defines each distinct config once; the IR verifier holds sharded calls to it."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
from onnx2ttnn.emit.python import emit_program
from onnx2ttnn.ir.graph import layout_of, set_layout
from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.ir.placements import height_shard_layout
from onnx2ttnn.ir.program_config import MCAST_1D, REUSE, ProgramConfig
from onnx2ttnn.ir.verify_ir import CHECKS
from onnx2ttnn.options import Options
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.choose_program_configs import NO_CONFIG, ChooseProgramConfigs
from tests.ttnn_api import check_source


def _attention_and_linear(heads: int = 4, rows: int = 16):
    """scores = q @ k (two activations) and a linear of x by a weight."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((64, 96)).astype(np.float32), "w")
    nodes = [helper.make_node("MatMul", ["q", "k"], ["s"]), helper.make_node("MatMul", ["x", "w"], ["y"])]
    graph = helper.make_graph(nodes, "g", [
        helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, heads, rows, 16]),
        helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, heads, 16, rows]),
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2048, 64])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, heads, rows, rows]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2048, 96])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _placed(module, max_cores=None):
    """The module's two matmuls with input_tensor_a height-sharded as the planner would place it."""
    calls = [n for n in module.graph.nodes if n.op in ("matmul", "linear")]
    for node in calls:
        node.attrs.pop("program_config", None)
        node.attrs.pop(NO_CONFIG, None)
        a = node.inputs[0]
        set_layout(a, height_shard_layout(a.shape, layout_of(a), 8, 8, max_cores=max_cores))
    ChooseProgramConfigs().run(module, PassContext(Options()))
    return calls


def test_sharded_calls_get_their_config_and_interleaved_ones_none():
    conversion = onnx2ttnn.convert(_attention_and_linear())
    interleaved = [n for n in conversion.module.graph.nodes if n.op in ("matmul", "linear")]
    assert interleaved and not any("program_config" in n.attrs or NO_CONFIG in n.attrs for n in interleaved)
    scores, linear = _placed(conversion.module)
    assert scores.attrs["program_config"] == ProgramConfig(REUSE, (4, 1), 1, 1, 1, 1, 1)
    assert linear.attrs["program_config"] == ProgramConfig(MCAST_1D, (8, 8), 2, 1, 3, 1, 3, mcast_in0=False,
                                                           fuse_batch=True)
    assert conversion.module.notes["choose-program-configs"]["calls"] == {MCAST_1D: 1, REUSE: 1}
    assert list(CHECKS["program-configs"](conversion.module, None)) == []


def test_a_call_without_a_config_records_why_and_the_verifier_wants_one_or_the_other():
    conversion = onnx2ttnn.convert(_attention_and_linear(heads=8, rows=64))
    scores, _ = _placed(conversion.module)  # 16 tile rows on 16 cores: shards cut the 2-row batches
    assert "program_config" not in scores.attrs and "exactly one batch" in scores.attrs[NO_CONFIG]
    assert list(CHECKS["program-configs"](conversion.module, None)) == []
    del scores.attrs[NO_CONFIG]
    problems = [text for _, _, text in CHECKS["program-configs"](conversion.module, None)]
    assert problems == ["a sharded matmul / linear without a program config or a reason (_no_program_config)"]


def test_the_verifier_refuses_a_config_on_an_interleaved_call():
    conversion = onnx2ttnn.convert(_attention_and_linear())
    node = next(n for n in conversion.module.graph.nodes if n.op in ("matmul", "linear"))
    node.attrs["program_config"] = ProgramConfig(REUSE, (4, 1), 1, 1, 1, 1, 1)
    problems = [text for _, _, text in CHECKS["program-configs"](conversion.module, None)]
    assert len(problems) == 1 and "not a sharded matmul" in problems[0]


def test_the_program_defines_each_config_once_and_passes_it():
    conversion = onnx2ttnn.convert(_attention_and_linear())
    _placed(conversion.module)
    source = emit_program(conversion.module, weights_file="w.npz", source_model="m.onnx", options_text="",
                          device_name="n150").source
    assert source.count("= ttnn.MatmulMultiCoreReuseProgramConfig(") == 1
    assert source.count("= ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(") == 1
    assert "program_config=matmul_reuse_4x1_m1_n1_k1" in source
    assert "program_config=matmul_1d_mcast_in1_8x8_m1_n3_k2" in source
    assert check_source(source) == []


def test_an_interleaved_call_with_a_bias_or_an_activation_names_the_core_grid(mlp_path):
    """mlp.onnx's linears (two with bias + relu, the head with a bias) run interleaved: each names the device's core
    grid so that ttnn folds bias and relu into the matmul's program (docs/ttnn-facts.md §31); a MatMul with neither
    names none; the program fits the API and the simulator's result still matches onnxruntime."""
    from onnx2ttnn.verify import verify
    from tests.ir.test_cost import _shared_weight_model

    for device, grid in (("n150", "y=8, x=8"), ("p150", "y=10, x=11")):
        conversion = onnx2ttnn.convert(mlp_path, device=device)
        linears = [n for n in conversion.module.graph.nodes if n.op == "linear"]
        assert [bool(n.attrs.get("activation")) for n in linears] == [True, True, False]
        assert [repr(n.attrs.get("core_grid")) for n in linears] == [f"ttnn.CoreGrid({grid})"] * 3
        assert conversion.module.notes["choose-program-configs"]["core_grid"] == 3
        assert check_source(conversion.source) == []
    assert verify(mlp_path, conversion=onnx2ttnn.convert(mlp_path)).passed
    plain = onnx2ttnn.convert(_shared_weight_model(), weights="bf16").module.graph.nodes
    products = [n for n in plain if n.op in ("matmul", "linear")]
    assert [bool(n.attrs.get("activation")) for n in products] == [True, False]
    assert ["core_grid" in n.attrs for n in products] == [True, False]


def test_sdpa_gets_an_sdpa_config_on_the_device_grid_and_the_program_defines_it():
    from onnx2ttnn.ir.sdpa_config import SDPAConfig
    from tests.fusion.test_attention import _attention_model

    conversion = onnx2ttnn.convert(_attention_model(heads=2, dh=32, seq=40))
    sdpa = next(n for n in conversion.module.graph.nodes if n.op == "transformer.scaled_dot_product_attention")
    # 2 heads of 2 q tiles leave cores idle at any chunk: one tile; the 2 key tiles fit one chunk
    assert sdpa.attrs["program_config"] == SDPAConfig((8, 8), 32, 64)
    assert conversion.module.notes["choose-program-configs"]["calls"]["SDPAProgramConfig"] == 1
    source = conversion.source
    assert "sdpa_8x8_q32_k64 = ttnn.SDPAProgramConfig(" in source
    assert "program_config=sdpa_8x8_q32_k64" in source
    assert check_source(source) == []
    assert not list(CHECKS["program-configs"](conversion.module, None))
    sdpa.attrs.pop("program_config")
    assert [why for _, _, why in CHECKS["program-configs"](conversion.module, None)] == [
        "an SDPA call whose program_config is None, not an SDPAConfig or a reason"]
