#!/usr/bin/env bash
export GPUCLK_READ_ONLY=1
# The telemetry sampler's cost against pynvml doing the same reads, in one run on one machine
# (issue 4's performance goals): CPU µs of one fast sample per GPU (goal <= 5 µs on the H100),
# and the p99 lateness of fast samples with the slow fields on at a 100 ms interval (<= 2 ms).
#
# Usage (GPU machine, repository root; build/device carried):
#   perf/sampler_vs_pynvml.sh
#   SIM=1 perf/sampler_vs_pynvml.sh          # against libnvml-sim.so (pipeline check, no GPU)
# Environment: TOOL (gpuclk-sampler-overhead; default: build/device/src/telemetry/…, then
#   .device/…, then build/tel/…), SAMPLES (20000), JITTER_SECONDS (20), INTERVAL_MS (100),
#   SIM=1 and SIM_LIB (default: libnvml-sim.so beside TOOL's build), STRICT=1 (exit 2 when a goal
#   is missed), OUT (logs and the JSON of both sides go there when set).
# Prints one markdown table; exit 0 when both sides ran.
set -euo pipefail
cd "$(dirname "$0")/.."

find_tool() {
  for t in "${TOOL:-}" build/device/src/telemetry/gpuclk-sampler-overhead .device/gpuclk-sampler-overhead \
           build/tel/src/telemetry/gpuclk-sampler-overhead build/release/src/telemetry/gpuclk-sampler-overhead; do
    [ -n "$t" ] && [ -x "$t" ] && { echo "$t"; return; }
  done
  echo "sampler_vs_pynvml: gpuclk-sampler-overhead not found; build it: cmake --build build/device --target gpuclk-sampler-overhead" >&2
  exit 1
}
TOOL=$(find_tool)
SAMPLES=${SAMPLES:-20000}
JITTER_SECONDS=${JITTER_SECONDS:-20}
INTERVAL_MS=${INTERVAL_MS:-100}
LOG_DIR=${OUT:-$(mktemp -d)}
mkdir -p "$LOG_DIR"

if [ "${SIM:-0}" = 1 ]; then
  SIM_LIB=${SIM_LIB:-$(cd "$(dirname "$TOOL")/../.." && pwd)/libnvml-sim.so}
  [ -f "$SIM_LIB" ] || { echo "sampler_vs_pynvml: no simulator at $SIM_LIB (set SIM_LIB)" >&2; exit 1; }
  export GPUCLK_NVML_LIB=$SIM_LIB GPUCLK_SIM_STATE=$LOG_DIR/sim.state GPUCLK_SIM_SPEED=1
  # pynvml opens libnvidia-ml.so.1 by name: let the loader find the simulator under that name.
  mkdir -p "$LOG_DIR/simlib"; ln -sf "$SIM_LIB" "$LOG_DIR/simlib/libnvidia-ml.so.1"
  export LD_LIBRARY_PATH=$LOG_DIR/simlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

echo "gpuclk-sampler-overhead: $SAMPLES samples per GPU, then ${JITTER_SECONDS}s x 2 of sampling at ${INTERVAL_MS} ms ..." >&2
"$TOOL" --samples "$SAMPLES" --jitter-seconds "$JITTER_SECONDS" --interval-ms "$INTERVAL_MS" \
  >"$LOG_DIR/gpuclk_sampler.json" 2>"$LOG_DIR/gpuclk_sampler.log"
echo "pynvml, the same reads ..." >&2
python3 perf/sampler_pynvml.py "$SAMPLES" >"$LOG_DIR/pynvml.json" 2>"$LOG_DIR/pynvml.log"

python3 - "$LOG_DIR/gpuclk_sampler.json" "$LOG_DIR/pynvml.json" "${STRICT:-0}" <<'EOF'
import json, sys
ours, peer, strict = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3] == "1"
jit = {j["name"]: j for j in ours["jitter"]}
missed = []
def row(label, a, b=None, unit="µs", goal=""):
    ratio = f"{b / a:.1f}x" if b and a else ""
    bs = f"{b:.3f}" if b is not None else "–"
    print(f"| {label} | {a:.3f} {unit} | {bs} | {ratio} | {goal} |")
where = "simulator" if ours["simulated"] else ours["gpu_name"]
print(f"\nSampler cost on {ours['gpus']} x {where}; peer: {peer['binding']} (same 9 NVML reads)\n")
print("| measure | gpuclk | peer | peer / gpuclk | goal |")
print("|---|---:|---:|---:|---|")
cpu = ours["fast_sample_us"]["cpu"]
row("CPU per fast sample per GPU", cpu, peer["fast_sample_us"]["cpu"], goal="gpuclk <= 5 µs")
row("wall per fast sample per GPU", ours["fast_sample_us"]["wall"], peer["fast_sample_us"]["wall"])
row("raw nvmlDeviceGetClockInfo + GetPowerUsage (CPU)", ours["raw_clock_power_us"]["cpu"], goal="calibration: 0.66 µs")
for name, label in (("standard", "slow fields every 1 s"), ("all_slow_every_tick", "all slow fields incl. PCIe every tick")):
    j = jit.get(name)
    if not j: continue
    row(f"fast-sample lateness p99, {label}, {j['interval_ms']:.0f} ms", j["lateness_p99_ms"], unit="ms",
        goal="<= 2 ms" if name == "standard" else "")
    print(f"| … p50 {j['lateness_p50_ms']:.3f} ms, max {j['lateness_max_ms']:.3f} ms, missed ticks "
          f"{j['missed_ticks']} of {j['ticks']}, tick cost p99 {j['tick_cost_p99_ms']:.3f} ms | | | | |")
print("\nper field, CPU µs per GPU: " + ", ".join(f"{k} {v:.3f}" for k, v in ours["per_field_us"].items()))
if cpu > 5: missed.append("CPU per fast sample > 5 µs")
if jit.get("standard", {}).get("lateness_p99_ms", 0) > 2: missed.append("lateness p99 > 2 ms")
if missed: print("\ngoals missed: " + "; ".join(missed))
sys.exit(2 if strict and missed else 0)
EOF
echo "logs: $LOG_DIR" >&2
