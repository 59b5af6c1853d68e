#!/usr/bin/env bash
# tools/ttnn_mock/setup.sh -- prepare the REAL ttnn 0.81.1 (PyPI wheel) in tt-metal's mock-device mode
# (no Tenstorrent hardware): every op call, memory config, shard spec and L1/DRAM allocation is validated
# as on a device; values read back are zeros.
#
# Usage:  bash tools/ttnn_mock/setup.sh [--check] [--force-check]
#   --check        also open/close a mock device once (always done after a step changed something)
# Env:    ONNX2TTNN_TTNN_MOCK_HOME  root of the cached environment (default ~/.cache/onnx2ttnn/ttnn-mock)
#         PYTHON                    interpreter for the venv (default python3.11, else python3)
# Output: last two lines are  ENV=<root>/env.sh  and  PYTHON=<venv python>
#
# Layout of the root:
#   wheels/   ttnn (and torch, when fetched) wheels      pkg/  unpacked ttnn wheel (Python 3.11 only)
#   venv/     python env (numpy<2, torch==2.13.0 CPU, ttnn deps)
#   mock/     n150.yaml, p150.yaml, n300.yaml, t3k.yaml cluster descriptors, stub.s      cache/  TT_METAL_CACHE (JIT build cache)
#   work/     CWD for runs (tt-metal writes ./generated/ there)      env.sh
#
# Why each piece (see docs/ttnn-facts.md):
#  * ttnn 0.81.1 is published for cp310/cp312 only. On 3.10/3.12 we `pip install ttnn==0.81.1`. On 3.11 the
#    cp310 wheel is unzipped and _ttnn.cpython-310-*.so copied to the cp311 name: ops work, but CPython
#    segfaults at interpreter exit, so every process that used ttnn must end with os._exit(status).
#  * tt-metal JIT-builds firmware/kernels even in mock mode and parses the ELFs. The SFPI compiler is
#    normally downloaded from GitHub (not reachable), so a stand-in riscv-tt-elf-g++ links a 3-instruction
#    rv32 stub with the real TT linker scripts, using Debian's binutils-riscv64-unknown-elf.
#  * torch==2.13.0 must be the CPU build. PyPI's Linux x86_64 torch 2.13.0 is the CUDA build (~3 GB of
#    nvidia-* wheels), so a local +cpu wheel (/opt/wheels or $TORCH_WHEEL_DIR) is preferred.
set -euo pipefail

ROOT=${ONNX2TTNN_TTNN_MOCK_HOME:-$HOME/.cache/onnx2ttnn/ttnn-mock}
TTNN_VERSION=0.81.1
TORCH_VERSION=2.13.0
TORCH_WHEEL_DIRS=${TORCH_WHEEL_DIR:-/opt/wheels}
DO_CHECK=0
for a in "$@"; do
  case "$a" in
    --check|--force-check) DO_CHECK=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done

T0=${EPOCHREALTIME/,/.}
log() { local now=${EPOCHREALTIME/,/.}; printf '[ttnn-mock setup +%ss] %s\n' "$(awk -v a="$now" -v b="$T0" 'BEGIN{printf "%.1f", a-b}')" "$*"; }
die() { echo "[ttnn-mock setup] ERROR: $*" >&2; exit 1; }
trap 'rc=$?; if [ $rc -ne 0 ]; then echo "[ttnn-mock setup] FAILED (exit $rc) at line $LINENO: $BASH_COMMAND" >&2; fi' EXIT

CHANGED=0
mkdir -p "$ROOT"/{wheels,mock,cache,work}

# ---------------------------------------------------------------- interpreter
if [ -z "${PYTHON:-}" ]; then
  if command -v python3.11 >/dev/null 2>&1 && python3.11 -c '' >/dev/null 2>&1; then PYTHON=python3.11
  else PYTHON=python3; fi
fi
PYVER=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || die "cannot run $PYTHON"
case "$PYVER" in
  3.10|3.12) MODE=pip ;;
  3.11) MODE=unzip ;;
  *) die "Python $PYVER: ttnn $TTNN_VERSION needs CPython 3.10, 3.11 (via rename) or 3.12" ;;
