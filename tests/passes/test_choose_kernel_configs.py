"""choose-kernel-configs: each matmul, linear, conv, softmax and norm carries the compute kernel config its
operand formats call for (ir/kernel_config.py), --math-fidelity forces one, and the program defines each
distinct config once."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx2ttnn
from onnx2ttnn.errors import ConversionError
from onnx2ttnn.ir.graph import TTNNCall, TTNNRef, set_layout
from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.ir.kernel_config import CONV, MATRIX, REDUCTION, KernelConfig, choose, fidelity_for, forced_fidelity
from onnx2ttnn.ir.ttnn_ops import OPS
from onnx2ttnn.passes.choose_kernel_configs import operand_formats

HIFI4 = KernelConfig("HiFi4", False, True, False)


def _mlp_softmax() -> onnx.ModelProto:
    """Gemm -> LayerNormalization -> Softmax, and a MatMul of two activations."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32) * 0.1, "w"),
             numpy_helper.from_array(np.zeros(64, np.float32), "b"),
             numpy_helper.from_array(np.ones(64, np.float32), "g")]
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["h"]),
             helper.make_node("LayerNormalization", ["h", "g", "b"], ["n"], axis=-1),
             helper.make_node("Softmax", ["n"], ["s"], axis=-1),
             helper.make_node("MatMul", ["s", "n"], ["y"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 64])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("formats, fidelity", [(("bf16", "bf16"), "HiFi4"), (("f32", "bf16"), "HiFi4"),
                                               (("bf16", "bfp8"), "HiFi2"), (("bfp8", "bfp8"), "HiFi2"),
                                               (("bf16", "bfp4"), "LoFi"), (("bfp8", "bfp4"), "LoFi"),
                                               ((), "HiFi4")])
def test_the_least_precise_operand_format_sets_the_fidelity(formats, fidelity):
    assert fidelity_for(formats) == fidelity
    assert choose(MATRIX, formats).math_fidelity == fidelity


def test_matrix_calls_accumulate_in_fp32_at_high_fidelity_and_in_l1_at_low():
    assert choose(MATRIX, ("bf16", "bf16")) == HIFI4
    assert choose(MATRIX, ("bf16", "bfp8")) == KernelConfig("HiFi2", False, False, True)
    assert choose(MATRIX, ("bf16", "bfp4")) == KernelConfig("LoFi", False, False, True)
    assert choose(MATRIX, ("bf16",), forced="HiFi3") == KernelConfig("HiFi3", False, True, False)


def test_convs_keep_ttnns_default_accumulation():
    """The conv L1 needs the planner uses were measured with a Float16_b destination and no L1 accumulation."""
    assert choose(CONV, ("bf16", "f32")) == KernelConfig("HiFi4", False, False, False)
    assert choose(CONV, ("bf16", "bfp8")) == KernelConfig("HiFi2", False, False, False)
    assert choose(CONV, ("bf16", "bfp4")) == KernelConfig("LoFi", False, False, False)


def test_reductions_always_accumulate_in_fp32():
    assert choose(REDUCTION, ("bf16",)) == HIFI4
    assert choose(REDUCTION, ("bfp8",)) == KernelConfig("HiFi2", False, True, False)
    assert choose(REDUCTION, ("bf16",), forced="LoFi") == KernelConfig("LoFi", False, True, False)


def test_unknown_fidelities_and_kinds_are_refused():
    assert forced_fidelity("auto") is None and forced_fidelity("hifi2") == "HiFi2"
    with pytest.raises(ValueError, match="unknown math fidelity 'hifi5'"):
        forced_fidelity("hifi5")
    with pytest.raises(ValueError, match="unknown math fidelity"):
        KernelConfig("HiFi5")
    with pytest.raises(ValueError, match="unknown kernel kind"):
        choose("eltwise", ())


def test_the_op_table_names_the_keyword_of_every_op_taking_a_config():
    keywords = {name: info.kernel_config for name, info in OPS.items() if info.kernel_config}
    assert keywords == {"matmul": "compute_kernel_config", "linear": "compute_kernel_config",
                        "softmax": "compute_kernel_config", "layer_norm": "compute_kernel_config",
                        "rms_norm": "compute_kernel_config", "conv2d": "compute_config",
                        "conv_transpose2d": "compute_config",
                        "transformer.scaled_dot_product_attention": "compute_kernel_config"}


def test_sdpa_takes_the_matrix_config_of_its_q_k_v_formats():
    """SDPA's two matmuls are a matrix kernel: a bfloat8_b v makes the whole call HiFi2 with L1 accumulation."""
    from tests.fusion.test_attention import _attention_model

    conversion = onnx2ttnn.convert(_attention_model(heads=2, dh=32), weights="bf16")
    sdpa = next(n for n in conversion.module.graph.nodes if n.op == "transformer.scaled_dot_product_attention")
    assert sdpa.attrs["compute_kernel_config"] == HIFI4
    assert list(operand_formats(sdpa)) == ["bf16", "bf16", "bf16"]
    set_layout(sdpa.inputs[2], TTNNLayout(page="tile", dtype="bfp8"))
    assert choose(MATRIX, operand_formats(sdpa)) == KernelConfig("HiFi2", False, False, True)


