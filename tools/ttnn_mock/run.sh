#!/usr/bin/env bash
# tools/ttnn_mock/run.sh PROGRAM.py [--weights W.npz] [--inputs I.npz] [--device n150|p150] [--json OUT.json] ...
# Runs a generated program on real ttnn 0.81.1 in mock-device mode (see run_program.py for the contract).
# Needs tools/ttnn_mock/setup.sh to have run once (it is run here if env.sh is missing).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=${ONNX2TTNN_TTNN_MOCK_HOME:-$HOME/.cache/onnx2ttnn/ttnn-mock}
if [ ! -f "$ROOT/env.sh" ] || [ ! -f "$ROOT/.ready" ]; then
  echo "[run.sh] mock ttnn not set up under $ROOT: running setup.sh" >&2
  bash "$HERE/setup.sh" >&2
fi
# shellcheck disable=SC1091
source "$ROOT/env.sh"
exec "$ONNX2TTNN_TTNN_MOCK_PYTHON" "$HERE/run_program.py" "$@"
