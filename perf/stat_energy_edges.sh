#!/usr/bin/env bash
# How close `gpuclk stat`'s energy through the service comes to the simulator's exact energy
# (docs/serve.md, "`stat` through the service"): RUNS runs of `stat -- sleep SECONDS` on GPU 0 of
# the default simulated node (its load swings between ~75 and ~700 W), each beside the simulator's
# own counter over the same window, then the same with `--direct` (stat's own sampler, whose
# window edges are its counter reads). HOGS=N busy loops run beside (a loaded node).
#   perf/stat_energy_edges.sh [GPUCLK_BIN] [SECONDS] [RUNS]
# Prints one line a run (energy, truth, error %, the service's lateness p99) and each mode's
# largest error.
set -euo pipefail
BIN=${1:-build/release/gpuclk}
SECONDS_RUN=${2:-2}
RUNS=${3:-10}
HOGS=${HOGS:-0}
TMP=$(mktemp -d)
SOCK=$TMP/gpuclk.sock
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq "$HOGS"); do (while :; do :; done) & pids+=($!); done
export GPUCLK_STATE_DIR=$TMP/state GPUCLK_SIM_STATE=$TMP/sim-state
"$BIN" --sim --socket "$SOCK" serve --listen off 2>"$TMP/serve.log" &
pids+=($!)
for _ in $(seq 100); do grep -q "sampling every" "$TMP/serve.log" && break; sleep 0.1; done
run() {
  local mode=$1 worst=0 err
  shift
  for r in $(seq "$RUNS"); do
    "$BIN" --sim --socket "$SOCK" "$@" -i 0 stat --json "$TMP/stat.json" -- sleep "$SECONDS_RUN" >/dev/null 2>&1
    err=$(jq -r '.gpus[0] | (.energy_j - .simulator_energy_j) / .simulator_energy_j * 100' "$TMP/stat.json")
    jq -r --arg mode "$mode" --arg r "$r" '"\($mode) run \($r): \(.gpus[0].energy_j) J, truth \(.gpus[0].simulator_energy_j) J, lateness p99 \(.sampling.lateness_p99_ms // "-") ms"' "$TMP/stat.json"
    worst=$(awk -v w="$worst" -v e="$err" 'BEGIN { e = e < 0 ? -e : e; print (e > w ? e : w) }')
  done
  printf '%s: largest error %.2f %% over %d runs of %s s (%d CPU hogs beside)\n' "$mode" "$worst" "$RUNS" "$SECONDS_RUN" "$HOGS"
}
run "through the service"
run "--direct" --direct