esac
PYTAG=cp${PYVER/./}
VENV=$ROOT/venv-$PYVER
VPY=$VENV/bin/python

# ---------------------------------------------------------------- 1. RISC-V binutils (Debian)
if ! command -v riscv64-unknown-elf-ld >/dev/null 2>&1 || ! command -v riscv64-unknown-elf-as >/dev/null 2>&1; then
  log "apt-get install binutils-riscv64-unknown-elf"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq binutils-riscv64-unknown-elf >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq binutils-riscv64-unknown-elf
  fi
  command -v riscv64-unknown-elf-ld >/dev/null || die "riscv64-unknown-elf-ld still missing"
  CHANGED=1
fi

# ---------------------------------------------------------------- 2. venv
if [ ! -x "$VPY" ]; then
  log "creating venv $VENV ($PYTHON, $PYVER)"
  "$PYTHON" -m venv "$VENV"
  CHANGED=1
fi
PIP=("$VPY" -m pip --disable-pip-version-check -q)

# ---------------------------------------------------------------- 3. ttnn itself
if [ "$MODE" = unzip ]; then
  WHL=$ROOT/wheels/ttnn-$TTNN_VERSION-cp310-cp310-manylinux_2_34_x86_64.whl
  PKG_ROOT=$ROOT/pkg
  if [ ! -f "$WHL" ]; then
    log "downloading ttnn $TTNN_VERSION (cp310 wheel, ~100 MB) from PyPI"
    "${PIP[@]}" download "ttnn==$TTNN_VERSION" --no-deps --only-binary=:all: --python-version 3.10 \
      --implementation cp --abi cp310 --platform manylinux_2_34_x86_64 -d "$ROOT/wheels" \
      2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
    [ -f "$WHL" ] || die "ttnn wheel not downloaded: expected $WHL"
    CHANGED=1
  fi
  if [ ! -f "$PKG_ROOT/.unpacked" ]; then
    log "unpacking wheel into $PKG_ROOT"
    rm -rf "$PKG_ROOT"; mkdir -p "$PKG_ROOT"
    "$VPY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$WHL" "$PKG_ROOT"
    touch "$PKG_ROOT/.unpacked"
    CHANGED=1
  fi
  SO310=$PKG_ROOT/ttnn/_ttnn.cpython-310-x86_64-linux-gnu.so
  SO311=$PKG_ROOT/ttnn/_ttnn.cpython-311-x86_64-linux-gnu.so
  [ -f "$SO310" ] || die "missing $SO310 in the unpacked wheel"
  if [ ! -f "$SO311" ] || [ "$(stat -c %s "$SO310")" != "$(stat -c %s "$SO311")" ]; then
    cp -f "$SO310" "$SO311"; CHANGED=1
  fi
  TTNN_PYPATH=$PKG_ROOT
  TT_HOME=$PKG_ROOT/ttnn
else
  if ! "$VPY" -c "import importlib.metadata as m, sys; sys.exit(m.version('ttnn') != '$TTNN_VERSION')" 2>/dev/null; then
    log "pip install ttnn==$TTNN_VERSION"
    "${PIP[@]}" install "ttnn==$TTNN_VERSION" "numpy<2,>=1.24.4" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
    CHANGED=1
  fi
  TTNN_PYPATH=""
  TT_HOME=$("$VPY" -c 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("ttnn").origin))')
  # the wheel's package dir is site-packages/ttnn holding ttnn/ and tt_metal/ (same as the unzip layout)
fi

