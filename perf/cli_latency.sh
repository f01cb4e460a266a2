#!/usr/bin/env bash
# CLI latency of gpuclk against nvidia-smi, measured in one run on the same machine.
#   perf/cli_latency.sh [GPUCLK_BIN] [RUNS]
# Prints one table: median and mean wall ms per invocation and the ratio gpuclk / nvidia-smi.
# Read-only: runs no command that changes a GPU.
export GPUCLK_READ_ONLY=1
set -euo pipefail
BIN=${1:-build/device/gpuclk}
RUNS=${2:-30}
FIELDS=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active

# ms_per_call CMD...: prints "median mean" over RUNS calls (after 3 warm-ups), output discarded.
ms_per_call() {
  for _ in 1 2 3; do "$@" >/dev/null 2>&1; done
  local times=()
  for _ in $(seq "$RUNS"); do
    local t0 t1
    t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1; s+=$1} END {
    m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.2f %.2f\n", m/1000, s/NR/1000 }'
}

row() {  # row LABEL "ours" "peer"
  local ours peer
  read -r om oa <<<"$2"; read -r pm pa <<<"$3"
  awk -v l="$1" -v om="$om" -v oa="$oa" -v pm="$pm" -v pa="$pa" 'BEGIN {
    printf "| %-44s | %8.2f | %8.2f | %8.2f | %8.2f | %5.2f |\n", l, om, oa, pm, pa, om/pm }'
}

echo "CLI latency, $RUNS calls each after 3 warm-ups; $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(nvidia-smi --query-gpu=count --format=csv,noheader | head -1) GPU(s)"
echo "| command (gpuclk vs nvidia-smi)               | gpuclk median ms | mean | nvidia-smi median ms | mean | ratio (median) |"
echo "|----------------------------------------------|---:|---:|---:|---:|---:|"
row "query, 5 fields vs --query-gpu, 5 fields" \
  "$(ms_per_call "$BIN" query --fields $FIELDS --format csv,noheader)" \
  "$(ms_per_call nvidia-smi --query-gpu=$FIELDS --format=csv,noheader)"
row "clocks vs -q -d CLOCK" \
  "$(ms_per_call "$BIN" clocks)" \
  "$(ms_per_call nvidia-smi -q -d CLOCK)"
row "status (default view) vs nvidia-smi" \
  "$(ms_per_call "$BIN")" \
  "$(ms_per_call nvidia-smi)"
