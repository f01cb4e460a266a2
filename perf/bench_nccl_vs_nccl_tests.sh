#!/usr/bin/env bash
# gpuclk bench nccl against NVIDIA's nccl-tests 2.19 on the same GPUs, in the same call (the
# multi-GPU machine; read-only: both only move data between GPUs). nccl-tests is built here
# against the NCCL of the PyTorch install (the nvidia-nccl wheel), and gpuclk loads that same
# libnccl.so.2, so both measure one NCCL. For all_reduce_perf, all_gather_perf,
# reduce_scatter_perf and sendrecv_perf against gpuclk's all_reduce, all_gather, reduce_scatter
# and send_recv, at every size both ran (out-of-place, as nccl-tests' first columns):
#   bus bandwidth at the large sizes (>= LARGE) within 0.97-1.03x of nccl-tests';
#   time at the small sizes (<= SMALL, where it is latency) within 10 % (0.90-1.10x).
#
#   perf/bench_nccl_vs_nccl_tests.sh [path/to/gpuclk]     (default build/device/gpuclk)
#   NCCL_TESTS=path to the nccl-tests source (default build/peers/nccl-tests: NVIDIA's
#     nccl-tests 2.19.6, github.com/NVIDIA/nccl-tests, carried to the GPU machine)
#   NCCL_HOME=the NCCL with include/ and lib/ (default: the nvidia-nccl wheel of python3's
#     PyTorch install: python3 -c "import nvidia.nccl, os; print(os.path.dirname(…))")
#   NGPUS (default: every GPU nvidia-smi lists), MAX (8G), ITERS (20), WARMUP (1),
#   LARGE (256M), SMALL (64K), GENCODE (sm_90: H100/H200), OUT (/tmp/gpuclk-nccl-vs-nccl-tests)
# Prints a markdown table per operation and a summary. Raw JSON, logs and the commands under
# $OUT. Exit: 0 every compared figure within bounds, 1 otherwise (or nothing compared), 2 a
# tool failed to build or run.
export GPUCLK_READ_ONLY=1
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
BIN=${1:-build/device/gpuclk}
SRC=${NCCL_TESTS:-build/peers/nccl-tests}
OUT=${OUT:-/tmp/gpuclk-nccl-vs-nccl-tests}
MAX=${MAX:-8G}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-1}
LARGE=${LARGE:-256M}
SMALL=${SMALL:-64K}
GENCODE=${GENCODE:--gencode=arch=compute_90,code=sm_90}
mkdir -p "$OUT"
: >"$OUT/commands.txt"

if [ -z "${NCCL_HOME:-}" ]; then
  NCCL_HOME=$(python3 -c "import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))") || {
    echo "no NCCL_HOME and no nvidia.nccl python package (pip install nvidia-nccl-cu12)" >&2
    exit 2
  }
fi
LIBNCCL="$NCCL_HOME/lib/libnccl.so.2"
[ -e "$LIBNCCL" ] || { echo "$LIBNCCL is not there" >&2; exit 2; }
NGPUS=${NGPUS:-$(nvidia-smi -L | grep -c '^GPU ')}
[ "$NGPUS" -ge 1 ] || { echo "no GPU listed by nvidia-smi -L" >&2; exit 2; }

# A wheel ships libnccl.so.2 but no libnccl.so for the linker: a shadow NCCL_HOME has both.
home="$OUT/nccl-home"
mkdir -p "$home/lib"
ln -sfn "$NCCL_HOME/include" "$home/include"
ln -sf "$LIBNCCL" "$home/lib/libnccl.so.2"
ln -sf "$LIBNCCL" "$home/lib/libnccl.so"
build="$OUT/nccl-tests-build"
echo "make -C $SRC -j16 CUDA_HOME=/usr/local/cuda NCCL_HOME=$home BUILDDIR=$build NVCC_GENCODE=$GENCODE" \
  >>"$OUT/commands.txt"
if ! make -C "$SRC" -j16 CUDA_HOME=/usr/local/cuda NCCL_HOME="$home" BUILDDIR="$build" \
  NVCC_GENCODE="$GENCODE" >"$OUT/build.log" 2>&1; then
  echo "nccl-tests did not build: see $OUT/build.log" >&2
  tail -20 "$OUT/build.log" >&2
  exit 2
