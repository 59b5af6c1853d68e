"""ir/verify_ir.py: a broken IR planted after a pass is caught after that pass, naming the pass, the node and
the tensor; correct conversions (the example models, zoo models, every policy) pass every contract."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from models import export, zoo
from onnx2ttnn import convert
from onnx2ttnn.cli import main
from onnx2ttnn.frontend.importer import import_model
from onnx2ttnn.ir.aliases import is_view
from onnx2ttnn.ir.graph import TTNNRef, layout_of, set_layout
from onnx2ttnn.ir.layout import TTNNLayout
from onnx2ttnn.ir.notes import LAYOUT_ATTRIBUTE, problem
from onnx2ttnn.ir.verify_ir import CONTRACTS, IRVerificationError, contracts_after, verify_ir
from onnx2ttnn.options import VERIFY_EACH_ENV, Options
from onnx2ttnn.passes import pipeline
from onnx2ttnn.passes.base import PassContext
from onnx2ttnn.passes.pipeline import PassManager, build_pipeline


def run_with_plant(model, after: str, plant, verify_each: bool = True, stop: bool = False, **options):
    """Run the pipeline on `model` (only up to pass `after` with `stop`); right after pass `after`,
    `plant(module)` breaks the IR (as if that pass had a bug).  Returns the module."""
    # the plants break the MLP's relu, which fuse-epilogues would fold into fc1's linear: run without it
    passes = [p for p in build_pipeline() if p.name != "fuse-epilogues"]
    index = next(i for i, p in enumerate(passes) if p.name == after)
    passes = passes[:index + 1] if stop else passes

    class Planted(type(passes[index])):
        def run(self, module, ctx):
            super().run(module, ctx)
            plant(module)

    passes[index] = Planted()
    module = import_model(model, {})
    PassManager(passes).run(module, PassContext(Options(verify_each=verify_each, **options)))
    return module


def first(module, op):
    return next(n for n in module.graph.nodes if n.op == op)


def test_an_undeclared_note_is_named_with_the_pass_and_the_node(mlp_path):
    def plant(module):
        first(module, "relu").attrs["_colour"] = "red"
    with pytest.raises(IRVerificationError, match=r"after pass 'simplify-ttnn'") as err:
        run_with_plant(mlp_path, "simplify-ttnn", plant)
    assert err.value.problems == [
        "[notes] node 4 ttnn.relu (from 'relu1'): undeclared note '_colour' (declare it in ir/notes.py)"]


def test_a_wrong_typed_note_and_an_undeclared_tensor_attribute(mlp_path):
    def plant(module):
        upload = next(n for n in module.graph.nodes if n.attrs.get("_param"))
        upload.attrs["_param"] = 3
        first(module, "relu").outputs[0].colour = "red"
    with pytest.raises(IRVerificationError, match="after pass 'lower-to-ttnn'") as err:
        run_with_plant(mlp_path, "lower-to-ttnn", plant)
    text = "\n".join(err.value.problems)
    assert "ttnn.from_torch (from 'fc1'): note '_param' = 3 is not of its declared type str" in text
    assert "ttnn.relu (from 'relu1'), tensor 'a1': undeclared tensor attribute(s) colour" in text


def test_a_ttnn_node_without_a_layout_after_assign_layouts(mlp_path):
    def plant(module):
        delattr(first(module, "relu").outputs[0], LAYOUT_ATTRIBUTE)
    with pytest.raises(IRVerificationError, match="after pass 'assign-layouts'") as err:
        run_with_plant(mlp_path, "assign-layouts", plant)
    assert "[layouts] node 4 ttnn.relu (from 'relu1'), tensor 'a1': has no TTNNLayout after assign-layouts" in \
        err.value.problems
    # before assign-layouts, no layout is owed: the lowered IR passes the contracts run so far
    module = run_with_plant(mlp_path, "lower-to-ttnn", lambda m: None, stop=True)
    assert all(layout_of(t) is None for n in module.graph.nodes for t in n.outputs)
    verify_ir(module, "lower-to-ttnn", module.passes_run)
    with pytest.raises(IRVerificationError, match="has no TTNNLayout"):
        verify_ir(module, "assign-layouts", ["lower-to-ttnn", "assign-layouts"])


def _move_before_last_reader(module):
    """The first deallocate goes before the last node that reads its tensor: a use after free."""
    nodes = module.graph.nodes
    free = first(module, "deallocate")
    reader = max(i for i, n in enumerate(nodes) if n is not free and free.inputs[0] in n.inputs)
    nodes.remove(free)
    nodes.insert(reader, free)


def test_a_use_after_deallocate(cnn_path):
    with pytest.raises(IRVerificationError, match="after pass 'insert-deallocs'") as err:
        run_with_plant(cnn_path, "insert-deallocs", _move_before_last_reader)
    assert err.value.problems == [("[deallocations] node 2 ttnn.permute (from 'stem.conv'), tensor 'image_dev': "
                                   "reads buffer 'image_dev' after its deallocate (node 1)")]


def test_a_double_deallocate_and_a_leak(cnn_path):
    def plant(module):
        nodes = module.graph.nodes
        frees = [n for n in nodes if n.op == "deallocate"]
        nodes.insert(nodes.index(frees[0]) + 1, type(frees[0])(op="deallocate", domain="ttnn", attrs=frees[0].attrs,
                                                               inputs=list(frees[0].inputs)))
        nodes.remove(frees[-1])
        frees[-1].inputs.clear()
    with pytest.raises(IRVerificationError) as err:
        run_with_plant(cnn_path, "insert-deallocs", plant)
    text = "\n".join(err.value.problems)
    assert "[deallocations] node 3 ttnn.deallocate (from 'stem.conv'), tensor 'image_dev': deallocates again buffer " \
           "'image_dev' after its deallocate (node 2)" in text
    assert "[freed] node 37 ttnn.linear (from 'fc'), tensor 'logits': device buffer never deallocated" in text


def test_a_declared_shape_that_ttnn_does_not_compute(mlp_path):
    def plant(module):
        first(module, "relu").outputs[0].shape = [4, 64]
    with pytest.raises(IRVerificationError) as err:
        run_with_plant(mlp_path, "lower-to-ttnn", plant)
    assert err.value.problems[0] == ("[shapes] node 4 ttnn.relu (from 'relu1'), tensor 'a1': declared shape (4, 64) "
                                     "but ttnn computes (4, 128)")


def test_an_op_outside_the_op_table(mlp_path):
    def plant(module):
        first(module, "relu").op = "relu_fast"
    with pytest.raises(IRVerificationError, match=r"\[ttnn-ops\] node 4 ttnn.relu_fast \(from 'relu1'\): ttnn op "
                                                  r"'relu_fast' is not in the compiler's op table"):
        run_with_plant(mlp_path, "lower-to-ttnn", plant)


def test_a_page_layout_the_op_cannot_read(cnn_path):
    def plant(module):  # the residual add reads the max pool's ROW_MAJOR result, not its TILE conversion
        convert_node = first(module, "to_layout")
        add = first(module, "add")
        add.inputs[add.inputs.index(convert_node.outputs[0])] = convert_node.inputs[0]
    with pytest.raises(IRVerificationError, match="after pass 'decompose-layouts'") as err:
        run_with_plant(cnn_path, "decompose-layouts", plant)
    assert any("[pages]" in p and "ttnn.add (from 'residual'), tensor 'pool1': input 0 is row_major but ttnn.add "
               "needs tile here" in p for p in err.value.problems)


def test_a_conversion_argument_its_layout_does_not_call_for(mlp_path):
    def plant(module):
        first(module, "from_torch").attrs["dtype"] = TTNNRef("float32")
    with pytest.raises(IRVerificationError, match="after pass 'place-memory'") as err:
        run_with_plant(mlp_path, "place-memory", plant, memory="dram")
    assert err.value.problems == [("[conversions] node 0 ttnn.from_torch (from 'input x'), tensor 'x_dev': dtype="
                                   "ttnn.float32 but its layout tile<bf16> dram interleaved calls for ttnn.bfloat16")]


def test_a_view_placed_apart_from_its_buffer_and_a_shard_that_does_not_fit(cnn_path, mlp_path):
    def split_view(module):
        view = next(n for n in module.graph.nodes if is_view(n))
        set_layout(view.outputs[0], layout_of(view.outputs[0]).with_(buffer="l1"))
    with pytest.raises(IRVerificationError, match=r"\[layouts\] .* view placed tile<bf16> l1 interleaved but its "
                                                  r"buffer '.*' is tile<bf16> dram interleaved"):
        run_with_plant(cnn_path, "place-memory", split_view, memory="dram")

    def narrow_shard(module):  # a [4, 128] tensor is 32x128 padded: a 64-wide height shard misses half of it
        shard = TTNNLayout("tile", "bf16", "l1", "height_sharded", grid=(1, 1), shard=(32, 64))
        set_layout(first(module, "relu").outputs[0], shard)
    with pytest.raises(IRVerificationError, match=r"tensor 'a1': tile<bf16> l1 height_sharded grid=1x1 shard=32x64 "
                                                  r"does not fit the tensor's 32x128"):
        run_with_plant(mlp_path, "place-memory", narrow_shard, memory="dram")

    def too_few_cores(module):  # what tests/real_ttnn/test_planted_errors.py shows real ttnn refusing at run time
        a1 = first(module, "relu").outputs[0]
        set_layout(a1, layout_of(a1).with_(buffer="l1", memory_layout="width_sharded", grid=(1, 2), shard=(32, 32)))
    with pytest.raises(IRVerificationError, match=r"tensor 'a1': tile<bf16> l1 width_sharded grid=1x2 shard=32x32 "
                                                  r"does not fit the tensor's 32x128"):
        run_with_plant(mlp_path, "place-memory", too_few_cores, memory="l1")


def test_a_layout_that_breaks_the_layout_rules(mlp_path):
    def plant(module):  # a layout built around TTNNLayout's own checks: bfloat8_b in ROW_MAJOR pages
        layout = layout_of(first(module, "relu").outputs[0]).with_(dtype="bf16")
        object.__setattr__(layout, "page", "row_major")
        object.__setattr__(layout, "dtype", "bfp8")
        set_layout(first(module, "relu").outputs[0], layout)
    with pytest.raises(IRVerificationError, match=r"tensor 'a1': illegal layout row_major<bfp8> dram interleaved: "
                                                  r"bfloat8_b exists only in TILE layout"):
        run_with_plant(mlp_path, "assign-layouts", plant)


def test_a_layout_that_is_not_a_layout_is_reported_not_crashed_on(mlp_path):
    def plant(module):
        setattr(first(module, "relu").outputs[0], LAYOUT_ATTRIBUTE, "tile<bf16> dram interleaved")
    with pytest.raises(IRVerificationError, match="after pass 'assign-layouts'") as err:
        run_with_plant(mlp_path, "assign-layouts", plant)
    assert ("[notes] node 4 ttnn.relu (from 'relu1'), tensor 'a1': layout 'tile<bf16> dram interleaved' is not a "
            "TTNNLayout") in err.value.problems


def test_a_shard_an_op_does_not_read_and_an_extra_input(mlp_path):
    def shard_softmax_input(module):  # neither linear nor softmax is probed with width shards
        head = next(n for n in module.graph.nodes if n.op == "linear" and n.outputs[0].name == "logits")
        out = head.outputs[0]
        set_layout(out, TTNNLayout("tile", "bf16", "l1", "width_sharded", grid=(1, 1), shard=(32, 32)))
    with pytest.raises(IRVerificationError, match="after pass 'place-memory'") as err:
        run_with_plant(mlp_path, "place-memory", shard_softmax_input, memory="dram")
    text = "\n".join(err.value.problems)
    assert "[placements] node 11 ttnn.linear (from 'head'), tensor 'logits': tile<bf16> l1 width_sharded grid=1x1 " \
           "shard=32x32: ttnn.linear does not write it (ir/placements.py)" in text
    assert "ttnn.softmax (from 'softmax'), tensor 'logits': input 0 is tile<bf16> l1 width_sharded" in text

    def extra_input(module):
        relu = first(module, "relu")
        relu.inputs.append(relu.inputs[0])
    with pytest.raises(IRVerificationError, match=r"ttnn.relu \(from 'relu1'\): reads 2 tensors but ttnn.relu takes 1 "
                                                  r"here \(input_tensor\): the emitter would drop the rest"):
        run_with_plant(mlp_path, "lower-to-ttnn", extra_input)


def test_contracts_accumulate_pass_by_pass():
    assert contracts_after(["remove-identities"]) == ("notes", "deallocations")
    assert contracts_after(["fold-constants", "remove-identities"]) == ("notes", "deallocations", "schedule")
    after_all = contracts_after([p.name for p in build_pipeline()])
    assert set(after_all) == {"notes", "deallocations"} | {c for cs in CONTRACTS.values() for c in cs}
    assert set(CONTRACTS) <= {p.name for p in build_pipeline()}


def test_without_verify_each_nothing_is_checked(mlp_path):
    module = run_with_plant(mlp_path, "lower-to-ttnn", lambda m: first(m, "relu").attrs.update(_colour="red"),
                            verify_each=False)
    assert first(module, "relu").attrs["_colour"] == "red"


def test_verify_each_defaults_from_the_environment_and_never_changes_the_program(monkeypatch, mlp_path):
    monkeypatch.setenv(VERIFY_EACH_ENV, "0")
    assert Options().verify_each is False
    monkeypatch.setenv(VERIFY_EACH_ENV, "1")
    assert Options().verify_each is True
    assert Options(verify_each=True).describe() == Options(verify_each=False).describe()
    on, off = convert(mlp_path, verify_each=True), convert(mlp_path, verify_each=False)
    assert on.source == off.source and on.program.weights.keys() == off.program.weights.keys()


def test_the_cli_flag_turns_verification_on(monkeypatch, tmp_path, mlp_path):
    monkeypatch.setenv(VERIFY_EACH_ENV, "0")
    checked = []
    monkeypatch.setattr(pipeline, "verify_ir", lambda module, after, *rest: checked.append(after))
    out = str(tmp_path / "mlp_ttnn.py")
    assert CliRunner().invoke(main, ["convert", mlp_path, "-o", out]).exit_code == 0 and checked == []
    assert CliRunner().invoke(main, ["convert", mlp_path, "-o", out, "--verify-each"]).exit_code == 0
    assert checked == [p.name for p in build_pipeline()]


def test_the_test_run_verifies_every_conversion():
    assert Options().verify_each, "tests/conftest.py sets ONNX2TTNN_VERIFY_EACH=1 for the whole test run"


def _declared_everywhere(module):
    return [problem(key, value, node.op) for node in module.graph.nodes for key, value in node.attrs.items()
            if key.startswith("_") and problem(key, value, node.op)]


@pytest.mark.parametrize("memory", ["auto", "dram", "l1"])
@pytest.mark.parametrize("name", ["mlp", "cnn", "light_squeezenet", "light_inception_v1"])
def test_example_and_zoo_models_pass_every_contract(name, memory):
    path = export.export(zoo.get(name), log=lambda line: None)
    conversion = convert(path, memory=memory, verify_each=True)
    assert conversion.module.passes_run == [p.name for p in build_pipeline()]
    assert _declared_everywhere(conversion.module) == []
