"""--parallel auto (onnx2ttnn/parallel.py, docs/design.md §6.35): tp when dp cannot hold or split the model;
when both can, both conversions from one load and the one of lower modelled eager time kept (dp when tp
refuses the model); no comparison when only one mode can hold it; each external weight read from disk once."""
from __future__ import annotations

import importlib

import numpy as np

import onnx2ttnn
from onnx2ttnn import parallel
from onnx2ttnn.convert import Conversion
from onnx2ttnn.frontend import weights
from onnx2ttnn.ir.device import DEVICES
from onnx2ttnn.options import Options
from tests.mesh.models import batch_shapes, dp_model  # noqa: F401 (dp_model is a fixture)

convert_module = importlib.import_module("onnx2ttnn.convert")  # the package's `convert` is the function


def _count_conversions(monkeypatch) -> list:
    modes = []
    real = convert_module._convert_as

    def counted(proto, path, opts, *args):
        modes.append(opts.parallel)
        return real(proto, path, opts, *args)
    monkeypatch.setattr(convert_module, "_convert_as", counted)
    return modes


def test_auto_keeps_the_lower_modelled_time_of_the_reduced_bert(dp_model, monkeypatch):
    model = dp_model("bert")
    shapes = batch_shapes(model, 8)
    modes = _count_conversions(monkeypatch)
    auto = onnx2ttnn.convert(model, device="t3k", mesh="1x8", input_shapes=shapes)
    assert modes == ["dp", "tp"]
    monkeypatch.undo()
    dp = onnx2ttnn.convert(model, device="t3k", mesh="1x8", parallel="dp", input_shapes=shapes)
    tp = onnx2ttnn.convert(model, device="t3k", mesh="1x8", parallel="tp", input_shapes=shapes)
    assert auto.auto["times"] == {"dp": dp.modelled_s(), "tp": tp.modelled_s()}
    # measured (design §6.35): dp 1137.6 us, tp 1306.7 us per eager forward
    assert dp.modelled_s() < tp.modelled_s()
    assert auto.auto["kept"] == auto.options.parallel == "dp" and auto.module.tp == 1
    assert auto.source == dp.source
    assert auto.timings[0][0] == "auto: the tp conversion"


def test_auto_keeps_tensor_parallel_when_the_cost_model_finds_it_faster(dp_model, monkeypatch):
    model = dp_model("gpt2")
    shapes = batch_shapes(model, 8)
    monkeypatch.setattr(Conversion, "modelled_s", lambda self: 1e-3 if self.options.parallel == "tp" else 2e-3)
    auto = onnx2ttnn.convert(model, device="t3k", mesh="1x8", input_shapes=shapes)
    tp = onnx2ttnn.convert(model, device="t3k", mesh="1x8", parallel="tp", input_shapes=shapes)
    assert auto.auto == {"times": {"dp": 2e-3, "tp": 1e-3}, "kept": "tp"}
    assert auto.options.parallel == "tp" and auto.module.tp == 8 and auto.source == tp.source
    assert parallel.auto_line(auto.auto) == ("parallel auto: modelled eager time per forward dp 2000.0 us, "
                                             "tp 1000.0 us; kept tp")
    monkeypatch.setattr(Conversion, "modelled_s", lambda self: 1e-3)
    assert onnx2ttnn.convert(model, device="t3k", mesh="1x8", input_shapes=shapes).options.parallel == "dp"  # tie


def test_auto_is_data_parallel_when_tensor_parallel_refuses_the_model(dp_model):
    model = dp_model("cnn")
    auto = onnx2ttnn.convert(model, device="t3k", input_shapes=batch_shapes(model, 8))
    assert auto.options.parallel == "dp" and list(auto.auto["times"]) == ["dp"]
    assert "no attention or feed-forward pair" in auto.auto["refused"]
    assert "tp refused the model" in parallel.auto_line(auto.auto)


def test_auto_converts_once_when_only_one_mode_can_hold_the_model(dp_model, monkeypatch):
    model = dp_model("bert")
    modes = _count_conversions(monkeypatch)
    odd = onnx2ttnn.convert(model, device="n300", input_shapes=batch_shapes(model, 3))
    assert modes == ["tp"] and odd.auto == {}  # a batch of 3 does not divide over 2 chips: dp would refuse it
    modes.clear()
    column = onnx2ttnn.convert(model, device="t3k", mesh="2x1", input_shapes=batch_shapes(model, 8))
    assert modes == ["dp"] and column.auto == {}  # one column: nothing for tp to split over
    modes.clear()
    one = onnx2ttnn.convert(model, device="n150", input_shapes=batch_shapes(model, 8))
    assert modes == ["auto"] and one.auto == {} and one.module.tp == 1


