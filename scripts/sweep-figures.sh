#!/usr/bin/env bash
# The figures of docs/sweep.md and the README's sweep example, on the simulator, each on a fresh
# simulated node (new state file and journal, so the thermal history is the same every time).
#   scripts/sweep-figures.sh [OUTDIR]      (default /tmp/gpuclk-sweep-figures)
# Writes OUTDIR/<name>.txt (the command line and what it printed on stdout), OUTDIR/<name>.err
# (stderr: a swept command's own output) and OUTDIR/<name>/ (--out: JSON, CSV, plots);
# docs/images/sweep-bf16-h100.png is OUTDIR/bf16/sweep.png, docs/images/sweep-capped-gpu.png
# OUTDIR/capped/sweep.png.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${GPUCLK_BIN:-build/release/gpuclk}
OUT=${1:-/tmp/gpuclk-sweep-figures}
mkdir -p "$OUT"
export GPUCLK_SIM_SPEED=${GPUCLK_SIM_SPEED:-20}
PATH="$(cd "$(dirname "$BIN")" && pwd):$PATH"  # `gpuclk sim-job` inside the swept command

# run NAME ARGS...: one sweep on a fresh node, its output in OUT/NAME.txt
run() {
  local name=$1
  shift
  local state
  state=$(mktemp -d)
  printf '$ GPUCLK_SIM_SPEED=%s gpuclk%s\n' "$GPUCLK_SIM_SPEED" "$(printf " %q" "$@")" >"$OUT/$name.txt"
  GPUCLK_SIM_STATE=$state/sim GPUCLK_STATE_DIR=$state/journal "$BIN" "$@" >>"$OUT/$name.txt" \
    2>"$OUT/$name.err" ||
    echo "(exit $?)" >>"$OUT/$name.txt"
  rm -rf "$state"
  echo "$OUT/$name.txt"
}

sweep_h100() {  # NAME WORKLOAD
  run "$1" --sim=h100-calibration sweep --sm-clocks 810:1980:90 --workload "$2" --warmup 1 \
    --duration 3 --out "$OUT/$1"
}
sweep_h100 bf16 gemm-bf16
sweep_h100 fp32 gemm-fp32
sweep_h100 copy mem-copy
# Per-GPU best points: 4 H100s, GPU 2 limited to 500 W (the test node of tests/cli/sweep_test.sh).
run capped --sim=tests/cli/fixtures/sweep-capped-gpu.toml sweep --concurrent \
  --sm-clocks 810:1980:90 --workload gemm-bf16 --warmup 1 --duration 3 --out "$OUT/capped"
# --repeat: three measured windows per point, and a command run three times per point (5000 TFLOP
# a run: ~10 simulated seconds at 990 MHz; its rate is runs per second, start-ups included).
run repeat-workload --sim=h100-calibration sweep --sm-clocks 990,1410,1980 --workload gemm-bf16 \
  --warmup 1 --duration 2 --repeat 3
run repeat-command --sim=h100-calibration sweep --sm-clocks 990,1410,1980 --repeat 3 --no-baseline \
  -- gpuclk sim-job --workload gemm-bf16 --amount 5000T
