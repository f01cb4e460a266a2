#!/usr/bin/env bash
# gpuclk bench on real GPUs (the GPU machine; read-only: bench only reads the card's settings).
#   tests/device/bench_cli_test.sh [path/to/gpuclk]        (default build/device/gpuclk)
# Checks, each one line in the table on stdout; reports and logs under $OUT:
#   bf16 GEMM 5 s: runs, result checked, peaks and efficiencies present, and on an H100 at its
#     default settings the verdict names the SW power cap (docs/calibration.md: 98 % of the run);
#   mem copy and triad, fma, every GEMM dtype briefly; bench compare of a report with itself;
#   -i by UUID and bus id; CUDA_VISIBLE_DEVICES reordered (2+ GPUs): the right GPU still runs;
#   --concurrent on all GPUs (2+ GPUs): every GPU reports, and the across-GPU spread is there.
# Exit: 0 every check passed, 1 otherwise.
export GPUCLK_READ_ONLY=1
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-build/device/gpuclk}
OUT=${OUT:-/tmp/gpuclk-bench-cli}
mkdir -p "$OUT"
failures=0

row() { printf '| %-44s | %-6s | %s |\n' "$1" "$2" "$3"; }
check() {  # check NAME CONDITION_EXIT_STATUS DETAIL
  if [ "$2" -eq 0 ]; then row "$1" ok "$3"; else row "$1" FAIL "$3"; failures=$((failures + 1)); fi
}
# jqv FILE FILTER: one value from a report (python3: jq may be missing on the GPU machine).
jqv() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
value = json.load(open(sys.argv[1]))
for part in sys.argv[2].split("."):
    if part == "":
        continue
    value = value[int(part)] if isinstance(value, list) else value.get(part)
    if value is None:
        break
