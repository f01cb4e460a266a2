#!/usr/bin/env bash
# On real GPUs: the service's attribution (docs/attribution.md) of real CUDA processes. Two
# `gpuclk bench gemm` processes share GPU 0 (the driver time-slices them) and, on a host with a
# second GPU, one runs alone on GPU 1. The service (read-only, its own socket and state) reads its
# slow tier every second. Checked:
#   - every bench process is listed with its owner and gets energy; the two on GPU 0 are split by
#     the driver's per-process SM samples (split "sm"), not by memory or equal parts;
#   - per GPU, idle + processes equal the counter's move between the first and last interval
#     the service booked (nothing lost or booked twice);
#   - what the two NVML calls attribution adds cost per GPU (GPUCLK_NVML_TRACE).
# Writes $OUT/attribution.md (docs/results/) and the raw answers; exit 1 on a failed check, 77
# without a GPU. Never writes a setting: GPUCLK_READ_ONLY=1 and a temporary --state-dir.
#
#   tests/device/attribution_test.sh   (GPUCLK_BIN, default build/device/gpuclk; OUT for logs)
export GPUCLK_READ_ONLY=1
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${GPUCLK_BIN:-build/device/gpuclk}
OUT=${OUT:-/tmp/gpuclk-attribution}
SECONDS_EACH=${SECONDS_EACH:-20}
mkdir -p "$OUT"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "skip: no NVIDIA GPU here"; exit 77; fi
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-attribution.XXXXXX")
SERVE=""
trap '[ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
GPUS=$(nvidia-smi -L | wc -l)
FAIL=0
fail() { echo "FAIL: $*"; FAIL=1; }

GPUCLK_NVML_TRACE="$OUT/serve_nvml_trace.txt" GPUCLK_STATE_DIR="$T/state" \
  "$BIN" --socket "$T/s.sock" serve --counters-interval 1s 2>"$OUT/serve.log" &
SERVE=$!
for _ in $(seq 100); do grep -q "sampling every" "$OUT/serve.log" && break; sleep 0.2; done
grep -q "sampling every" "$OUT/serve.log" || { cat "$OUT/serve.log"; exit 1; }
sleep 3

bench() {  # NAME GPU (in the background; not in a subshell, so that `wait` can wait for it)
  "$BIN" -i "$2" bench gemm --dtype bf16 --seconds "$SECONDS_EACH" --warmup 1 --no-check \
    >"$OUT/bench_$1.txt" 2>&1 &
}
bench a 0
A=$!
bench b 0
B=$!
C=""
if [ "$GPUS" -ge 2 ]; then
  bench c 1
  C=$!
fi
sleep $((SECONDS_EACH / 2))
"$BIN" --socket "$T/s.sock" ps >"$OUT/ps_running.txt" 2>&1 || fail "ps: $(cat "$OUT/ps_running.txt")"
nvidia-smi --query-compute-apps=gpu_bus_id,pid,used_memory --format=csv >"$OUT/nvidia_smi_apps.txt" 2>&1
wait "$A" "$B" ${C:+"$C"}
sleep 3
"$BIN" --socket "$T/s.sock" ps --all --format json >"$OUT/processes.json" 2>&1 || fail "ps --all"
"$BIN" --socket "$T/s.sock" ps --all >"$OUT/ps_all.txt" 2>&1
kill "$SERVE"
wait "$SERVE" 2>/dev/null
SERVE=""

python3 - "$OUT" "$A" "$B" "$C" <<'PY' || FAIL=1
import json, sys
out, pids = sys.argv[1], {"a": sys.argv[2], "b": sys.argv[3], "c": sys.argv[4]}
answer = json.load(open(f"{out}/processes.json"))
lines, ok = [], True
def check(cond, what):
    global ok
    lines.append(("| ok | " if cond else "| FAIL | ") + what + " |")
    ok = ok and cond
procs = {p["pid"]: p for p in answer["processes"]}
energy = {}
for name, pid in pids.items():
    if not pid: continue
    p = procs.get(int(pid))
    check(p is not None, f"bench {name} (pid {pid}) listed")
    if p is None: continue
    energy[name] = p["usage"]["energy_j"]
    check(p["usage"]["energy_j"] > 0, f"bench {name}: {p['usage']['energy_j']:.0f} J on GPU {p['gpu']}, "
          f"GPU time {p['usage']['context_s']:.1f} s, busy {p['usage']['busy_s']:.1f} s, owner {p['owner']}, last split {p['split']}")
books = answer["books"]
check(books[0]["split_j"]["sm"] > 0, f"GPU 0 split by SM samples: {books[0]['split_j']['sm']:.0f} J "
      f"(equal {books[0]['split_j']['equal']:.0f} J, memory {books[0]['split_j']['memory']:.0f} J)")
if "a" in energy and "b" in energy:
    ratio = energy["a"] / energy["b"]
    check(0.5 < ratio < 2.0, f"the two like processes on GPU 0 got like shares: a/b = {ratio:.2f}")
for gpu, b in enumerate(books):
    parts = b["idle_j"] + b["unknown_j"] + sum(b["split_j"].values())
    if "first_counter_j" not in b: continue
    moved = b["last_counter_j"] - b["first_counter_j"]
    check(abs(parts - moved) <= 0.01 * max(moved, 1),
          f"GPU {gpu}: booked {parts:.0f} J (idle {b['idle_j']:.0f} J), the counter moved {moved:.0f} J")
trace = open(f"{out}/serve_nvml_trace.txt").read().splitlines()
calls = [l for l in trace if "ProcessUtilization" in l or "ComputeRunningProcesses" in l]
with open(f"{out}/attribution.md", "w") as f:
    f.write("| result | check |\n|---|---|\n" + "\n".join(lines) + "\n\nNVML calls attribution adds "
            "(the service's GPUCLK_NVML_TRACE):\n\n```\n" + "\n".join(calls) + "\n```\n")
print("\n".join(lines)); print("\n".join(calls))
sys.exit(0 if ok else 1)
PY
exit $FAIL
