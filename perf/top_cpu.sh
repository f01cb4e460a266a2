#!/usr/bin/env bash
# What `gpuclk top` costs in CPU (user + system over a fixed time) on a simulated node, at 1 s
# and 100 ms, against two peers measured in the same run on the same node: `gpuclk dmon` at the
# same interval (the same sampler, no screen) and nvtop (Debian's, on the simulator through
# build/release/nvml-compat, skipped when not installed). Each runs in its own tmux pane of
# 120x40 (top and nvtop need a terminal); the simulator runs at real speed.
#   perf/top_cpu.sh [GPUCLK_BIN] [SECONDS]          (defaults: build/release/gpuclk, 30)
#   SIM=8xh100 perf/top_cpu.sh build/release/gpuclk 30
# On a GPU host: SIM=real (no --sim; nvtop reads the driver's NVML). NVTOP and TMUX_CMD name
# the programs (defaults: nvtop, tmux from PATH) — scripts/device-check.sh carries Debian's.
set -euo pipefail
BIN=$(realpath "${1:-build/release/gpuclk}")
SECONDS_RUN=${2:-30}
SIM=${SIM:-8xh100}
NVTOP=${NVTOP:-nvtop}
TMUX_CMD=${TMUX_CMD:-tmux}
COMPAT="$(dirname "$BIN")/nvml-compat"
if [ "$SIM" = real ]; then SIMARG=""; else SIMARG=" --sim=$SIM"; fi
TMP=$(mktemp -d)
SOCKET="gpuclk-top-cpu-$$"
trap '"$TMUX_CMD" -L "$SOCKET" kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
command -v "$TMUX_CMD" >/dev/null || { echo "tmux is needed"; exit 1; }

# cpu_of NAME MATCH COMMAND: runs the shell COMMAND in a tmux window, finds its process by
# MATCH (pgrep -f), and after a 3 s warm-up prints "NAME: X % of a core" (user + system, /proc)
# over SECONDS_RUN.
cpu_of() {
  local name=$1 match=$2 command=$3 pid=""
  local run="export GPUCLK_SIM_STATE=$TMP/$name.state TERM=xterm-256color; $command; sleep 600"
  if "$TMUX_CMD" -L "$SOCKET" has-session 2>/dev/null; then
    "$TMUX_CMD" -L "$SOCKET" new-window -d -n "$name" "$run"
  else
    "$TMUX_CMD" -L "$SOCKET" new-session -d -x 120 -y 40 -n "$name" "$run"
  fi
  for _ in $(seq 50); do
    pid=$(pgrep -nf "$match" || true)
    [ -n "$pid" ] && break
    sleep 0.1
  done
  [ -n "$pid" ] || { echo "$name: did not start"; return; }
  sleep 3
  python3 - "$pid" "$SECONDS_RUN" "$name" <<'PY'
import os, sys, time
pid, seconds, name = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
tick = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
c0, w0 = cpu(), time.monotonic()
time.sleep(seconds)
c1, w1 = cpu(), time.monotonic()
print(f"{name}: {100 * (c1 - c0) / (w1 - w0):.2f} % of a core")
PY
  kill "$pid" 2>/dev/null || true
}

# top and dmon write to a terminal / /dev/null; their output is not what is measured.
for interval in 1 0.1; do
  tenths=$(python3 -c "print(round($interval * 10))")
  label=$([ "$interval" = 1 ] && echo "1s" || echo "100ms")
  cpu_of "top-$label" "^$BIN$SIMARG top" "'$BIN'$SIMARG top -d $interval"
  cpu_of "dmon-$label" "^$BIN$SIMARG dmon" "'$BIN'$SIMARG dmon -d $interval >/dev/null"
  if [ "$SIM" = real ] && command -v "$NVTOP" >/dev/null; then
    cpu_of "nvtop-$label" "^$NVTOP -d $tenths" "HOME=$TMP '$NVTOP' -d $tenths"
  elif command -v "$NVTOP" >/dev/null && [ -e "$COMPAT/libnvidia-ml.so.1" ]; then
    cpu_of "nvtop-$label" "^$NVTOP -d $tenths" \
      "HOME=$TMP LD_LIBRARY_PATH='$COMPAT' GPUCLK_SIM_SCENARIO=$SIM '$NVTOP' -d $tenths"
  fi
done | tee "$TMP/results"

python3 - "$TMP/results" <<'PY'
import re, sys
v = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+): ([0-9.]+) %", line)
    if m: v[m.group(1)] = float(m.group(2))
for label in ("1s", "100ms"):
    top = v.get(f"top-{label}")
    for peer in ("dmon", "nvtop"):
        p = v.get(f"{peer}-{label}")
        if top is not None and p:
            print(f"ratio at {label}: top / {peer} = {top / p:.2f}")
PY
echo "node: $([ "$SIM" = real ] && echo "the host's GPUs" || echo "simulated $SIM"); ${SECONDS_RUN} s per measurement; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
