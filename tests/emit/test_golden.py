"""Golden programs: the emitter writes, for each small model under each memory policy, exactly the program
checked in under tests/emit/golden/ (and weights whose sha256 is in tests/emit/golden/weights.sha256).

The cases (MLP, CNN, a one-layer BERT, sharded eltwise chains, a host fallback; auto, dram, l1) are defined
in tests/emit/golden_cases.py. A change in what the emitter writes fails here with a unified diff; when the
change is intended, regenerate the files and commit them with the change, so the diff is reviewed:

    python -m tests.emit.golden_cases --update
"""
from __future__ import annotations

import os
import re

import pytest

from tests.emit import golden_cases
from tests.emit.golden_cases import CASES, KEYS, POLICIES, UPDATE

_BY_NAME = {case.name: case for case in CASES}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> str:
    """Where the built models are saved (the example models stay in models/)."""
    return str(tmp_path_factory.mktemp("golden"))


@pytest.mark.parametrize("key", KEYS)
def test_program_and_weights_match_the_golden_files(key, folder):
    name, policy = key.split("@")
    source, digest = golden_cases.generate(_BY_NAME[name], policy, folder)
    expected = golden_cases.read_golden(key)
    if expected is None:
        pytest.fail(f"no golden file tests/emit/golden/{key}.py; to create it: {UPDATE}")
    if source != expected:
        pytest.fail(f"the emitter's program for {key} differs from its golden file:\n"
                    f"{golden_cases.diff(key, expected, source)}\n"
                    f"If the change is intended, regenerate the golden files and commit them: {UPDATE}")
    recorded = golden_cases.read_weight_hashes().get(key)
    assert digest == recorded, (f"the weights sidecar of {key} has sha256 {digest}, tests/emit/golden/weights.sha256 "
                                f"says {recorded}; if intended: {UPDATE}")


def test_every_golden_file_belongs_to_a_case():
    assert golden_cases.stale_files() == [], f"remove them with: {UPDATE}"
    assert sorted(golden_cases.read_weight_hashes()) == sorted(KEYS)


def test_the_cases_cover_what_they_claim():
    programs = {key: golden_cases.read_golden(key) for key in KEYS}
    shards = programs["shards@auto"]
    assert "ttnn.TensorMemoryLayout.HEIGHT_SHARDED" in shards and "ttnn.TensorMemoryLayout.WIDTH_SHARDED" in shards
    for policy in ("dram", "l1"):  # only auto shards
        assert "_SHARDED" not in programs[f"shards@{policy}"]
    assert "L1" not in programs["mlp@dram"].split("def forward", 1)[1]
    for policy in POLICIES:
        assert "# host fallback: ONNX Trilu" in programs[f"fallback@{policy}"]
        assert "ttnn.conv2d(" in programs[f"cnn@{policy}"]
        bert = programs[f"bert1@{policy}"]  # its attention fused (fusion/attention.py): a [1, 1, 1, s] mask
        assert "ttnn.transformer.split_query_key_value_and_split_heads(" in bert and "ttnn.layer_norm(" in bert
        assert "ttnn.transformer.attention_softmax(" in bert and "ttnn.transformer.concatenate_heads(" in bert


def test_programs_name_their_model_and_weights_relative_to_their_folder():
    for key in KEYS:
        name = key.split("@")[0]
        program = golden_cases.read_golden(key)
        assert f"SOURCE_MODEL = '{name}.onnx'\nWEIGHTS = '{name}_ttnn.npz'\n" in program
        header = program.split("\nimport argparse", 1)[0]
        assert re.search(r"[A-Za-z]:\\|/(tmp|home|work|usr|root)\b", header) is None, header


def test_the_program_text_does_not_depend_on_the_folder(tmp_path):
    sources = []
    for sub in ("a", os.path.join("b", "deeper")):
        os.makedirs(tmp_path / sub)
        sources.append(golden_cases.generate(_BY_NAME["fallback"], "auto", str(tmp_path / sub)))
    assert sources[0] == sources[1]
    assert sources[0][0] == golden_cases.read_golden("fallback@auto")
