#!/usr/bin/env bash
export GPUCLK_READ_ONLY=1
# gpuclk dmon against nvidia-smi dmon on the same GPU in one run, and gpuclk stat around a
# PyTorch BF16 GEMM (issue 4's evidence on the H100):
#   1. CPU time (user + sys) of each over the same duration and interval, alone: -s puc at 1 s
#      (nvidia-smi's default), -s pucvmet at 1 s, and ours at 100 ms (nvidia-smi stops at 1 s).
#   2. Agreement: both watch the GPU at once while `gpuclk stat` runs an 8192³ BF16 torch.matmul
#      loop; per-column medians side by side (they should agree within sampling).
#   3. stat's report: energy, power cap fraction, median SM clock, verdict (the H100 calibration
#      (docs/calibration.md) predicts "power-capped ~98 % … median SM clock ~1410 of 1980 MHz" for the GEMM part).
#
# Usage (GPU machine, repository root, build/device carried):  perf/dmon_vs_nvidia_smi.sh
#        SIM=1 perf/dmon_vs_nvidia_smi.sh   (pipeline check on the simulator: no peer, and the
#        "GEMM" is the h100-calibration scenario's BF16 phase)
# Environment: GPUCLK (default build/device/gpuclk, then .device/gpuclk, build/tel/gpuclk),
#   DEVICE (GPU index, 0), SECONDS_CPU (10), GEMM_SECONDS (20), OUT (logs go there when set).
# Read-only: only getters (nvidia-smi dmon, NVML reads, a CUDA GEMM). Exit 0 when everything ran.
set -euo pipefail
cd "$(dirname "$0")/.."

for g in "${GPUCLK:-}" build/device/gpuclk .device/gpuclk build/tel/gpuclk build/release/gpuclk; do
  [ -n "$g" ] && [ -x "$g" ] && { GPUCLK=$g; break; }
done
[ -x "${GPUCLK:-}" ] || { echo "dmon_vs_nvidia_smi: gpuclk not found (set GPUCLK)" >&2; exit 1; }
DEVICE=${DEVICE:-0}
SECONDS_CPU=${SECONDS_CPU:-10}
GEMM_SECONDS=${GEMM_SECONDS:-20}
LOG_DIR=${OUT:-$(mktemp -d)}
mkdir -p "$LOG_DIR"
SIMARGS=()
PEER=1
if [ "${SIM:-0}" = 1 ]; then
  export GPUCLK_SIM_STATE=$LOG_DIR/sim.state GPUCLK_SIM_SPEED=1
  rm -f "$GPUCLK_SIM_STATE"
  SIMARGS=(--sim h100-calibration)
  PEER=0
elif ! command -v nvidia-smi >/dev/null; then
  echo "dmon_vs_nvidia_smi: nvidia-smi not found; use SIM=1 off the GPU machine" >&2
  exit 1
fi
ours() { "$GPUCLK" "${SIMARGS[@]}" -i "$DEVICE" "$@"; }

# cpu_seconds LOG CMD...: runs CMD (output to LOG), prints "user+sys wall" in seconds.
cpu_seconds() {
  local log=$1; shift
  local TIMEFORMAT='%U %S %R' t
  t=$( { time "$@" >"$log" 2>&1; } 2>&1 | tail -1 )
  awk '{ printf "%.3f %.1f\n", $1 + $2, $3 }' <<<"$t"
}

echo "1/3 CPU time, ${SECONDS_CPU}s each ..." >&2
n=$SECONDS_CPU
declare -A CPU
CPU[ours_puc]=$(cpu_seconds "$LOG_DIR/ours_puc.txt" ours dmon -s puc -d 1 -c "$n")
CPU[ours_all]=$(cpu_seconds "$LOG_DIR/ours_all.txt" ours dmon -s pucvmet -d 1 -c "$n")
CPU[ours_100ms]=$(cpu_seconds "$LOG_DIR/ours_100ms.txt" ours dmon -s puc -d 0.1 -c $((n * 10)))
if [ $PEER = 1 ]; then
  CPU[peer_puc]=$(cpu_seconds "$LOG_DIR/smi_puc.txt" nvidia-smi dmon -i "$DEVICE" -s puc -d 1 -c "$n")
  CPU[peer_all]=$(cpu_seconds "$LOG_DIR/smi_all.txt" nvidia-smi dmon -i "$DEVICE" -s pucvmet -d 1 -c "$n")
fi

for k in "${!CPU[@]}"; do echo "$k ${CPU[$k]}"; done >"$LOG_DIR/cpu_seconds.txt"

echo "2/3 both dmons watching while gpuclk stat runs a BF16 GEMM for ${GEMM_SECONDS}s ..." >&2
watch=$((GEMM_SECONDS + 12))
if [ "${SIM:-0}" = 1 ]; then
  # A fresh simulated node 2 s before the scenario's BF16 GEMM phase (t = 61 s).
  rm -f "$GPUCLK_SIM_STATE"
  export GPUCLK_SIM_START=59
