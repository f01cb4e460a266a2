#!/usr/bin/env bash
# `gpuclk restore` against `gpuclk set` on the simulated node, in one run: restore writes as many
# settings as set did, so it should cost about as much (it waits once for the writes to take
# effect, not once per GPU).
#   perf/restore_vs_set.sh [GPUCLK_BIN] [SCENARIO] [RUNS]      (defaults: build/release/gpuclk 8xh100 7)
# Prints the median wall ms of each and the ratio restore / set. Simulator only: it changes clocks.
set -euo pipefail
BIN=${1:-build/release/gpuclk}
SCENARIO=${2:-8xh100}
RUNS=${3:-7}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set_ms=() restore_ms=()
for i in $(seq "$RUNS"); do
  # A fresh simulated node and journal for every run.
  export GPUCLK_SIM_STATE=$tmp/sim-$i GPUCLK_STATE_DIR=$tmp/state-$i
  t0=$(date +%s%N)
  "$BIN" --sim="$SCENARIO" set --all --lock-gpu-clocks 1755 --power-limit 650 >/dev/null
  t1=$(date +%s%N)
  "$BIN" --sim="$SCENARIO" restore >/dev/null
  t2=$(date +%s%N)
  set_ms+=($(((t1 - t0) / 1000000)))
  restore_ms+=($(((t2 - t1) / 1000000)))
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
s=$(median "${set_ms[@]}")
r=$(median "${restore_ms[@]}")
printf 'scenario %s, %s runs: set %s ms, restore %s ms (median), restore/set %.2f\n' \
  "$SCENARIO" "$RUNS" "$s" "$r" "$(echo "$r / $s" | bc -l)"
