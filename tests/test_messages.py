"""onnx2ttnn/messages.py: names escaped, foreign messages made one clean line, the internal-error line."""
from __future__ import annotations

import pytest

from onnx2ttnn.messages import clean_message, escape_name, internal_error_line, one_line, onnxruntime_reason

ANSI = "\x1b[2J\x1b[31mred"  # clear screen, then red


@pytest.mark.parametrize("name,shown", [
    (ANSI, "'\\x1b[2J\\x1b[31mred'"),
    ("a\nb\tc", "'a\\nb\\tc'"),
    ("\u202egnp.exe", "'\\u202egnp.exe'"),  # a right-to-left override
    ("\x9b31m", "'\\x9b31m'"),  # the one-byte CSI of C1
    ("\udcff", "'\\udcff'"),  # a lone surrogate (invalid UTF-8 decoded with surrogateescape)
    ("名前", "'名前'"),  # printable non-ASCII stays as it is
])
def test_escape_name_shows_every_non_printable_character_as_its_escape(name, shown):
    assert escape_name(name) == shown
    assert all(ch.isprintable() for ch in escape_name(name))


def test_clean_message_keeps_line_breaks_only():
    text = f"first {ANSI}\n  second\tline\r"
    assert clean_message(text) == "first \\x1b[2J\\x1b[31mred\n  second\\tline\\r"
    assert "\x1b" not in clean_message(text)


def test_one_line_joins_a_multi_line_message():
    checker = ("Nodes in a graph must be topologically sorted, however input 'ghost' of node: \n"
               "name: r0 OpType: Relu\n is not output of any previous nodes.")
    assert one_line(checker) == ("Nodes in a graph must be topologically sorted, however input 'ghost' of node: "
                                 "name: r0 OpType: Relu is not output of any previous nodes.")


@pytest.mark.parametrize("raw,reason", [
    ("[ONNXRuntimeError] : 1 : FAIL : /onnxruntime_src/onnxruntime/core/graph/model_load_utils.h:46 void "
     "onnxruntime::model_load_utils::ValidateOpsetForDomain(const std::unordered_map<std::__cxx11::basic_string"
     "<char>, int>&, const onnxruntime::logging::Logger&, bool, const std::string&, int) ONNX Runtime only "
     "*guarantees* support for models stamped with official released onnx opset versions.",
     "ONNX Runtime only *guarantees* support for models stamped with official released onnx opset versions."),
    ("[ONNXRuntimeError] : 1 : FAIL : Type Error: Type (tensor(int64)) of output arg (y) of node () does not match "
     "expected type (tensor(float)).",
     "Type Error: Type (tensor(int64)) of output arg (y) of node () does not match expected type (tensor(float))."),
    ("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Non-zero status code returned while running Gather node. "
     "Name:'g0' Status Message: indices element out of data bounds, idx=50 must be within the inclusive range [-4,3]",
     "Non-zero status code returned while running Gather node. Name:'g0' Status Message: indices element out of "
     "data bounds, idx=50 must be within the inclusive range [-4,3]"),
])
def test_onnxruntime_reason_drops_code_location_and_signature(raw, reason):
    assert onnxruntime_reason(RuntimeError(raw)) == reason


def test_onnxruntime_reason_is_at_most_two_lines_and_escaped():
    reason = onnxruntime_reason(RuntimeError("[ONNXRuntimeError] : 1 : FAIL : " + ANSI + " x" * 1000))
    assert len(reason) <= 400 and reason.endswith("...")
    assert reason.startswith("\\x1b[2J")


def test_internal_error_line():
    line = internal_error_line(KeyError(f"boom {ANSI}\nmore"))
    assert line.startswith("internal error: KeyError: ")
    assert "\n" not in line and "\x1b" not in line and "\\x1b[2J" in line
    assert line.endswith("(set ONNX2TTNN_DEBUG=1 for the traceback; please report it)")