# ---------------------------------------------------------------- 4+5. python deps and torch==2.13.0 (CPU build)
# Checked through installed metadata (fast: no imports). One pip call installs whatever is missing.
MISSING=$("$VPY" - "$TORCH_VERSION" <<'PY'
import sys, importlib.metadata as md
torch_v = sys.argv[1]
want = {"numpy": lambda v: v.split(".")[0] == "1", "loguru": None, "networkx": None, "graphviz": None,
        "PyYAML": None, "click": None, "pandas": lambda v: v.split(".")[0] == "2", "seaborn": None,
        "ml_dtypes": None, "onnxruntime": None, "torch": lambda v: v.split("+")[0] == torch_v}
out = []
for name, ok in want.items():
    try:
        v = md.version(name)
    except md.PackageNotFoundError:
        out.append(name); continue
    if ok is not None and not ok(v):
        out.append(name)
print(" ".join(out))
PY
)
if [ -n "$MISSING" ]; then
  REQS=("numpy<2,>=1.24.4" "loguru>=0.6.0" "networkx>=3.1" "graphviz>=0.20.3" "pyyaml>=5.4" "click>=8.1.7"
        "pandas>=2.0.3,<3" "seaborn>=0.13.2" ml_dtypes
        "onnxruntime>=1.18")  # programs with host regions run them with onnxruntime
  case " $MISSING " in
    *" torch "*)
      TORCH_WHL=""
      for dir in $TORCH_WHEEL_DIRS "$ROOT/wheels"; do
        for f in "$dir"/torch-$TORCH_VERSION+cpu-$PYTAG-$PYTAG-*linux*_x86_64.whl; do
          [ -f "$f" ] && { TORCH_WHL=$f; break 2; }
        done
      done
      if [ -n "$TORCH_WHL" ]; then
        REQS+=("$TORCH_WHL")
      else
        echo "[ttnn-mock setup] WARNING: no local torch-$TORCH_VERSION+cpu $PYTAG wheel (looked in: $TORCH_WHEEL_DIRS $ROOT/wheels)." >&2
        echo "[ttnn-mock setup] WARNING: PyPI's torch==$TORCH_VERSION for Linux x86_64 is the CUDA build (+~3 GB of nvidia-* wheels); installing it anyway." >&2
        REQS+=("torch==$TORCH_VERSION")
      fi ;;
  esac
  log "pip install (missing: $MISSING): ${REQS[*]}"
  # this machine's pip config lists index folders that do not exist for most names: hide that noise
  "${PIP[@]}" install "${REQS[@]}" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
  "$VPY" -c "import torch, numpy; assert torch.__version__.split('+')[0] == '$TORCH_VERSION', torch.__version__" \
    || die "torch $TORCH_VERSION not importable in $VENV"
  CHANGED=1
fi

# ---------------------------------------------------------------- 6. mock cluster descriptors
# n150: one wormhole_b0 chip; harvest_mask with exactly one bit (1 harvested Tensix row -> 8x8 compute grid);
# board_id encodes UPI 0x18 (n150) in bits 36..55, otherwise UMD warns.
write_if_changed() {  # write_if_changed FILE  (content on stdin)
  local tmp; tmp=$(mktemp)
  cat > "$tmp"
  if [ -f "$1" ] && cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; chmod a+r "$1"; CHANGED=1; fi
}
write_if_changed "$ROOT/mock/n150.yaml" <<'EOF'
arch:
  0: wormhole_b0
chips:
  0:
    - 0
    - 0
    - 0
    - 0
chip_unique_ids:
  0: 10226774059
ethernet_connections:
  []
ethernet_connections_to_remote_devices:
  []
chips_with_mmio:
  - 0: 0
harvesting:
  0:
    noc_translation: true
    harvest_mask: 32
    dram_harvesting_mask: 0
    eth_harvesting_mask: 0
    pcie_harvesting_mask: 0
chip_to_boardtype:
  0: n150
boards:
  -
    - board_id: 72059269369835563
    - board_type: n150
    - chips:
        - 0
EOF
# p150: one blackhole chip, board_id UPI 0x40 (p150a). UMD insists: PCIe core (11,0) harvested
# (pcie_harvesting_mask 2) and exactly 2 of 14 ETH cores harvested (eth_harvesting_mask 3). Tensix
# harvest_mask 0 -> compute grid 13x10 (130 L1 banks of 1,444,736 B), 8 DRAM banks of 4,277,141,376 B.
write_if_changed "$ROOT/mock/p150.yaml" <<'EOF'
arch:
  0: blackhole