def test_auto_picks_tensor_parallel_when_the_weights_do_not_fit_one_chip(dp_model, monkeypatch):
    model = dp_model("bert")
    shapes = batch_shapes(model, 8)
    small = DEVICES["t3k"].__class__(**{**DEVICES["t3k"].__dict__, "dram_bank_bytes": 4096})
    monkeypatch.setitem(DEVICES, "t3k", small)
    monkeypatch.setattr(parallel, "get_device", lambda name: DEVICES[name])
    options = Options(device="t3k", mesh="1x8", parallel="auto", input_shapes=shapes)
    parallel.settle_auto(model, options)
    assert options.parallel == "tp"
    monkeypatch.undo()
    parallel.settle_auto(model, options := Options(device="t3k", mesh="1x8", parallel="auto", input_shapes=shapes))
    assert options.parallel == "auto"  # both can hold it: convert() compares them


def test_both_conversions_read_each_external_weight_once(dp_model, monkeypatch):
    model = dp_model("bert")
    reads = []
    real = weights.FileValues._read
    monkeypatch.setattr(weights.FileValues, "_read", lambda self: reads.append(self._key()) or real(self))
    auto = onnx2ttnn.convert(model, device="t3k", mesh="1x8", input_shapes=batch_shapes(model, 8))
    assert auto.auto["times"].keys() == {"dp", "tp"}
    assert reads and len(reads) == len(set(reads))
    assert any(role == "the model's external data" for role, _ in auto.inputs)