fi

export LD_LIBRARY_PATH="$home/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
failed_tools=0
for t in all_reduce_perf all_gather_perf reduce_scatter_perf sendrecv_perf; do
  rm -f "$OUT/$t.json"
  cmd=("$build/$t" -b 8 -e "$MAX" -f 2 -g "$NGPUS" -n "$ITERS" -w "$WARMUP" -c 1 -J "$OUT/$t.json")
  echo "${cmd[*]}" >>"$OUT/commands.txt"
  "${cmd[@]}" >"$OUT/$t.txt" 2>&1 || { echo "$t failed: see $OUT/$t.txt" >&2; failed_tools=1; }
done
gpus=$(seq -s, 0 $((NGPUS - 1)))
# shellcheck disable=SC2054  # the commas are --ops' list and -i's
cmd=("$BIN" -i "$gpus" bench nccl --ops all_reduce,all_gather,reduce_scatter,send_recv
     --sizes "8:$MAX" --factor 2 --iters "$ITERS" --warmup "$WARMUP" --pair-size 0
     --nccl-lib "$LIBNCCL" --format json)
echo "${cmd[*]}" >>"$OUT/commands.txt"
"${cmd[@]}" >"$OUT/gpuclk.json" 2>"$OUT/gpuclk.err" || { echo "gpuclk failed: see $OUT/gpuclk.err" >&2; failed_tools=1; }
[ "$failed_tools" -eq 0 ] || exit 2

python3 - "$OUT" "$LARGE" "$SMALL" <<'EOF_PY'
import json, os, sys

out, large_text, small_text = sys.argv[1:4]

def size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)

LARGE, SMALL = size(large_text), size(small_text)
BUS_LOW, BUS_HIGH = 0.97, 1.03
TIME_LOW, TIME_HIGH = 0.90, 1.10

def nccl_tests(path):
    doc = json.load(open(path))
    rows = {}
    for r in doc.get("results", []):
        oop = r.get("out_of_place") or {}
        rows[int(r["size"])] = (float(oop["time"]), float(oop["bus_bw"]))
    return rows

mine = json.load(open(os.path.join(out, "gpuclk.json")))
gpuclk = {}
for op in mine.get("operations", []):
    rows = {}
    for r in op.get("results", []):
        oop = r["out_of_place"]
        rows[int(r["size"])] = (float(oop["time_us"]), float(oop["busbw_gb_per_s"]))
    gpuclk[op["nccl_tests"]] = rows
print(f"NCCL {mine['nccl']['version']} ({mine['nccl']['path']}), {len(mine.get('gpus', []))} GPUs")
print()

compared = failed = 0
for test in ("all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "sendrecv_perf"):
    theirs = nccl_tests(os.path.join(out, test + ".json"))
    ours = gpuclk.get(test, {})
    print(f"### {test}")
    print()
    print("| size (B) | nccl-tests time us | gpuclk time us | nccl-tests busbw GB/s | gpuclk busbw GB/s | judged | ratio | ok |")
    print("|---:|---:|---:|---:|---:|---|---:|---|")
    for s in sorted(set(theirs) & set(ours)):
        (t_time, t_bus), (g_time, g_bus) = theirs[s], ours[s]
        judged, ratio, ok = "-", None, True
        if s >= LARGE and t_bus > 0:
            judged, ratio = "busbw", g_bus / t_bus
            ok = BUS_LOW <= ratio <= BUS_HIGH
        elif s <= SMALL and t_time > 0:
            judged, ratio = "time", g_time / t_time
            ok = TIME_LOW <= ratio <= TIME_HIGH
        if ratio is not None:
            compared += 1
            failed += not ok
        print(f"| {s} | {t_time:.2f} | {g_time:.2f} | {t_bus:.2f} | {g_bus:.2f} | {judged} | "
              f"{'-' if ratio is None else f'{ratio:.3f}'} | {'-' if ratio is None else ('yes' if ok else 'NO')} |")
    print()
print(f"{compared} figures compared (busbw at >= {large_text}: {BUS_LOW}-{BUS_HIGH}x; time at "
      f"<= {small_text}: {TIME_LOW}-{TIME_HIGH}x), {failed} out of bounds")
sys.exit(1 if failed or compared == 0 else 0)
EOF_PY
