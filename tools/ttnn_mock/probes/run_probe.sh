#!/usr/bin/env bash
# bash tools/ttnn_mock/probes/run_probe.sh probe_X.py [--device n150|p150]   -> prints the probe's lines
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=${ONNX2TTNN_TTNN_MOCK_HOME:-$HOME/.cache/onnx2ttnn/ttnn-mock}
[ -f "$ROOT/.ready" ] || bash "$HERE/../setup.sh" >&2
source "$ROOT/env.sh"
P=$1; shift
if [ "${1:-}" = "--device" ]; then export TT_METAL_MOCK_CLUSTER_DESC_PATH=$ROOT/mock/$2.yaml; fi
cd "$ONNX2TTNN_TTNN_MOCK_WORKDIR"
PYTHONPATH=$HERE:$PYTHONPATH timeout "${PROBE_TIMEOUT:-600}" "$ONNX2TTNN_TTNN_MOCK_PYTHON" "$HERE/$P" "$@" 2> "$ONNX2TTNN_TTNN_MOCK_WORKDIR/probe_stderr.log"