def test_auto_measures_the_model_once_for_both_conversions(dp_model, monkeypatch, tmp_path):
    """settle-dtype's and measure-weight-gain's onnxruntime runs are made in the dp conversion and reused by the
    tp one (each ran in both before): the same model, and the two programs compared in one dtype."""
    from onnx import TensorProto, helper, numpy_helper

    from onnx2ttnn.passes import measure_weight_gain, settle_dtype

    calls = {"gain": 0, "dtype": 0}
    for module, key in ((measure_weight_gain, "gain"), (settle_dtype, "dtype")):
        def counted(*args, _real=module.measure, _key=key, **kwargs):
            calls[_key] += 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(module, "measure", counted)
    model = dp_model("bert")
    modes = _count_conversions(monkeypatch)
    auto = onnx2ttnn.convert(model, device="t3k", mesh="1x8", input_shapes=batch_shapes(model, 8))
    assert modes == ["dp", "tp"] and auto.auto["times"].keys() == {"dp", "tp"}
    assert calls == {"gain": 1, "dtype": 0}  # a float model: no quantized activation to measure
    assert auto.module.notes["measure-weight-gain"]["gain"] >= 1.0

    # a QDQ model (x -> Q/DQ at two scales -> Sub) with a batch dim: measured once, though tp refuses it later
    nodes = [helper.make_node("Mul", ["x", "fifty"], ["a"]), helper.make_node("Mul", ["x", "fifty_half"], ["b"])]
    for source in ("a", "b"):
        nodes += [helper.make_node("QuantizeLinear", [source, "one", "zero"], [source + "_q"]),
                  helper.make_node("DequantizeLinear", [source + "_q", "one", "zero"], [source + "_dq"])]
    nodes.append(helper.make_node("Sub", ["a_dq", "b_dq"], ["y"]))
    constants = {"fifty": np.float32(50.0), "fifty_half": np.float32(50.5), "one": np.float32(1.0),
                 "zero": np.int8(0)}
    graph = helper.make_graph(nodes, "codes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 64])],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in constants.items()])
    path = tmp_path / "codes.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    modes.clear()
    calls.update(gain=0, dtype=0)
    auto = onnx2ttnn.convert(str(path), device="n300", input_shapes={"x": (32, 64)})
    assert modes == ["dp", "tp"] and "refused" in auto.auto and calls == {"gain": 0, "dtype": 1}
    assert auto.module.compute_dtype == "fp32" and auto.module.notes["settle-dtype"]["loss"] > 0.005


def _qdq_feed_forward(path) -> str:
    """x -> Q/DQ at two scales (50 x, 50.5 x) -> Sub -> MatMul [64, 256] -> Relu -> MatMul [256, 64]: a quantized
    model bf16 moves off its codes (auto settles fp32) with a feed-forward pair tp splits."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Mul", ["x", "fifty"], ["a"]), helper.make_node("Mul", ["x", "fifty_half"], ["b"])]
    for source in ("a", "b"):
        nodes += [helper.make_node("QuantizeLinear", [source, "one", "zero"], [source + "_q"]),
                  helper.make_node("DequantizeLinear", [source + "_q", "one", "zero"], [source + "_dq"])]
    nodes += [helper.make_node("Sub", ["a_dq", "b_dq"], ["d"]), helper.make_node("MatMul", ["d", "w1"], ["h"]),
              helper.make_node("Relu", ["h"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y"])]
    constants = {"fifty": np.float32(50.0), "fifty_half": np.float32(50.5), "one": np.float32(1.0),
                 "zero": np.int8(0), "w1": rng.standard_normal((64, 256), np.float32) / 8,
                 "w2": rng.standard_normal((256, 64), np.float32) / 16}
    graph = helper.make_graph(nodes, "codes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 64])],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in constants.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())
    return str(path)


def test_the_weights_are_sized_in_the_program_s_dtype(monkeypatch, tmp_path):
    """dp's weights were sized from --weights alone (auto: bfloat8_b, 1.06 B a value) where a float32 program
    keeps them float32 (4 B): with one chip's budget between the two, --dtype fp32 is tp only, and auto, which
    settles fp32 for this quantized model in the dp conversion, keeps the tp program."""
    import onnx

    model = _qdq_feed_forward(tmp_path / "ffn.onnx")
    values = 2 * 64 * 256 + 3  # the two matrices and three float scalars
    assert parallel.weight_bytes(onnx.load(model), "auto", "bf16") == values * 1088 / 1024
    assert parallel.weight_bytes(onnx.load(model), "auto", "fp32") == values * 4
    device = DEVICES["n300"]
    monkeypatch.setattr(parallel, "DRAM_FOR_WEIGHTS", 2 * values / (device.dram_banks * device.dram_bank_bytes))
    for dtype, mode in (("bf16", "auto"), ("fp32", "tp")):
        options = Options(device="n300", mesh="1x2", parallel="auto", dtype=dtype, input_shapes={"x": (32, 64)})
        parallel.settle_auto(model, options)
        assert options.parallel == mode, dtype
    auto = onnx2ttnn.convert(model, device="n300", input_shapes={"x": (32, 64)})
    assert auto.module.compute_dtype == "fp32" and auto.options.parallel == "tp" and auto.module.tp == 2
    assert auto.auto["kept"] == "tp" and auto.auto["outgrown"] == "in fp32" and set(auto.auto["times"]) == {"dp", "tp"}
    assert "dp's weights outgrow one chip in fp32; kept tp" in parallel.auto_line(auto.auto)
    monkeypatch.undo()
    assert onnx2ttnn.convert(model, device="n300", input_shapes={"x": (32, 64)}).options.parallel == "dp"


def test_a_qdq_model_s_integer_weights_are_sized_too():
    """A QDQ model's weights are int8 initializers a DequantizeLinear reads: they were not counted at all (a QDQ
    model's dp always held).  They are sized as float weights, except a float32 program's matmul weights under
    auto, which go up as their codes in bfloat8_b; a conv's stay float32 there."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("DequantizeLinear", ["wq", "s", "z"], ["w"]),
             helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("DequantizeLinear", ["kq", "s", "z"], ["k"]), helper.make_node("Conv", ["i", "k"], ["c"])]
    constants = {"wq": np.ones((64, 32), np.int8), "kq": np.ones((8, 4, 3, 3), np.int8), "s": np.float32(0.1),
                 "z": np.int8(0)}
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64]),
                                           helper.make_tensor_value_info("i", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [helper.make_tensor_value_info("h", TensorProto.FLOAT, [4, 32]),
                               helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 8, 6, 6])],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in constants.items()])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    linear, conv, bfp8 = 64 * 32, 8 * 4 * 3 * 3, 1088 / 1024
    assert parallel.weight_bytes(proto, "auto", "bf16") == (linear + conv + 1) * bfp8  # the scale: one float
    assert parallel.weight_bytes(proto, "bf16", "bf16") == (linear + conv + 1) * 2
    assert parallel.weight_bytes(proto, "auto", "fp32") == linear * bfp8 + (conv + 1) * 4
    assert parallel.weight_bytes(proto, "bf16", "fp32") == (linear + conv + 1) * 4