chips:
  0:
    - 0
    - 0
    - 0
    - 0
chip_unique_ids:
  0: 10226774060
ethernet_connections:
  []
ethernet_connections_to_remote_devices:
  []
chips_with_mmio:
  - 0: 0
harvesting:
  0:
    noc_translation: true
    harvest_mask: 0
    dram_harvesting_mask: 0
    eth_harvesting_mask: 3
    pcie_harvesting_mask: 2
chip_to_boardtype:
  0: p150
boards:
  -
    - board_id: 72062018148905003
    - board_type: p150
    - chips:
        - 0
EOF

# n300 (2 chips) and T3000 (8 chips): written by cluster_desc.py (topology and why there)
DESC_OUT=$(python3 "$(dirname "$0")/cluster_desc.py" "$ROOT/mock") || die "cluster_desc.py failed"
case "$DESC_OUT" in *CHANGED=0*) ;; *) CHANGED=1 ;; esac

# ---------------------------------------------------------------- 7. stand-in SFPI compiler
BIN=$TT_HOME/runtime/sfpi/compiler/bin
mkdir -p "$BIN"
write_if_changed "$ROOT/mock/stub.s" <<'EOF'
    .option norelax
    .section .start,"ax",@progbits
    .globl _start
    .type _start, @function
_start:
    jal x0, main            # cross-section jump -> keeps an R_RISCV_JAL reloc (.rela.* needed by XIPify)
    .size _start, .-_start
    .section .text,"ax",@progbits
    .globl main
    .type main, @function
main:
    ret
    .size main, .-main
    .section .data,"aw",@progbits
    .p2align 2
    .globl __stub_data
__stub_data:
    .word 0
EOF
if [ ! -f "$BIN/stub.o" ] || [ "$ROOT/mock/stub.s" -nt "$BIN/stub.o" ]; then
  riscv64-unknown-elf-as -march=rv32i -mabi=ilp32 "$ROOT/mock/stub.s" -o "$BIN/stub.o"
  CHANGED=1
fi
write_if_changed "$BIN/riscv-tt-elf-g++" <<'EOF'
#!/usr/bin/env python3
# Stand-in SFPI g++ for tt-metal MOCK mode (written by onnx2ttnn tools/ttnn_mock/setup.sh): emits tiny but
# valid rv32 ELF files laid out by the real TT linker scripts (via Debian's riscv64-unknown-elf-ld).
# No real device code is produced; nothing it produces ever executes.
import os, sys, shutil, subprocess
HERE = os.path.dirname(os.path.realpath(__file__))
STUB = os.environ.get("FAKE_TT_GPP_STUB", os.path.join(HERE, "stub.o"))
LOG = os.environ.get("FAKE_TT_GPP_LOG", "")
args = sys.argv[1:]
if LOG:
    with open(LOG, "a") as f:
        f.write(" ".join(args) + "\n")
if not args:
    sys.exit(0)
if args[0] in ("--version", "-v"):
    print("riscv-tt-elf-g++ (tenstorrent/sfpi:7.89.0) 15.1.0"); sys.exit(0)
if args[0] == "-dumpversion":
    print("15.1.0"); sys.exit(0)
out = None; mf = None; i = 0
is_compile = "-c" in args or "-S" in args
is_pre = "-E" in args
is_pch = any(a == "c++-header" for a in args)
ld_opts = []; script = None; libdirs = []
while i < len(args):
    a = args[i]
    if a == "-o": out = args[i + 1]; i += 2; continue
    if a == "-MF": mf = args[i + 1]; i += 2; continue
    if a == "-T": script = args[i + 1]; i += 2; continue
    if a.startswith("-T") and len(a) > 2: script = a[2:]
    elif a.startswith("-L") and len(a) > 2: libdirs.append(a)
    elif a.startswith("-Wl,"): ld_opts += a[4:].split(",")
    i += 1