fi
ours dmon -s puc -d 1 -c "$watch" >"$LOG_DIR/ours_gemm.txt" 2>&1 &
ours_pid=$!
if [ $PEER = 1 ]; then
  nvidia-smi dmon -i "$DEVICE" -s puc -d 1 -c "$watch" >"$LOG_DIR/smi_gemm.txt" 2>&1 &
  peer_pid=$!
fi
sleep 2
if [ "${SIM:-0}" = 1 ]; then
  stat_cmd=(sleep "$GEMM_SECONDS")
else
  cat >"$LOG_DIR/bf16_gemm.py" <<EOF
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn_like(a)
torch.cuda.synchronize(); t0 = time.time(); n = 0
while time.time() - t0 < $GEMM_SECONDS:
    for _ in range(20): c = a @ b
    torch.cuda.synchronize(); n += 20
dt = time.time() - t0
print(f"bf16 8192^3: {2 * 8192**3 * n / dt / 1e12:.0f} TFLOP/s over {dt:.1f} s")
EOF
  stat_cmd=(env CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES="$DEVICE" python3 "$LOG_DIR/bf16_gemm.py")
fi
set +e
ours stat --json "$LOG_DIR/stat.json" -- "${stat_cmd[@]}" >"$LOG_DIR/stat_stdout.txt" 2>"$LOG_DIR/stat_report.txt"
stat_rc=$?
set -e
wait "$ours_pid" || true
[ $PEER = 1 ] && { wait "$peer_pid" || true; }

echo "3/3 results" >&2
python3 - "$LOG_DIR" "$PEER" "$stat_rc" <<'EOF'
import json, statistics, sys
log, peer, stat_rc = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
cpu = {line.split()[0]: line.split()[1:] for line in open(f"{log}/cpu_seconds.txt") if line.strip()}

def rows(path):
    head, out = None, []
    for line in open(path):
        if line.startswith("# gpu"): head = line[1:].split()
        elif line.startswith("#") or not line.strip() or head is None: continue
        else:
            cells = line.split()
            if len(cells) == len(head): out.append(dict(zip(head, cells)))
    return out

print("\n## CPU time (user + sys), same duration and interval\n")
print("| run | gpuclk dmon | nvidia-smi dmon | nvidia-smi / gpuclk |")
print("|---|---:|---:|---:|")
for key, label in (("puc", "-s puc -d 1"), ("all", "-s pucvmet -d 1"), ("100ms", "-s puc -d 0.1 (gpuclk only)")):
    o = cpu.get("ours_" + key); p = cpu.get("peer_" + key)
    ratio = f"{float(p[0]) / float(o[0]):.1f}x" if o and p and float(o[0]) > 0 else "–"
    print(f"| {label}, {o[1]} s | {o[0]} s | {p[0] + ' s' if p else '–'} | {ratio} |")

print("\n## Agreement while the GEMM ran (medians over the rows where sm > 50 %)\n")
ours = [r for r in rows(f"{log}/ours_gemm.txt") if r.get("sm", "-").isdigit() and int(r["sm"]) > 50]
theirs = [r for r in rows(f"{log}/smi_gemm.txt") if r.get("sm", "-").isdigit() and int(r["sm"]) > 50] if peer else []
print(f"rows: gpuclk {len(ours)}, nvidia-smi {len(theirs)}\n")
print("| column | gpuclk | nvidia-smi | difference |")
print("|---|---:|---:|---:|")
def median(rs, col):
    v = [float(r[col]) for r in rs if r.get(col, "-").replace(".", "").isdigit()]
    return statistics.median(v) if v else None
for col in ("pwr", "gtemp", "mtemp", "sm", "mem", "mclk", "pclk"):
    a, b = median(ours, col), median(theirs, col)
    d = f"{a - b:+.0f}" if a is not None and b is not None else "–"
    print(f"| {col} | {a if a is not None else '–'} | {b if b is not None else '–'} | {d} |")

print(f"\n## gpuclk stat around the GEMM (exit {stat_rc})\n")
try:
    s = json.load(open(f"{log}/stat.json"))
    for g in s["gpus"]:
        print(f"GPU {g['index']}: {g['duration_s']} s, energy {g['energy_j']} J ({g['energy_source']}), "
              f"power mean {g['power_w']['mean']} W peak {g['power_w']['peak']} W, SM clock p5/median/p95 "
              f"{g['sm_clock_mhz']['p5']}/{g['sm_clock_mhz']['median']}/{g['sm_clock_mhz']['p95']} of "
              f"{g['sm_clock_mhz']['max']} MHz, reasons {g['clock_reasons_pct']}, power violation counter "
              f"{g['violation_pct']['power']} %, GPM {g['gpm_pct']}")
        print(f"  verdict: {g['verdict']}" + (f"; also: {g['also']}" if g.get("also") else ""))
    print(f"sampling: {s['sampling']}")
except (OSError, ValueError, KeyError) as e:
    print(f"no stat report: {e}")
print(open(f"{log}/stat_stdout.txt").read().strip())
EOF
echo "logs: $LOG_DIR" >&2
