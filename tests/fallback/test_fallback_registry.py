"""The host-fallback registry: look-up by schema version, helpers in their host files, no torch in the converter."""
from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from onnx2ttnn.fallback import all_fallbacks, fallback, fallback_op_types, fallback_versions, lookup_fallback
from onnx2ttnn.fallback import registry
from onnx2ttnn.fallback.source import HOST_DIR, helper_names, helper_source

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_lookup_maps_the_opset_to_the_schema_version():
    assert lookup_fallback("", "Hardmax", 11).helper == "host_hardmax_2d"
    assert lookup_fallback("", "Hardmax", 13).helper == "host_hardmax"
    assert lookup_fallback("", "Hardmax", 21).helper == "host_hardmax"
    assert lookup_fallback("", "TopK", 9).helper == "host_topk_k"
    assert lookup_fallback("", "TopK", 11).helper == "host_topk"
    assert lookup_fallback("", "NoSuchOp", 17) is None
    assert lookup_fallback("com.example", "Foo", 1) is None


def test_a_fallback_serves_only_the_versions_it_names():
    assert lookup_fallback("", "OneHot", 9) is None  # OneHot-9 turns negative indices off: not claimed
    assert lookup_fallback("", "OneHot", 11).versions == (11, 28)
    assert fallback_versions("", "ArgMax") == (1, 11, 12, 13)


def test_duplicate_or_unknown_versions_are_an_error(monkeypatch):
    monkeypatch.setattr(registry, "_RULES", {})
    fallback("Det", versions=(11,), helper="host_det")(lambda node: {})
    with pytest.raises(ValueError, match="duplicate host fallback for ai.onnx::Det schema 11"):
        fallback("Det", versions=(11, 22), helper="host_det")(lambda node: {})
    with pytest.raises(ValueError, match="host fallback for ai.onnx::Det claims schema version 13"):
        fallback("Det", versions=(13,), helper="host_det")(lambda node: {})


def test_op_types_list_for_the_support_table():
    types = fallback_op_types()
    assert types == sorted(types)
    for op in ("TopK", "CumSum", "Hardmax", "Det", "ScatterND", "ReduceLogSumExp", "Einsum"):
        assert op in types


def test_every_helper_is_defined_in_its_family_host_file():
    for rule in all_fallbacks():
        assert rule.helper in helper_names(rule.family), (rule.op_type, rule.helper, rule.family)
        compile(helper_source([(rule.family, rule.helper)]), rule.helper, "exec")


def test_helper_source_brings_same_file_dependencies_once():
    text = helper_source([("sorting", "host_topk_k"), ("sorting", "host_topk")])
    assert text.count("def host_topk(") == 1 and "def host_topk_k(" in text
    assert "def host_trilu(" not in text  # only what is used


def test_host_function_names_are_unique_across_files():
    """Programs paste helpers of several files side by side: a name may be defined only once."""
    seen = {}
    for name in sorted(os.listdir(HOST_DIR)):
        if not name.endswith(".py") or name == "__init__.py":
            continue
        for fn in helper_names(name[:-3]):
            assert fn not in seen, f"{fn} defined in {seen.get(fn)} and {name}"
            seen[fn] = name


def test_host_files_use_only_torch():
    for name in sorted(os.listdir(HOST_DIR)):
        if not name.endswith(".py") or name == "__init__.py":
            continue
        tree = ast.parse(open(os.path.join(HOST_DIR, name)).read())
        imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
        assert all(isinstance(i, ast.Import) and [a.name for a in i.names] == ["torch"] for i in imports), name


def test_converting_a_fallback_model_does_not_import_torch(tmp_path):
    code = (
        "import sys\n"
        "from onnx import TensorProto, helper\n"
        "from onnx2ttnn import convert\n"
        "x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 8])\n"
        "y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 8])\n"
        "g = helper.make_graph([helper.make_node('Hardmax', ['x'], ['y'])], 'g', [x], [y])\n"
        "c = convert(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]))\n"
        "assert c.fallback_counts() == {'Hardmax': 1}, c.fallback_counts()\n"
        "assert 'torch' not in sys.modules, 'the converter imported torch'\n"
    )
    env = dict(os.environ, PYTHONPATH=REPO)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
