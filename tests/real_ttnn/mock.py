"""Run things on the real ttnn 0.81.1 in tt-metal's mock-device mode (tools/ttnn_mock), from the test process.

The real library lives in its own cached environment (tools/ttnn_mock/setup.sh); every run is a separate
process started through that environment's `env.sh`, so the test process never imports the real ttnn.
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools", "ttnn_mock")
RUN_TIMEOUT = 900  # seconds for one program (BERT-sized programs take ~10 s)


class SetupFailed(RuntimeError):
    """tools/ttnn_mock/setup.sh did not produce a usable environment."""


@dataclass
class TTNNMock:
    env_script: str  # the environment's env.sh

    @classmethod
    def prepare(cls) -> "TTNNMock":
        """Run the (idempotent, cached) setup and return a handle on the environment."""
        proc = subprocess.run(["bash", os.path.join(TOOLS, "setup.sh")], capture_output=True, text=True)
        lines = proc.stdout.strip().splitlines()
        env = next((line[4:] for line in lines if line.startswith("ENV=")), None)
        if proc.returncode != 0 or env is None or not os.path.exists(env):
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
            raise SetupFailed(f"tools/ttnn_mock/setup.sh failed (exit {proc.returncode}):\n{tail}")
        return cls(env)

    def _python(self, script: str, args: list[str], tmp_dir: str) -> subprocess.CompletedProcess:
        cmd = f'source "{self.env_script}" && exec "$ONNX2TTNN_TTNN_MOCK_PYTHON" "$@"'
        return subprocess.run(["bash", "-c", cmd, "ttnn-mock", os.path.join(TOOLS, script), *args],
                              capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=tmp_dir)

    def run_program(self, program: str, *, weights: str | None = None, device: str = "n150",
                    inputs: str | None = None) -> dict:
        """Run a generated program once (run_program.py); its JSON report, with 'stderr' added."""
        out = os.path.splitext(program)[0] + f".{device}.json"
        args = [program, "--device", device, "--json", out]
        if weights:
            args += ["--weights", weights]
        if inputs:
            args += ["--inputs", inputs]
        proc = self._python("run_program.py", args, os.path.dirname(program))
        with open(out) as f:
            report = json.load(f)
        report["stderr"] = proc.stderr[-4000:]
        report["returncode"] = proc.returncode
        return report

    def measure_allocations(self, specs: list, tmp_dir: str, device: str = "n150") -> list:
        """alloc_probe.measure on the real allocator, one result per spec."""
        spec_path, out = os.path.join(tmp_dir, "specs.json"), os.path.join(tmp_dir, f"alloc.{device}.json")
        with open(spec_path, "w") as f:
            json.dump(specs, f)
        proc = self._python("alloc_probe.py", [spec_path, out, "--device", device], tmp_dir)
        if proc.returncode != 0:
            raise RuntimeError(f"alloc_probe.py failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        with open(out) as f:
            return json.load(f)


def run_mesh_program(mock: TTNNMock, program: str, device: str, *args: str) -> dict:
    """Run a multi-chip program's own main() on a mock `device` (n300 or t3k: run_mesh.py); its JSON report,
    with the process's 'stderr' and 'returncode' added."""
    out = os.path.splitext(program)[0] + f".{device}.json"
    proc = mock._python("run_mesh.py", [program, "--device", device, "--json", out, *args], os.path.dirname(program))
    report = {"exit": None, "error": "no report written"}
    if os.path.exists(out):
        with open(out) as f:
            report = json.load(f)
    report["stderr"] = proc.stderr[-4000:]
    report["returncode"] = proc.returncode
    return report
