"""The writer side of test_publish_kill: convert two models once, then write their files over each other in
forked children, killing each with SIGKILL at a random point of its write; print what was on disk after
every kill as JSON.

    python -m tests.emit.kill_writes FOLDER MODEL_A MODEL_B KILLS SEED

Each write is `Conversion.write(FOLDER/m.py, ir_path=FOLDER/m_ir.onnx)`, the call `onnx2ttnn convert` makes
(the .npz is built and the three files published). The conversion runs once per model in this process; each
write is a fork of it, so the 20 writes cost 20 writes, not 20 conversions. The kill delays are uniform over
[0, the slower of two uninterrupted writes) from `random.Random(SEED)`.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import sys
import time

import onnx2ttnn


def files(folder: str) -> dict[str, str]:
    """name -> sha256 of every file in `folder` (hidden ones included)."""
    found = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as handle:
            found[name] = hashlib.sha256(handle.read()).hexdigest()
    return found


MIN_MID_WRITE = 3  # kills that must land inside a write for the run to prove anything


def main(folder: str, model_a: str, model_b: str, kills: int, seed: int) -> dict:
    program, ir = os.path.join(folder, "m.py"), os.path.join(folder, "m_ir.onnx")
    conversions = {"A": onnx2ttnn.convert(model_a, program), "B": onnx2ttnn.convert(model_b, program)}

    def start(label: str) -> int:
        pid = os.fork()
        if pid == 0:  # the child: one write, then exit without running the parent's clean-up
            try:
                conversions[label].write(program, ir_path=ir)
            except BaseException:  # noqa: BLE001 - report through the exit code
                os._exit(1)
            os._exit(0)
        return pid

    sets, durations = {}, []
    for label in ("B", "A"):  # the old set is A
        begin = time.perf_counter()
        _, status = os.waitpid(start(label), 0)
        durations.append(time.perf_counter() - begin)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"the write of {label} failed"
        sets[label] = files(folder)
    rng = random.Random(seed)
    state, kills_seen, mid_write = "A", [], 0
    # `kills` kills, and more (up to 4x) until MIN_MID_WRITE of them cut a write after its first temporary file:
    # on a loaded machine most random delays can land before or after the files are written
    while len(kills_seen) < kills or (mid_write < MIN_MID_WRITE and len(kills_seen) < 4 * kills):
        target = "B" if state == "A" else "A"
        delay = rng.uniform(0.0, max(durations))
        pid = start(target)
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        on_disk = files(folder)
        kills_seen.append({"delay": delay, "from": state, "to": target, "files": on_disk,
                           "killed": os.WIFSIGNALED(status)})
        mid_write += any(k.startswith(".") for k in on_disk)
        visible = {k: v for k, v in on_disk.items() if not k.startswith(".")}
        state = next((label for label, got in sets.items() if got == visible), "mix")
        if state == "mix":
            break
    final = None
    if state != "mix":
        _, status = os.waitpid(start("B" if state == "A" else "A"), 0)
        final = {"files": files(folder), "ok": os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0}
    return {"sets": sets, "durations": durations, "kills": kills_seen, "final": final}


if __name__ == "__main__":
    folder, a, b, count, seed = sys.argv[1:6]
    print(json.dumps(main(folder, a, b, int(count), int(seed))))
