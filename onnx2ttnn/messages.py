"""Text that reaches the user: model-supplied names escaped, foreign messages (ONNX checker, onnxruntime)
made one clean line, and the internal-error line.

A model's names are data: a tensor named "\\x1b[2J" must not clear the terminal that prints an error about
it.  `escape_name` quotes a name with every non-printable character (control characters, ANSI escapes,
bidirectional overrides, lone surrogates) written as its Python escape, as repr() does; `clean_message`
does the same for a whole message but keeps its line breaks, and is applied once more where a message is
printed (cli.py), so a name that reached a message unescaped is still shown as escapes.
"""
from __future__ import annotations

import re

DEBUG_VARIABLE = "ONNX2TTNN_DEBUG"  # set to 1: internal errors raise with their traceback


def escape_name(name) -> str:
    """`name` quoted, with non-printable characters as escapes: escape_name('a\\x1bb') == "'a\\\\x1bb'"."""
    return repr(str(name))


def clean_message(text: str) -> str:
    """`text` with every non-printable character but the line break written as its escape (\\x1b, \\t, \\u202e)."""
    return "".join(ch if ch == "\n" or ch.isprintable() else repr(ch)[1:-1] for ch in str(text))


def one_line(text: str) -> str:
    """A multi-line message (the ONNX checker's, onnxruntime's) joined into one line, whitespace collapsed."""
    return " ".join(str(text).split())


def internal_error_line(exc: BaseException) -> str:
    """What a compiler bug prints instead of a traceback."""
    return (f"internal error: {type(exc).__name__}: {clean_message(one_line(exc))} "
            f"(set {DEBUG_VARIABLE}=1 for the traceback; please report it)")


# onnxruntime's exception text: "[ONNXRuntimeError] : 1 : FAIL : /onnxruntime_src/.../file.h:46 void
# onnxruntime::f(const std::string&, int) <the reason>"; the prefix, source location and C++ signature go.
_ORT_PREFIX = re.compile(r"^\[ONNXRuntimeError\]\s*:\s*\d+\s*:\s*\w+\s*:\s*")
_ORT_LOCATION = re.compile(r"^\S+\.(?:cc|cpp|h|hpp|cu):\d+\s+")
_CPP_SIGNATURE = re.compile(r"^[\w:<>,*& ]*\w::[\w~]+\(")
ORT_REASON_CHARS = 400  # two terminal lines: longer reasons (a whole graph printed) are cut there


def onnxruntime_reason(exc: BaseException) -> str:
    """onnxruntime's message of `exc` as one line of at most ORT_REASON_CHARS characters, without its error
    code prefix, source file location and C++ function signature."""
    text = one_line(exc)
    text = _ORT_PREFIX.sub("", text)
    text = _ORT_LOCATION.sub("", text)
    if _CPP_SIGNATURE.match(text):
        text = _after_balanced_parens(text)
    text = clean_message(text.strip() or type(exc).__name__)
    if len(text) > ORT_REASON_CHARS:
        text = text[:ORT_REASON_CHARS - 3].rstrip() + "..."
    return text


def _after_balanced_parens(text: str) -> str:
    """The text after the parenthesised argument list that starts at the first '(' (and a ' const')."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                rest = text[i + 1:].lstrip()
                return rest[len("const"):].lstrip() if rest.startswith("const ") else rest
    return text