srcs = [a for a in args if a.endswith((".cc", ".cpp", ".c", ".S", ".s"))]
def write_dep(obj):
    dep = mf or (os.path.splitext(obj)[0] + ".d")
    with open(dep, "w") as f:
        f.write("%s: %s\n" % (obj, " ".join(srcs)))
if is_pch or is_pre:
    if out:
        open(out, "w").close()
    sys.exit(0)
if is_compile:
    if out:
        shutil.copyfile(STUB, out)
        if "-MMD" in args or "-MD" in args or mf:
            write_dep(out)
    sys.exit(0)
if out is None:
    sys.exit(0)
cmd = ["riscv64-unknown-elf-ld", "-m", "elf32lriscv"] + libdirs + [o for o in ld_opts if o]
if script:
    cmd += ["-T" + script]
cmd += [STUB, "-o", out]
r = subprocess.run(cmd, capture_output=True, text=True)
if r.returncode != 0:
    sys.stderr.write("fake-gpp link failed: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    if LOG:
        with open(LOG, "a") as f:
            f.write("LINK FAILED: " + " ".join(cmd) + "\n" + r.stderr + "\n")
sys.exit(r.returncode)
EOF
chmod +x "$BIN/riscv-tt-elf-g++"

# ---------------------------------------------------------------- 8. env.sh
write_if_changed "$ROOT/env.sh" <<EOF
# generated by onnx2ttnn tools/ttnn_mock/setup.sh -- source me
export ONNX2TTNN_TTNN_MOCK_HOME=$ROOT
export ONNX2TTNN_TTNN_MOCK_PYTHON=$VPY
export ONNX2TTNN_TTNN_MOCK_DESC_DIR=$ROOT/mock
export ONNX2TTNN_TTNN_MOCK_WORKDIR=$ROOT/work
export TT_METAL_MOCK_CLUSTER_DESC_PATH=\${TT_METAL_MOCK_CLUSTER_DESC_PATH:-$ROOT/mock/n150.yaml}
export TT_METAL_HOME=$TT_HOME
export TT_METAL_RUNTIME_ROOT=$TT_HOME
export TT_METAL_CACHE=$ROOT/cache/
export TTNN_PKG_ROOT=${TTNN_PYPATH:-$(dirname "$TT_HOME")}
export PYTHONPATH=${TTNN_PYPATH:+$TTNN_PYPATH:}\${PYTHONPATH:-}
export LOGURU_LEVEL=\${LOGURU_LEVEL:-WARNING}
export TT_LOGGER_LEVEL=\${TT_LOGGER_LEVEL:-FATAL}
# export FAKE_TT_GPP_LOG=$ROOT/gpp_calls.log   # uncomment to log every stand-in compiler call
EOF

# ---------------------------------------------------------------- 9. sanity check (only when something changed)
if [ "$CHANGED" = 1 ] || [ "$DO_CHECK" = 1 ] || [ ! -f "$ROOT/.ready" ]; then
  log "checking: import ttnn + open/close a mock n150"
  rm -f "$ROOT/.ready"
  ( cd "$ROOT/work" && source "$ROOT/env.sh" && TT_METAL_MOCK_CLUSTER_DESC_PATH=$ROOT/mock/n150.yaml timeout 300 "$VPY" - <<'PY'
import os, sys
try:
    import torch, ttnn
    d = ttnn.open_device(device_id=0, l1_small_size=16384)
    g = d.compute_with_storage_grid_size()
    t = ttnn.from_torch(torch.zeros(1, 1, 32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=d)
    t = ttnn.add(t, t)
    ttnn.close_device(d)
    print("[ttnn-mock setup] ok: ttnn", getattr(ttnn, "__version__", "?"), "torch", torch.__version__, "grid", g.x, "x", g.y, flush=True)
    os._exit(0)
except BaseException as e:
    print("[ttnn-mock setup] check failed:", type(e).__name__, str(e).split("backtrace")[0][:800], flush=True)
    os._exit(1)
PY
  ) || die "sanity check failed (see above)"
  date > "$ROOT/.ready"
fi

log "ready"
echo "ENV=$ROOT/env.sh"
echo "PYTHON=$VPY"
