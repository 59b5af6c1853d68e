"""index_inputs: integer inputs that index a constant table get random ids below its rows; masks stay ones."""
from __future__ import annotations

import types

import numpy as np
import onnx_graphsurgeon as gs
from onnx import TensorProto, helper, numpy_helper

from onnx2ttnn.convert import convert
from onnx2ttnn.frontend.index_inputs import index_rows


def _lookup_model(rows=7, other_rows=40):
    """ids [2, 16] int64 -> Gather(table[rows, 4]) and, through a Cast and Unsqueeze, Gather(other[other_rows, 4]);
    mask [2, 16] int64 only multiplies."""
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["rows_a"]),
        helper.make_node("Cast", ["ids"], ["ids32"], to=TensorProto.INT32),
        helper.make_node("Unsqueeze", ["ids32", "axes"], ["ids_u"]),
        helper.make_node("Gather", ["other", "ids_u"], ["rows_b4"]),
        helper.make_node("Squeeze", ["rows_b4", "axes"], ["rows_b"]),
        helper.make_node("Add", ["rows_a", "rows_b"], ["sum"]),
        helper.make_node("Cast", ["mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["maskf", "last"], ["mask3"]),
        helper.make_node("Mul", ["sum", "mask3"], ["y"]),
    ]
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((rows, 4)).astype(np.float32), "table"),
             numpy_helper.from_array(rng.standard_normal((other_rows, 4)).astype(np.float32), "other"),
             numpy_helper.from_array(np.array([0], np.int64), "axes"),
             numpy_helper.from_array(np.array([-1], np.int64), "last")]
    graph = helper.make_graph(nodes, "lookup",
                              [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 16]),
                               helper.make_tensor_value_info("mask", TensorProto.INT64, [2, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, 4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_an_input_reaching_two_tables_takes_the_smaller_and_a_mask_none():
    assert index_rows(gs.import_onnx(_lookup_model(rows=7, other_rows=40))) == {"ids": 7}
    assert index_rows(gs.import_onnx(_lookup_model(rows=50, other_rows=9))) == {"ids": 9}


def test_random_inputs_draw_distinct_ids_below_the_rows_and_keep_masks_ones():
    conversion = convert(_lookup_model(rows=7), dtype="fp32")
    program = types.ModuleType("index_inputs_program")
    program.__dict__["torch"] = __import__("torch")
    source = conversion.source
    header = source[source.index("INPUTS = {"):source.index("OUTPUTS = ")]
    exec(header, program.__dict__)
    assert program.INDEX_ROWS == {"ids": 7}
    main = source[source.index("def random_inputs("):source.index("class InputError")]
    exec(main, program.__dict__)
    inputs = program.random_inputs()
    ids, mask = inputs["ids"].numpy(), inputs["mask"].numpy()
    assert ids.min() >= 0 and ids.max() < 7 and len(np.unique(ids)) == 7  # 32 draws cover all 7 rows
    assert (mask == 1).all()



def _int8_ids_model():
    """ids int8 [2, 16] -> Cast(int64) -> Gather(DequantizeLinear(table codes [300, 4]))."""
    nodes = [helper.make_node("DequantizeLinear", ["codes", "scale"], ["table"]),
             helper.make_node("Cast", ["ids"], ["ids64"], to=TensorProto.INT64),
             helper.make_node("Gather", ["table", "ids64"], ["y"])]
    inits = [numpy_helper.from_array(np.arange(1200, dtype=np.int64).reshape(300, 4).astype(np.int8), "codes"),
             numpy_helper.from_array(np.array(0.5, np.float32), "scale")]
    graph = helper.make_graph(nodes, "dequantized_lookup", [helper.make_tensor_value_info("ids", TensorProto.INT8, [2, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, 4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_dequantized_table_bounds_its_ids_and_the_input_dtype_bounds_them_too():
    """A QDQ model's table comes out of a DequantizeLinear, not a constant; an int8 input cannot hold 299 (a review
    found both: QDQ models still got ones, int8 ids wrapped to negatives)."""
    import onnx

    model = onnx.shape_inference.infer_shapes(_int8_ids_model())
    assert index_rows(gs.import_onnx(model)) == {"ids": 128}


def test_an_input_of_a_type_numpy_lacks_is_not_an_index():
    """graphsurgeon gives a bfloat16 input's dtype as the ONNX enum value (16); the node test
    test_cast_BFLOAT16_to_FLOAT failed with "Cannot interpret '16' as a data type" when that was taken for numpy's."""
    graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)], "bf16_input",
                              [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    assert index_rows(gs.import_onnx(helper.make_model(graph))) == {}
