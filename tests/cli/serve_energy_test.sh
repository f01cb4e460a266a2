#!/usr/bin/env bash
# Energy through gpuclk serve, on a simulated node whose time runs (issue 42): dmon's energy column
# counts from dmon's start although the service reads the energy counter only every few seconds
# while nobody streams, and `stat -- CMD` through the service measures the command's energy as
# exactly as `--direct` does (the simulator's own exact counter is the truth).
source "$(dirname "$0")/lib.sh" "$1"
export GPUCLK_SIM_SPEED=1
SOCK="$TEST_TMP/gpuclk.sock"

# --- dmon -s x: control-faults' GPUs idle at a steady 75.26 W, so the energy since the stream
# opened is that power times the time since (the counter read every 5 s: --counters-interval) ---
start_serve --sim=control-faults --socket "$SOCK" serve --listen off || exit 1
# The stream request dmon sends, read on the socket: each line's energy against its own time.
OUT=$(python3 - "$SOCK" <<'PY' 2>&1
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(sys.argv[1])
s.sendall(b'{"request":"stream","gpus":[0],"interval_seconds":0.5,"count":6,"fields":["energy","power"]}\n')
data = b""
while data.count(b"\n") < 7:
    chunk = s.recv(1 << 20)
    if not chunk: break
    data += chunk
lines = [json.loads(l) for l in data.decode().splitlines() if '"gpus"' in l]
t0 = lines[0]["time"]
e0 = lines[0]["gpus"][0]["energy_joules"]
for l in lines[1:]:
    g = l["gpus"][0]
    want = g["fast"]["power_watts"] * (l["time"] - t0) + e0
    ok = abs(g["energy_joules"] - want) <= 2
    print(f'{"ok" if ok else "BAD"} t+{l["time"] - t0:.2f} s: {g["energy_joules"]:.1f} J, expected {want:.1f} J')
PY
)
LAST_CMD="stream energy_joules on control-faults"
check; [ "$(grep -c '^ok' <<<"$OUT")" -eq 5 ] || fail "energy since the stream opened is off: $OUT"
gpuclk --sim=control-faults --socket "$SOCK" -i 0 dmon -s x -d 0.5 -c 2 --format json
expect_exit 0
# The second row, half a second or more after the first: 37.6 J a half second, never 0 (no
# counter read yet) nor the counter's step since a read made before dmon started.
check; jq -e -s '.[1].energy >= 30 and .[1].energy <= 150' <<<"$OUT" >/dev/null ||
  fail "dmon's energy after 0.5 s is not ~38 J: $OUT"
# stat's command runs on the service's simulated node, scenario and all (issue 42: a sim-job
# under stat loaded the driver's NVML, exit 9; on another scenario's state it lost its job).
gpuclk --sim=control-faults --socket "$SOCK" -i 0 stat -- "$GPUCLK_BIN" sim-job -i 0 --workload gemm-bf16 --amount 20T
expect_exit 0; expect_out "completed"; expect_err "Sampled by                          : gpuclk serve"
stop_serve

# --- stat -- CMD through the service: the energy counter read at the command's start and end, as
# with --direct. The default node's load changes every few seconds (the power readings, 1 s
# averages, lag it: integrated, they were 14 % off); the simulator's exact energy over the same
# window is the truth (stat's report shows it beside NVML's) ---
start_serve --sim --socket "$SOCK" serve --listen off || exit 1
for run in 1 2; do
  gpuclk --sim --socket "$SOCK" -i 0 stat --json "$TEST_TMP/stat.json" -- sleep 2
  expect_exit 0
  OUT=$(cat "$TEST_TMP/stat.json"); LAST_CMD="stat -- sleep 2 through the service, run $run"
  expect_json '.sampling.sampled_by' "gpuclk serve"
  expect_json '.gpus[0].energy_source' "energy counter"
  # Each edge is the service's time when it answered; its counter read comes on a slow thread a
  # wake-up later, and the counter at the edge is shared out over that gap by the power readings.
  # A swing of the load within it (up to 700 - 75 W) is missed: on a loaded machine (under-load,
  # lateness p99 7 ms) 202.6 J against 198.5 J. So each edge may be off by the swing over the
  # service's own lateness p99 (at least 1 ms), beside 1 % + 1 J; the power readings' integral,
  # the bug this guards, was 14 % off.
  check; jq -e '(([.sampling.lateness_p99_ms, 1] | max) / 1000 * 625 * 2) as $edges | .gpus[0] |
      (.energy_j - .simulator_energy_j | fabs) <= 0.01 * .simulator_energy_j + 1 + $edges' \
    <<<"$OUT" >/dev/null || fail "energy off the simulator's: $(jq -c '[.gpus[0].energy_j, .gpus[0].simulator_energy_j, .sampling.lateness_p99_ms]' <<<"$OUT")"
done
stop_serve
finish
