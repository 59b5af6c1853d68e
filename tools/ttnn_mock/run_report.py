"""The JSON report of one mock run (tools/ttnn_mock/run_program.py): its state, written at every stage
change so that a process ttnn kills still leaves {"ok": false, "stage": <where it died>}, and the progress
file a supervising parent reads to say which ttnn call and program line the child died in."""
from __future__ import annotations

import json
import os
import sys
import traceback

STATE: dict = {}
JSON_PATH: str | None = None  # set by run_program.main


def write():
    text = json.dumps(STATE, indent=1, default=str)
    if JSON_PATH:
        tmp = JSON_PATH + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, JSON_PATH)
    return text


def enter_stage(name):
    STATE["stage"] = name
    STATE["error"] = f"process died during stage '{name}'"
    if JSON_PATH:
        write()
    PROGRESS.note(name, None, None)


class Progress:
    """Last ttnn call of the program, written with one pwrite per call to a small file, so that the
    supervisor can say where the child died when ttnn kills the process (segfault/abort)."""

    SIZE = 1024

    def __init__(self):
        self.fd = None
        self.program = None
        self.stage = ""

    def open(self, path, program):
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.program = program

    def note(self, stage, op, frame):
        if stage is not None:
            self.stage = stage
        if self.fd is None:
            return
        line = ""
        f = frame
        while f is not None:  # innermost frame of the program file
            if f.f_code.co_filename == self.program:
                line = str(f.f_lineno)
                break
            f = f.f_back
        rec = json.dumps({"stage": self.stage, "ttnn_call": op, "program_line": int(line) if line else None})
        os.pwrite(self.fd, rec.encode()[: self.SIZE - 1].ljust(self.SIZE, b" "), 0)


PROGRESS = Progress()


def finish(ok):
    STATE["ok"] = bool(ok)
    if ok:
        STATE["error"] = None
    text = write()
    if not JSON_PATH:
        sys.stdout.write(text + "\n")
    elif PROGRESS.fd is None:  # supervised children stay quiet: the supervisor reports
        status = "ok" if ok else f"FAILED at {STATE.get('stage')}: {STATE.get('error')}"
        sys.stderr.write(f"[run_program] {status} -> {JSON_PATH}\n")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if ok else 1)


def error_text(exc: BaseException, max_lines: int = 12, max_chars: int = 3000) -> str:
    """The real exception message without the C++ backtrace."""
    s = str(exc)
    for marker in ("backtrace:", "\nLocation:", "\n 1. "):
        k = s.find(marker)
        if k >= 0:
            s = s[:k]
    lines = [ln.rstrip() for ln in s.strip().splitlines() if ln.strip()]
    out = "\n".join(lines[:max_lines])
    return out[:max_chars] if out else type(exc).__name__


def error_location(exc: BaseException, program_path: str):
    """Innermost frame of the generated program in the traceback (file line + source)."""
    loc = None
    for fr in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(fr.filename) == program_path:
            loc = {"line": fr.lineno, "function": fr.name, "code": (fr.line or "").strip()}
    return loc
