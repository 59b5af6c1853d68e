"""The fuzz campaign: `python -m tests.fuzz.campaign --seed 0 --count 2000 [--save DIR] [--only KIND]`.

Case i of a seed is fully determined by (seed, i): even cases are mutants (tests/fuzz/mutate.py) of a seed
model (models/mlp.onnx, models/cnn.onnx, or a freshly generated graph), odd cases are generated graphs
(tests/fuzz/generate.py).  Each case is run by tests/fuzz/oracle.py, in a child process that is killed and
restarted when a case outlives its time (tests/fuzz/worker.py); the campaign prints the count of every
outcome, how onnxruntime judged the models convert accepted and refused, every finding (a defect) with
the command that reruns it, and the cases onnxruntime's reference did not finish ("ort-timeout").  `--save DIR` writes each finding's model as DIR/case_<seed>_<i>.onnx.
Exit status 1 when there is a finding.  tests/test_fuzz.py runs a bounded campaign in the test run.
"""
from __future__ import annotations

import argparse
import importlib
import os
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

import onnx

from tests.fuzz.generate import generate
from tests.fuzz.mutate import mutate
from tests.fuzz.oracle import Outcome
from tests.fuzz.worker import KILL_SECONDS, MAKE_CASE, CaseRunner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED_MODELS = ("mlp.onnx", "cnn.onnx")


@lru_cache(maxsize=None)
def _seed_model(name: str) -> onnx.ModelProto:
    return onnx.load(os.path.join(ROOT, "models", name))


def make_case(seed: int, index: int) -> tuple[Optional[onnx.ModelProto], str]:
    """(the model of case `index`, how it was made); None when no checker-valid mutant was found."""
    rng = random.Random(f"{seed}:{index}")
    if index % 2:
        return generate(rng), "generated"
    choice = rng.randrange(4)
    if choice < len(SEED_MODELS):
        base, origin = _seed_model(SEED_MODELS[choice]), SEED_MODELS[choice]
    else:
        base, origin = generate(rng), "generated"
    mutant, edits = mutate(base, rng)
    return mutant, f"mutant of {origin} ({', '.join(edits)})"


@dataclass
class Summary:
    seed: int
    count: int
    outcomes: Counter = field(default_factory=Counter)
    ort_vs_convert: Counter = field(default_factory=Counter)  # (onnxruntime's verdict, convert's) -> count
    findings: list = field(default_factory=list)  # (index, origin, Outcome)
    valid_refusals: Counter = field(default_factory=Counter)  # convert's reason -> models onnxruntime runs
    unjudged: list = field(default_factory=list)  # (index, origin, Outcome): onnxruntime's reference did not end
    restarts: int = 0  # case processes killed (a case outlived its time) or dead
    seconds: float = 0.0

    def text(self) -> str:
        lines = [f"fuzz campaign seed {self.seed}, {self.count} cases, {self.seconds:.0f} s"]
        lines += [f"  {kind:18} {n}" for kind, n in sorted(self.outcomes.items())]
        lines.append("  onnxruntime vs convert:")
        lines += [f"    {o:12} -> {c:9} {n}" for (o, c), n in sorted(self.ort_vs_convert.items())]
        if self.valid_refusals:
            lines.append("  convert's reasons for refusing models onnxruntime runs (unsupported variants):")
            lines += [f"    {n:4} {reason}" for reason, n in self.valid_refusals.most_common(15)]
        if self.restarts:
            lines.append(f"  case process restarts: {self.restarts}")
        if self.unjudged:
            lines.append(f"not judged, onnxruntime's reference did not end: {len(self.unjudged)}")
            lines += [f"  case {index} {origin}: {outcome.detail[:200]}\n"
                      f"    rerun: python -m tests.fuzz.campaign --seed {self.seed} --only {index}"
                      for index, origin, outcome in self.unjudged]
        lines.append(f"findings: {len(self.findings)}")
        for index, origin, outcome in self.findings:
            lines.append(f"  case {index} [{outcome.kind}] {origin}: {outcome.detail[:400]}"
                         + (f" | onnxruntime: {outcome.ort[:200]}" if outcome.ort and outcome.ort != "ok" else ""))
            lines.append(f"    rerun: python -m tests.fuzz.campaign --seed {self.seed} --only {index}")
        return "\n".join(lines)