def test_every_call_that_takes_a_config_carries_the_one_its_operands_call_for():
    conversion = onnx2ttnn.convert(_mlp_softmax(), weights="bf16")
    nodes = [n for n in conversion.module.graph.nodes if OPS.get(n.op) and OPS[n.op].kernel_config]
    assert sorted(n.op for n in nodes) == ["layer_norm", "linear", "matmul", "softmax"]
    assert all(n.attrs["compute_kernel_config"] == HIFI4 for n in nodes)
    assert conversion.module.notes["choose-kernel-configs"] == {"calls": {"HIFI4_FP32_ACC": 4}}


def test_a_bfloat8_b_weight_gets_hifi2_and_l1_accumulation():
    """The rule keys off the layouts: a weight another pass stores in bfloat8_b (block-float weights, QDQ)
    gets HiFi2 with no change here."""
    conversion = onnx2ttnn.convert(_mlp_softmax())
    linear = next(n for n in conversion.module.graph.nodes if n.op == "linear")
    set_layout(linear.inputs[1], TTNNLayout(page="tile", dtype="bfp8"))
    assert list(operand_formats(linear)) == ["bf16", "bfp8"]
    assert choose(MATRIX, operand_formats(linear)) == KernelConfig("HiFi2", False, False, True)


def test_a_conv_config_weights_dtype_is_the_weight_format():
    conversion = onnx2ttnn.convert(_conv(), weights="bf16")
    conv = next(n for n in conversion.module.graph.nodes if n.op == "conv2d")
    assert conv.attrs["compute_config"] == KernelConfig("HiFi4", False, False, False)  # float32 weights
    assert "compute_kernel_config" not in conv.attrs
    conv.attrs["conv_config"] = TTNNCall("Conv2dConfig", weights_dtype=TTNNRef("bfloat8_b"))
    assert list(operand_formats(conv)) == ["bf16", "bfp8"]
    conv.attrs["conv_config"] = TTNNCall("Conv2dConfig", weights_dtype=TTNNRef("bfloat4_b"))
    assert choose(CONV, operand_formats(conv)).math_fidelity == "LoFi"


def _conv() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.full((8, 4, 3, 3), 0.1, np.float32), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
                              "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_math_fidelity_forces_one_fidelity_and_the_program_defines_each_config_once():
    conversion = onnx2ttnn.convert(_mlp_softmax(), math_fidelity="lofi")
    configs = {n.op: n.attrs["compute_kernel_config"] for n in conversion.module.graph.nodes
               if "compute_kernel_config" in n.attrs}
    assert configs["linear"] == configs["matmul"] == KernelConfig("LoFi", False, False, True)
    assert configs["softmax"] == configs["layer_norm"] == KernelConfig("LoFi", False, True, False)
    lines = conversion.source.splitlines()
    definitions = [line for line in lines if "ttnn.WormholeComputeKernelConfig(" in line]
    assert definitions == ["lofi_l1_acc = ttnn.WormholeComputeKernelConfig(",
                           "lofi_fp32_acc = ttnn.WormholeComputeKernelConfig("]
    start = lines.index(next(line for line in lines if line.startswith("def forward(")))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("def "))
    forward = lines[start:end]  # (a traceable program's forward_device repeats the calls)
    assert sum("compute_kernel_config=lofi_l1_acc" in line for line in forward) == 2
    assert sum("compute_kernel_config=lofi_fp32_acc" in line for line in forward) == 2
    (options,) = [line for line in lines if line.startswith("# device:")]  # the header's options line
    assert "math_fidelity=lofi" in options


def test_an_unknown_math_fidelity_is_one_conversion_error():
    with pytest.raises(ConversionError, match="unknown math fidelity 'hifi5'; choose one of auto, lofi"):
        onnx2ttnn.convert(_mlp_softmax(), math_fidelity="hifi5")


def test_the_cli_takes_math_fidelity(tmp_path):
    from click.testing import CliRunner

    from onnx2ttnn.cli import main

    model = tmp_path / "m.onnx"
    onnx.save(_mlp_softmax(), str(model))
    program = tmp_path / "m_ttnn.py"
    result = CliRunner().invoke(main, ["convert", str(model), "-o", str(program), "--math-fidelity", "hifi2"])
    assert result.exit_code == 0, result.output
    assert "math_fidelity=ttnn.MathFidelity.HiFi2" in program.read_text()
    result = CliRunner().invoke(main, ["convert", str(model), "-o", str(program), "--math-fidelity", "hifi5"])
    assert result.exit_code == 2 and "hifi5" in result.output


def test_the_verifier_names_a_call_without_its_config_and_a_config_under_the_wrong_keyword():
    from onnx2ttnn.ir.verify_ir import IRVerificationError, verify_ir

    module = onnx2ttnn.convert(_mlp_softmax()).module
    verify_ir(module, "assign-memory-configs", module.passes_run)  # as converted: holds
    linear = next(n for n in module.graph.nodes if n.op == "linear")
    config = linear.attrs.pop("compute_kernel_config")
    linear.attrs["compute_config"] = config
    with pytest.raises(IRVerificationError) as error:
        verify_ir(module, "assign-memory-configs", module.passes_run)
    text = str(error.value)
    assert "[kernel-configs]" in text and "compute_kernel_config is None, not a KernelConfig" in text
    assert "compute_config on ttnn.linear, whose entry takes compute_kernel_config" in text
