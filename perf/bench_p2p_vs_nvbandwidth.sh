#!/usr/bin/env bash
# gpuclk bench p2p against NVIDIA's nvbandwidth v0.8 on the same host, in the same call (the GPU
# machine; read-only: both only copy memory). Every gpuclk figure must reach 0.97x nvbandwidth's
# (for latency, lower is better: the ratio is nvbandwidth's ns over gpuclk's).
#   perf/bench_p2p_vs_nvbandwidth.sh [path/to/gpuclk]     (default build/device/gpuclk)
#   NVBANDWIDTH=path/to/nvbandwidth (default build/peers/nvbandwidth: NVIDIA's nvbandwidth v0.8,
#   github.com/NVIDIA/nvbandwidth, built for sm_90 with CUDA 13 and carried to the GPU machine)
#   EXTRA="--samples 9" passes more options to gpuclk bench p2p.
# Prints a markdown table: figure, nvbandwidth, gpuclk, ratio, >= 0.97. Raw JSON and logs under
# $OUT. Exit: 0 every ratio >= 0.97, 1 otherwise (or nothing to compare), 2 a tool failed.
export GPUCLK_READ_ONLY=1
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/device/gpuclk}
NVB=${NVBANDWIDTH:-build/peers/nvbandwidth}
OUT=${OUT:-/tmp/gpuclk-p2p-vs-nvbandwidth}
mkdir -p "$OUT"

# The nvbandwidth test behind each gpuclk figure (src/bench/p2p_figures.cpp names the same).
tests=(host_to_device_memcpy_ce device_to_host_memcpy_ce device_local_copy
       device_to_device_memcpy_read_ce device_to_device_memcpy_write_ce
       device_to_device_bidirectional_memcpy_read_ce device_to_device_memcpy_read_sm
       device_to_device_memcpy_write_sm device_to_device_bidirectional_memcpy_read_sm
       device_to_device_latency_sm)

echo "nvbandwidth: $NVB -j -t ${tests[*]}" >"$OUT/commands.txt"
"$NVB" -j -t "${tests[@]}" >"$OUT/nvbandwidth.json" 2>"$OUT/nvbandwidth.err"
nvb_rc=$?
echo "gpuclk: $BIN bench p2p --format json ${EXTRA:-}" >>"$OUT/commands.txt"
# shellcheck disable=SC2086  # EXTRA is a list of options
"$BIN" bench p2p --format json ${EXTRA:-} >"$OUT/gpuclk.json" 2>"$OUT/gpuclk.err"
gpuclk_rc=$?
if [ "$nvb_rc" -ne 0 ] || [ "$gpuclk_rc" -ne 0 ]; then
  echo "nvbandwidth exit $nvb_rc, gpuclk exit $gpuclk_rc: see $OUT/*.err" >&2
  tail -5 "$OUT/nvbandwidth.err" "$OUT/gpuclk.err" >&2
  exit 2
fi

python3 - "$OUT/nvbandwidth.json" "$OUT/gpuclk.json" <<'EOF_PY'
import json, sys

THRESHOLD = 0.97

def load_json(path):
    text = open(path).read()
    # nvbandwidth may print notes before its document: start at the first brace.
    return json.loads(text[text.index("{"):])

def number(cell):
    try:
        value = float(cell)
    except (TypeError, ValueError):
        return None  # "N/A" (the diagonal, waived pairs)
    return value if value > 0 else None

def nvbandwidth_matrices(doc):
    root = doc.get("nvbandwidth", doc)
    out = {}
    for case in root.get("testcases", []) or []:
        name = case.get("name")
        matrix = case.get("bandwidth_matrix") or []
        if not name or not matrix or str(case.get("status", "Passed")).lower() not in ("passed", ""):
            continue
        columns = len(matrix[0])
        # A bidirectional test appends its matrices one after another (read1, read2, total):
        # the total is the last block of `columns` rows.
        if len(matrix) > columns and len(matrix) % columns == 0:
            matrix = matrix[-columns:]
        out[name] = [[number(c) for c in row] for row in matrix]
    return out

nvb = nvbandwidth_matrices(load_json(sys.argv[1]))
mine = load_json(sys.argv[2])
cuda_of = {g["index"]: g["cuda_ordinal"] for g in mine.get("gpus", [])}

rows = []  # (label, nvbandwidth, gpuclk, latency?)
for pair in mine.get("peer", []):
    a, b = cuda_of.get(pair["gpu"]), cuda_of.get(pair["peer"])
    for key, f in pair.get("figures", {}).items():
        test = f.get("nvbandwidth_test")
        matrix = nvb.get(test)
        theirs = None
        if matrix and a is not None and b is not None and a < len(matrix) and b < len(matrix[a]):
            theirs = matrix[a][b]
        rows.append((f"{key} cuda{a}->cuda{b} ({test})", theirs, f.get("value"), f.get("unit") == "ns"))
for host in mine.get("host", []):
    if not host.get("local", True):
        continue  # nvbandwidth places host memory on the GPU's own node only
    a = cuda_of.get(host["gpu"])
    for key, f in host.get("figures", {}).items():
        test = f.get("nvbandwidth_test")
        matrix = nvb.get(test)
        theirs = matrix[0][a] if matrix and a is not None and a < len(matrix[0]) else None
        rows.append((f"{key} cuda{a} ({test})", theirs, f.get("value"), False))

print("| figure | nvbandwidth | gpuclk | ratio | >= 0.97 |")
print("|---|---|---|---|---|")
compared, failed = 0, 0
for label, theirs, ours, latency in rows:
    unit = "ns" if latency else "GB/s"
    if theirs is None or not ours:
        print(f"| {label} | {theirs if theirs is not None else 'N/A'} | {ours if ours else 'N/A'} | - | not compared |")
        continue
    ratio = theirs / ours if latency else ours / theirs
    ok = ratio >= THRESHOLD
    compared += 1
    failed += not ok
    print(f"| {label} | {theirs:.2f} {unit} | {ours:.2f} {unit} | {ratio:.3f} | {'yes' if ok else 'NO'} |")
print()
print(f"{compared} figures compared, {failed} below {THRESHOLD}x (latency: nvbandwidth ns / gpuclk ns)")
sys.exit(1 if failed or compared == 0 else 0)
EOF_PY
