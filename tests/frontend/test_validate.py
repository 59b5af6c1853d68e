"""validate: validate_model runs each op family's checks on the nodes of the main graph and refuses the first
node one refuses, naming it (by its name, else by op type and index)."""
from __future__ import annotations

import numpy as np

from onnx2ttnn.frontend import validate_operands, validate_windows
from tests.frontend._validate_models import parsed, rejected

GATHERS = """
<ir_version: 8, opset_import: ["" : 18]>
g (float[4, 3] x) => (float y) {
    a = Gather<axis = 0>(x, i)
    y = Gather<axis = 0>(a, j)
}
"""


def test_the_first_refused_node_is_named_by_its_name_or_by_op_type_and_index():
    model = parsed(GATHERS, i=np.array([1, 2], np.int64), j=np.array([9], np.int64))
    assert rejected(model) == ("invalid model: node 'Gather_1' (Gather): index 9 is out of range for axis 0 of "
                               "size 2 (valid: -2 to 1)")
    model.graph.node[1].name = "second"
    assert rejected(model).startswith("invalid model: node 'second' (Gather): index 9")
    model = parsed(GATHERS, i=np.array([7], np.int64), j=np.array([9], np.int64))
    assert rejected(model).startswith("invalid model: node 'Gather_0' (Gather): index 7")


def test_no_op_type_is_checked_by_two_families():
    assert not validate_operands.CHECKS.keys() & validate_windows.CHECKS.keys()