print("" if value is None else value)
EOF
}
# pyq FILE EXPRESSION: a Python expression over the report loaded as j.
pyq() { python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"; }
# bench NAME ARGS...: runs gpuclk with ARGS plus --json $OUT/NAME.json; table on $OUT/NAME.txt.
bench() {
  local name=$1
  shift
  "$BIN" "$@" --json "$OUT/$name.json" >"$OUT/$name.txt" 2>"$OUT/$name.err"
}

echo "| check | result | detail |"
echo "|---|---|---|"
gpus=$("$BIN" query --fields index --format csv,noheader 2>/dev/null | wc -l)
gpu0=$("$BIN" -i 0 query --fields name --format csv,noheader 2>/dev/null)
row "GPUs" info "$gpus: $gpu0"

bench bf16 -i 0 bench gemm --dtype bf16 --seconds 5; rc=$?
verdict=$(jqv "$OUT/bf16.json" results.0.verdict)
detail="exit $rc; $(jqv "$OUT/bf16.json" results.0.rate.median) TFLOP/s at $(jqv "$OUT/bf16.json" results.0.sm_clock_mhz.median) MHz; eff. $(jqv "$OUT/bf16.json" results.0.efficiency_pct.at_max_clock) % of max-clock peak, $(jqv "$OUT/bf16.json" results.0.efficiency_pct.at_median_clock) % at its clock"
check "gemm bf16 5 s runs and passes its check" $(( rc != 0 )) "$detail"
check "gemm bf16 has both peaks" "$( [ -n "$(jqv "$OUT/bf16.json" results.0.peak.at_median_clock)" ]; echo $?)" "$(jqv "$OUT/bf16.json" results.0.peak.basis)"
if [[ "$gpu0" == *H100* ]]; then
  [[ "$verdict" == "SW power cap"*"the power limit, not the kernel, set this ceiling"* ]]
  check "H100 bf16 verdict names the power cap" $? "$verdict"
else
  row "bf16 verdict (not an H100: not asserted)" info "$verdict"
fi
row "bf16 also" info "$(jqv "$OUT/bf16.json" results.0.also)"

bench mem -i 0 bench mem --kind copy,triad --seconds 3; rc=$?
check "mem copy, triad" "$rc" "copy $(jqv "$OUT/mem.json" results.0.rate.median) GB/s = $(jqv "$OUT/mem.json" results.0.efficiency_pct.at_max_clock) % of DRAM peak; triad $(jqv "$OUT/mem.json" results.1.rate.median) GB/s; $(jqv "$OUT/mem.json" results.0.verdict)"

bench fma -i 0 bench fma --seconds 3; rc=$?
check "fma" "$rc" "$(jqv "$OUT/fma.json" results.0.rate.median) TFLOP/s, $(jqv "$OUT/fma.json" results.0.efficiency_pct.at_median_clock) % of FP32 peak at its clock; $(jqv "$OUT/fma.json" results.0.verdict)"

dtypes=fp32,tf32,fp16,bf16
[[ "$gpu0" == *H100* || "$gpu0" == *H200* ]] && dtypes=$dtypes,fp8
bench dtypes -i 0 bench gemm --dtype $dtypes --seconds 1 --warmup 0.5; rc=$?
check "gemm $dtypes, 1 s each" "$rc" "$(pyq "$OUT/dtypes.json" "', '.join('%s %s (%s %%)' % (r['variant'].split()[0], r['rate']['median'], r['efficiency_pct']['at_median_clock']) for r in j['results'])")"

"$BIN" bench compare "$OUT/bf16.json" "$OUT/bf16.json" --format json >"$OUT/compare.json" 2>&1; rc=$?
check "bench compare of a report with itself" "$(( rc != 0 ))" "ratio $(jqv "$OUT/compare.json" 0.ratio)"

uuid=$(jqv "$OUT/bf16.json" results.0.gpu.uuid)
bus=$(jqv "$OUT/bf16.json" results.0.gpu.pci_bus_id)
bench by_uuid -i "$uuid" bench fma --seconds 0.5 --warmup 0.2; rc1=$?
bench by_bus -i "$bus" bench fma --seconds 0.5 --warmup 0.2; rc2=$?
same=$([ "$(jqv "$OUT/by_uuid.json" results.0.gpu.index)" = 0 ] && [ "$(jqv "$OUT/by_bus.json" results.0.gpu.index)" = 0 ]; echo $?)
check "-i by UUID and by bus id" $(( rc1 || rc2 || same )) "$uuid / $bus"

if [ "$gpus" -ge 2 ]; then
  # CUDA sees the GPUs in the other order: NVML GPU 0 must still be the one that runs.
  CUDA_VISIBLE_DEVICES=1,0 bench reordered -i 0 bench fma --seconds 0.5 --warmup 0.2; rc=$?
  [ "$rc" = 0 ] && [ "$(jqv "$OUT/reordered.json" results.0.gpu.uuid)" = "$uuid" ] &&
    [ "$(jqv "$OUT/reordered.json" results.0.gpu.cuda_ordinal)" = 1 ]
  check "CUDA_VISIBLE_DEVICES=1,0 -i 0 runs NVML GPU 0" $? "cuda ordinal $(jqv "$OUT/reordered.json" results.0.gpu.cuda_ordinal)"

  bench concurrent bench gemm --dtype bf16 --seconds 5 --concurrent; rc=$?
  n=$(pyq "$OUT/concurrent.json" "len(j['results'])")
  [ "$rc" = 0 ] && [ "$n" = "$gpus" ] && [ -n "$(jqv "$OUT/concurrent.json" across_gpus.0.verdict)" ]
  check "--concurrent bf16 on $gpus GPUs" $? "$(pyq "$OUT/concurrent.json" "'; '.join('GPU %s %s TFLOP/s at %s MHz' % (r['gpu']['index'], r['rate']['median'], r['sm_clock_mhz']['median']) for r in j['results'])"); slowest/fastest $(jqv "$OUT/concurrent.json" across_gpus.0.slowest_vs_fastest_pct) %: $(jqv "$OUT/concurrent.json" across_gpus.0.verdict)"
else
  row "--concurrent, CUDA_VISIBLE_DEVICES reorder" skip "one GPU here (run on nvidia-h200-x2)"
fi

echo
echo "full reports: $OUT/*.txt, *.json"
cat "$OUT/bf16.txt"
exit $(( failures > 0 ))