def _verdict(ort: str) -> str:
    return "refuses" if ort.startswith("refused") else "run fails" if ort.startswith("run fails") else \
        "runs" if ort == "ok" else "times out" if ort.startswith("timeout") else "not run"


def _converted(outcome: Outcome) -> str:
    """Convert's verdict on the case: accepts, refuses, or how it failed."""
    if outcome.kind in ("refused", "internal", "traceback", "timeout", "crash"):
        return "refuses" if outcome.kind == "refused" else outcome.kind
    return "not run" if outcome.kind == "ort-timeout" and not outcome.detail.startswith("converted") else "accepts"


def _reason(detail: str) -> str:
    """A refusal's message without the names and numbers that make each one unique."""
    text = re.sub(r"'[^']*'", "'.'", detail)
    return re.sub(r"\d+", "N", text)[:150]


def run(seed: int, count: int, only: Optional[list[int]] = None, save: Optional[str] = None,
        progress: bool = False, make: str = MAKE_CASE, seconds: float = KILL_SECONDS) -> Summary:
    """The cases of `seed` (range(count), or `only`), each made by `make` ("module:function" of (seed, index) ->
    (model or None, origin)) and run in the case process (tests/fuzz/worker.py), killed past `seconds`."""
    indices = only if only is not None else range(count)
    summary = Summary(seed, len(indices))
    start = time.perf_counter()
    with CaseRunner(make, seconds) as runner:
        for n, index in enumerate(indices):
            origin, outcome = runner.run(seed, index)
            _record(summary, index, origin, outcome, save, make)
            if progress and (n + 1) % 100 == 0:
                print(f"  {n + 1} cases, {len(summary.findings)} findings, {time.perf_counter() - start:.0f} s",
                      file=sys.stderr, flush=True)
        summary.restarts = runner.restarts
    summary.seconds = time.perf_counter() - start
    return summary


def _record(summary: Summary, index: int, origin: str, outcome: Optional[Outcome], save: Optional[str],
            make: str) -> None:
    """Counts one case's outcome in `summary`; a finding's model is written into `save`."""
    if outcome is None:
        summary.outcomes["no valid mutant"] += 1
        return
    summary.outcomes[outcome.kind] += 1
    summary.ort_vs_convert[(_verdict(outcome.ort), _converted(outcome))] += 1
    if outcome.kind == "refused" and outcome.ort == "ok":
        summary.valid_refusals[_reason(outcome.detail)] += 1
    if outcome.kind == "ort-timeout":
        summary.unjudged.append((index, origin, outcome))
    if outcome.finding:
        summary.findings.append((index, origin, outcome))
        if save:  # (the model made again: a case is fully determined by (seed, index))
            module, name = make.split(":")
            model, _ = getattr(importlib.import_module(module), name)(summary.seed, index)
            os.makedirs(save, exist_ok=True)
            onnx.save(model, os.path.join(save, f"case_{summary.seed}_{index}.onnx"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--only", type=int, action="append", help="run only case INDEX (repeatable)")
    parser.add_argument("--save", help="write every finding's model into this folder")
    args = parser.parse_args(argv)
    os.environ.setdefault("ONNX2TTNN_VERIFY_EACH", "1")  # as in the test run: the IR checked after every pass
    summary = run(args.seed, args.count, args.only, args.save, progress=True)
    print(summary.text())
    return 1 if summary.findings else 0


if __name__ == "__main__":
    sys.exit(main())
