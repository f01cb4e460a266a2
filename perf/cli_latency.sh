#!/usr/bin/env bash
# CLI latency of gpuclk — reading NVML itself (--direct), through a running `gpuclk serve`, and
# nvidia-smi where there is one — measured side by side in one run on the same machine.
#   perf/cli_latency.sh [GPUCLK_BIN] [RUNS]
#   SIM=8xh100 perf/cli_latency.sh build/release/gpuclk    # on the simulator (no nvidia-smi)
# Prints one table: median wall ms and CPU ms per invocation, service / direct and gpuclk /
# nvidia-smi ratios, and `gpuclk --version` (the process's own start-up, the floor of any command).
# Read-only: runs no command that changes a GPU.
export GPUCLK_READ_ONLY=1
set -euo pipefail
BIN=${1:-build/device/gpuclk}
RUNS=${2:-30}
SIM=${SIM:-}
FIELDS=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active
TMP=$(mktemp -d)
SERVE_PID=""
trap '[ -n "$SERVE_PID" ] && kill $SERVE_PID 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
GLOBAL=()
if [ -n "$SIM" ]; then
  GLOBAL=(--sim "$SIM")
  export GPUCLK_SIM_STATE="$TMP/sim.state"
fi
HAVE_SMI=0
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && [ -z "$SIM" ] && HAVE_SMI=1

# ms_per_call CMD...: prints "median_wall_ms cpu_ms" over RUNS calls (after 3 warm-ups), output
# discarded. CPU is user + system time of the process, per call: on a machine shared with other
# work (a loaded CI box) it is the steadier figure, wall time includes waiting for a core.
ms_per_call() {
  python3 - "$RUNS" "$@" <<'PY'
import os, resource, statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
for _ in range(3):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
walls = []
before = resource.getrusage(resource.RUSAGE_CHILDREN)
for _ in range(runs):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    walls.append(time.perf_counter() - t0)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / runs
print(f"{statistics.median(walls) * 1e3:.2f} {cpu * 1e3:.2f}")
PY
}

"$BIN" "${GLOBAL[@]}" --socket "$TMP/gpuclk.sock" serve --listen off 2>"$TMP/serve.log" &
SERVE_PID=$!
for _ in $(seq 100); do grep -q "sampling every" "$TMP/serve.log" && break; sleep 0.1; done
grep -q "sampling every" "$TMP/serve.log" || { echo "serve did not start: $(cat "$TMP/serve.log")"; exit 1; }

direct=("$BIN" "${GLOBAL[@]}" --direct)
service=("$BIN" "${GLOBAL[@]}" --socket "$TMP/gpuclk.sock")
# row LABEL "gpuclk args" "nvidia-smi args"
row() {
  local d s p="- -"
  d=$(ms_per_call "${direct[@]}" $2)
  s=$(ms_per_call "${service[@]}" $2)
  [ $HAVE_SMI -eq 1 ] && [ -n "$3" ] && p=$(ms_per_call nvidia-smi $3)
  read -r dm da <<<"$d"; read -r sm sa <<<"$s"; read -r pm pa <<<"$p"
  awk -v l="$1" -v dm="$dm" -v da="$da" -v sm="$sm" -v sa="$sa" -v pm="$pm" -v pa="$pa" 'BEGIN {
    r1 = sm / dm; rc = (da > 0) ? sa / da : 0
    r2 = (pm == "-") ? "-" : sprintf("%.2f", dm / pm); r3 = (pm == "-") ? "-" : sprintf("%.2f", sm / pm)
    printf "| %-24s | %7.2f | %6.2f | %7.2f | %6.2f | %5s | %4.2f | %4.2f | %5s | %5s |\n", l, dm, da, sm, sa, pm, r1, rc, r2, r3 }'
}

if [ -n "$SIM" ]; then node="simulated $SIM"; else node=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); fi
echo "CLI latency, $RUNS calls each after 3 warm-ups; node: $node; $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg)"
echo "| command | direct wall ms (median) | CPU ms | service wall ms (median) | CPU ms | nvidia-smi wall ms | service / direct (wall) | (CPU) | direct / smi | service / smi |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
row "query, 5 fields" "query --fields $FIELDS --format csv,noheader" "--query-gpu=$FIELDS --format=csv,noheader"
row "status (default view)" "status" ""
row "status --format json" "status --format json" ""
row "clocks" "clocks" "-q -d CLOCK"
# clocks shows what these three sections of nvidia-smi -q show, and more (violation counters).
[ $HAVE_SMI -eq 1 ] && row "clocks vs smi's 3 sections" "clocks" "-q -d CLOCK,PERFORMANCE,SUPPORTED_CLOCKS"
# A fresh runtime directory each call: the clock limits read from NVML (src/gpu/limits_cache.h).
[ -z "$SIM" ] && GPUCLK_LIMITS_CACHE=off row "clocks, limits not kept" "clocks" "-q -d CLOCK"
row "info" "info" "-q"
row "topo" "topo" "topo -m"
v=$(ms_per_call "$BIN" --version)
q=$(ms_per_call "$BIN" query --help)
read -r qm qa <<<"$q"
read -r vm va <<<"$v"
echo "| gpuclk --version (start-up alone, every command's parser) | $vm | $va | | | | | | | |"
echo "| gpuclk query --help (start-up alone, one command's parser) | $qm | $qa | | | | | | | |"
