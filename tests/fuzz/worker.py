"""The fuzz campaign's cases, run in one child process that is killed and restarted when a case outlives its time.

The oracle's alarm (oracle.CASE_SECONDS) interrupts Python code only: a C++ call that never returns (fuzz seed
163 case 1008: onnxruntime's run of a Loop of 2^30 iterations) outlives it, and a crash of the process (seed 157
case 380: a segmentation fault in onnx's shape inference) ended the whole campaign.  So `CaseRunner` runs the
cases in a child process, spawned once and warmed up on a one-node case (onnx, onnxruntime, torch and the
converter's passes imported once, not per case).  For each case the child makes the model (`make`, by default
campaign.make_case), says what it is and which phase the oracle is in ("reference": onnxruntime, "convert",
"program": the simulator), then sends the Outcome.  A case still running `seconds` after it was sent costs the
child its life: the parent kills it, starts a new one for the next case, and judges the case by its phase:
- "ort-timeout" (not a finding) when onnxruntime's reference was running: there is nothing to compare with
  (the oracle stops its reference at oracle.REFERENCE_SECONDS itself, then still converts the model; this is
  for a run its deadline cannot stop);
- "timeout" (a finding) in any other phase: the converter or the program did not end;
- "crash" (a finding) when the child died on its own (its exit code or signal, and the phase).
"""
from __future__ import annotations

import importlib
import multiprocessing
import time
import traceback
from typing import Callable, Optional

import numpy as np

from tests.fuzz.oracle import CASE_SECONDS, Outcome

MAKE_CASE = "tests.fuzz.campaign:make_case"
KILL_SECONDS = CASE_SECONDS + 30  # the oracle's alarm ends a case stuck in Python first, without a restart
START_SECONDS = 600  # a child's start and warm-up (the machine is shared: minutes are possible, never hours)


def _load(path: str) -> Callable:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def _warm_up() -> None:
    """One small case through the oracle, so that a case's time is not the child's imports."""
    from onnx import TensorProto, helper

    from tests.fuzz.oracle import run_case

    value = helper.make_tensor_value_info
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "warm_up",
                              [value("x", TensorProto.FLOAT, [2, 3])], [value("y", TensorProto.FLOAT, [2, 3])])
    run_case(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), np.random.default_rng(0))


def _serve(conn, make_path: str) -> None:
    """The child: warm up, then for each (seed, index) received send ("case", origin), the oracle's
    ("phase", name) messages and ("done", outcome); None ends it."""
    from tests.fuzz import oracle

    make = _load(make_path)
    _warm_up()
    oracle.on_phase = lambda name: conn.send(("phase", name))
    conn.send(("ready",))
    while True:
        job = conn.recv()
        if job is None:
            return
        seed, index = job
        try:
            conn.send(("phase", "make"))
            model, origin = make(seed, index)
            conn.send(("case", origin))
            outcome = None if model is None else oracle.run_case(model, np.random.default_rng([seed, index]))
        except Exception:  # noqa: BLE001 - a failure of the fuzzer itself: reported, the child lives on
            outcome = Outcome("crash", "the fuzzer failed: " + traceback.format_exc()[-600:])
        conn.send(("done", outcome))


class CaseRunner:
    """Runs case (seed, index) in the child: `run` gives (origin, Outcome or None for no valid mutant)."""

    def __init__(self, make: str = MAKE_CASE, seconds: float = KILL_SECONDS) -> None:
        self.make, self.seconds = make, seconds
        self.context = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked onnxruntime threads
        self.process, self.conn = None, None
        self.restarts = 0  # children killed for a case that outlived its time, or that died

    def __enter__(self) -> "CaseRunner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Ends the child (asked first, killed when it does not go)."""
        if self.process is None:
            return
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()
        self.process, self.conn = None, None

    def run(self, seed: int, index: int) -> tuple[str, Optional[Outcome]]:
        self._start()
        self.conn.send((seed, index))
        deadline = time.monotonic() + self.seconds
        origin, phase = "", "make"
        while True:
            message = self._receive(deadline - time.monotonic())
            if message is None or message[0] == "died":
                return origin, self._stop(phase)
            if message[0] == "phase":
                phase = message[1]
            elif message[0] == "case":
                origin = message[1]
            else:
                return origin, message[1]

    def _start(self) -> None:
        """A child, ready for its first case (the one running, or a new one)."""
        if self.process is not None:
            return
        parent, child = self.context.Pipe()
        self.process = self.context.Process(target=_serve, args=(child, self.make), daemon=True)
        self.process.start()
        child.close()
        self.conn = parent
        if self._receive(START_SECONDS) != ("ready",):
            raise RuntimeError(f"the fuzz case runner did not start: {self._stop('start').detail}")

    def _receive(self, seconds: float):
        """The child's next message; ("died",) when it died, None when nothing came within `seconds`."""
        try:
            if seconds > 0 and self.conn.poll(seconds):
                return self.conn.recv()
        except (EOFError, OSError):
            self.process.join(5)  # (its pipe closes as it exits)
            return ("died",)
        return None

    def _stop(self, phase: str) -> Outcome:
        """Ends a child that outlived its case or died, and says how the case ended."""
        alive = self.process.is_alive()
        if alive:
            self.process.kill()
        self.process.join()
        code = self.process.exitcode
        self.conn.close()
        self.process, self.conn = None, None
        self.restarts += 1
        if not alive:
            how = f"signal {-code}" if code < 0 else f"exit code {code}"
            return Outcome("crash", f"the case's process died in phase {phase!r}: {how}")
        if phase == "reference":
            return Outcome("ort-timeout", f"onnxruntime's reference did not end in {self.seconds:g} s (its process "
                                          "was killed; the model was not converted)", "timeout")
        return Outcome("timeout", f"over {self.seconds:g} s in phase {phase!r} (its process was killed)")
