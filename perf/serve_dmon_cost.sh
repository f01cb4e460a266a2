#!/usr/bin/env bash
# What `gpuclk dmon` through gpuclk serve costs: the service's CPU over SECONDS (default 30)
# with no dmon, then with N dmons streaming at once (default 1 and 4), and each dmon's own CPU.
# Each dmon asks for -s pucvmet (every nvidia-smi group: the on-demand fields and PCIe
# throughput included) at -d 0.1, the service samples at its default 100 ms.
#   perf/serve_dmon_cost.sh [GPUCLK_BIN] [SECONDS]
#   SIM=8xh100 perf/serve_dmon_cost.sh build/release/gpuclk 30   # simulated 8x H100 node
set -euo pipefail
BIN=${1:-build/device/gpuclk}
SECONDS_RUN=${2:-30}
SIM=${SIM:-}
DMON_ARGS=(dmon -s "${DMON_GROUPS:-pucvmet}" -d 0.1)
TMP=$(mktemp -d)
SERVE_PID=""
DMON_PIDS=()
cleanup() {
  for p in "${DMON_PIDS[@]}" $SERVE_PID; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
GLOBAL=()
if [ -n "$SIM" ]; then GLOBAL=(--sim "$SIM"); export GPUCLK_SIM_STATE="$TMP/sim.state"; fi
"$BIN" "${GLOBAL[@]}" --socket "$TMP/gpuclk.sock" serve --listen off 2>"$TMP/serve.log" &
SERVE_PID=$!
for _ in $(seq 100); do grep -q "sampling every" "$TMP/serve.log" && break; sleep 0.1; done
grep -q "sampling every" "$TMP/serve.log" || { echo "serve did not start: $(cat "$TMP/serve.log")"; exit 1; }
sleep 2

cpu_seconds() {  # user + system seconds of the processes given
  local total=0 p
  for p in "$@"; do
    total=$(python3 -c "import os,sys; f=open('/proc/$p/stat').read().rsplit(')',1)[1].split(); print($total + (int(f[11])+int(f[12]))/os.sysconf('SC_CLK_TCK'))")
  done
  echo "$total"
}
measure() {  # measure N: the service's and the dmons' CPU with N dmons streaming
  local n=$1 i c0 c1 d0 d1 t0 t1
  DMON_PIDS=()
  for ((i = 0; i < n; i++)); do
    "$BIN" "${GLOBAL[@]}" --socket "$TMP/gpuclk.sock" --nvml-lib /nonexistent "${DMON_ARGS[@]}" >/dev/null 2>"$TMP/dmon$i.log" &
    DMON_PIDS+=($!)
  done
  sleep 2
  c0=$(cpu_seconds $SERVE_PID); d0=$(cpu_seconds "${DMON_PIDS[@]}"); t0=$(date +%s.%N)
  sleep "$SECONDS_RUN"
  c1=$(cpu_seconds $SERVE_PID); d1=$(cpu_seconds "${DMON_PIDS[@]}"); t1=$(date +%s.%N)
  python3 -c "
w = $t1 - $t0
print(f'{$n} dmon(s): service {100*($c1-$c0)/w:.2f} % of a core; ' +
      (f'each dmon {100*($d1-$d0)/w/$n:.2f} %' if $n else 'no dmon') + f' (over {w:.0f} s)')"
  for p in "${DMON_PIDS[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
  DMON_PIDS=()
}
for n in ${COUNTS:-0 1 4}; do measure "$n"; done
echo "node: ${SIM:+simulated $SIM}; $(grep -o '[0-9]* GPUs*.*ms' "$TMP/serve.log"); dmon ${DMON_ARGS[*]:1}"
