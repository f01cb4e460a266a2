#!/usr/bin/env bash
# gpuclk bench nccl against NVIDIA's nccl-tests 2.19 on the same GPUs, in the same call (the
# multi-GPU machine; read-only: both only move data between GPUs). nccl-tests is built here
# against the NCCL of the PyTorch install (the nvidia-nccl wheel), and gpuclk loads that same
# libnccl.so.2, so both measure one NCCL. For all_reduce_perf, all_gather_perf,
# reduce_scatter_perf and sendrecv_perf against gpuclk's all_reduce, all_gather, reduce_scatter
# and send_recv, at every size both ran (out-of-place, as nccl-tests' first columns):
#   bus bandwidth at the large sizes (>= LARGE) within 0.97-1.03x of nccl-tests';
#   time at the small sizes (<= SMALL, where it is latency) within 10 % (0.90-1.10x), judged on
#   the median ratio over those sizes (one 20-iteration figure at a few µs varies 10-30 % from
#   run to run, for either tool).
#
#   perf/bench_nccl_vs_nccl_tests.sh [path/to/gpuclk]     (default build/device/gpuclk)
#   NCCL_TESTS=path to the nccl-tests source (default build/peers/nccl-tests: NVIDIA's
#     nccl-tests 2.19.6, github.com/NVIDIA/nccl-tests, carried to the GPU machine)
#   NCCL_HOME=the NCCL with include/ and lib/ (default: the nvidia-nccl wheel of python3's
#     PyTorch install, else the system's libnccl.so.2 and /usr/include/nccl.h)
#   NGPUS (default: every GPU nvidia-smi lists), MAX (8G), ITERS (20), WARMUP (1),
#   ROUNDS (3: each tool runs this many times, alternating; figures are medians over them),
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
ROUNDS=${ROUNDS:-3}
SMALL=${SMALL:-64K}
GENCODE=${GENCODE:--gencode=arch=compute_90,code=sm_90}
mkdir -p "$OUT"
: >"$OUT/commands.txt"

# The NCCL both tools use: NCCL_HOME, else the nvidia-nccl wheel of python3's PyTorch install (a
# namespace package: its __path__, not __file__), else the system's (libnccl2 + libnccl-dev).
if [ -z "${NCCL_HOME:-}" ]; then
  NCCL_HOME=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null)
fi
if [ -n "${NCCL_HOME:-}" ]; then
  INCLUDE="$NCCL_HOME/include"
  LIBNCCL="$NCCL_HOME/lib/libnccl.so.2"
elif [ -e /usr/include/nccl.h ]; then
  INCLUDE=/usr/include
  LIBNCCL=$(ldconfig -p | awk '/libnccl.so.2 / { print $NF; exit }')
else
  echo "no NCCL_HOME, no nvidia.nccl python package and no system nccl.h" >&2
  exit 2
fi
[ -e "$INCLUDE/nccl.h" ] || { echo "$INCLUDE/nccl.h is not there" >&2; exit 2; }
[ -e "$LIBNCCL" ] || { echo "$LIBNCCL is not there" >&2; exit 2; }
NGPUS=${NGPUS:-$(nvidia-smi -L | grep -c '^GPU ')}
[ "$NGPUS" -ge 1 ] || { echo "no GPU listed by nvidia-smi -L" >&2; exit 2; }

# A wheel ships libnccl.so.2 but no libnccl.so for the linker: a shadow NCCL_HOME has both.
home="$OUT/nccl-home"
mkdir -p "$home/lib"
ln -sfn "$INCLUDE" "$home/include"
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
gpus=$(seq -s, 0 $((NGPUS - 1)))
# Each tool ROUNDS times, alternating, so drift (clocks, the other's leftovers) falls on both.
for round in $(seq 1 "$ROUNDS"); do
  dir="$OUT/round$round"
  mkdir -p "$dir"
  for t in all_reduce_perf all_gather_perf reduce_scatter_perf sendrecv_perf; do
    rm -f "$dir/$t.json"
    cmd=("$build/$t" -b 8 -e "$MAX" -f 2 -g "$NGPUS" -n "$ITERS" -w "$WARMUP" -c 1 -J "$dir/$t.json")
    echo "${cmd[*]}" >>"$OUT/commands.txt"
    "${cmd[@]}" >"$dir/$t.txt" 2>&1 || { echo "$t failed: see $dir/$t.txt" >&2; exit 2; }
  done
  # shellcheck disable=SC2054  # the commas are --ops' list and -i's
  cmd=("$BIN" -i "$gpus" bench nccl --ops all_reduce,all_gather,reduce_scatter,send_recv
       --sizes "8:$MAX" --factor 2 --iters "$ITERS" --warmup "$WARMUP" --pair-size 0
       --nccl-lib "$LIBNCCL" --format json)
  echo "${cmd[*]}" >>"$OUT/commands.txt"
  "${cmd[@]}" >"$dir/gpuclk.json" 2>"$dir/gpuclk.err" || { echo "gpuclk failed: see $dir/gpuclk.err" >&2; exit 2; }
done

python3 - "$OUT" "$LARGE" "$SMALL" "$ROUNDS" <<'EOF_PY'
import json, os, sys

out, large_text, small_text, rounds = sys.argv[1:5]
rounds = [os.path.join(out, f"round{r}") for r in range(1, int(rounds) + 1)]

def size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)

LARGE, SMALL = size(large_text), size(small_text)
BUS_LOW, BUS_HIGH = 0.97, 1.03
TIME_LOW, TIME_HIGH = 0.90, 1.10

def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else 0.0

def nccl_tests(path):
    doc = json.load(open(path))
    rows = {}
    for r in doc.get("results", []):
        oop = r.get("out_of_place") or {}
        rows[int(r["size"])] = (float(oop["time"]), float(oop["bus_bw"]))
    return rows

def gpuclk_rows(path):
    doc = json.load(open(path))
    tables = {}
    for op in doc.get("operations", []):
        tables[op["nccl_tests"]] = {
            int(r["size"]): (float(r["out_of_place"]["time_us"]),
                             float(r["out_of_place"]["busbw_gb_per_s"]))
            for r in op.get("results", [])}
    return doc, tables

def across_rounds(tables):
    """Per size, the median over rounds of time and of bus bandwidth."""
    sizes = set.intersection(*(set(t) for t in tables)) if tables else set()
    return {s: (median([t[s][0] for t in tables]), median([t[s][1] for t in tables]))
            for s in sizes}

mine = [gpuclk_rows(os.path.join(r, "gpuclk.json")) for r in rounds]
doc = mine[-1][0]
print(f"NCCL {doc['nccl']['version']} ({doc['nccl']['path']}), {len(doc.get('gpus', []))} GPUs, "
      f"{len(rounds)} rounds of each tool, alternating; figures are the medians over the rounds")
print()

compared = failed = 0
for test in ("all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "sendrecv_perf"):
    theirs = across_rounds([nccl_tests(os.path.join(r, test + ".json")) for r in rounds])
    ours = across_rounds([tables.get(test, {}) for _, tables in mine])
    print(f"### {test}")
    print()
    print("| size (B) | nccl-tests time us | gpuclk time us | nccl-tests busbw GB/s | gpuclk busbw GB/s | ratio | judged |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    small = []  # time ratios at the small sizes that move data
    for s in sorted(set(theirs) & set(ours)):
        (t_time, t_bus), (g_time, g_bus) = theirs[s], ours[s]
        ratio, judged = None, "-"
        if s >= LARGE and t_bus > 0:
            ratio = g_bus / t_bus
            ok = BUS_LOW <= ratio <= BUS_HIGH
            judged = f"busbw {'yes' if ok else 'NO'}"
            compared += 1
            failed += not ok
        elif 0 < s <= SMALL and t_time > 0:
            ratio = g_time / t_time
            small.append(ratio)
            judged = "time (median below)"
        print(f"| {s} | {t_time:.2f} | {g_time:.2f} | {t_bus:.2f} | {g_bus:.2f} | "
              f"{'-' if ratio is None else f'{ratio:.3f}'} | {judged} |")
    if small:
        # A figure of a few µs swings by 10-30 % from run to run, for either tool: the latency
        # is judged on the median ratio over the small sizes of the medians over the rounds.
        typical = median(small)
        ok = TIME_LOW <= typical <= TIME_HIGH
        compared += 1
        failed += not ok
        print()
        print(f"latency: median time ratio gpuclk / nccl-tests over {len(small)} sizes <= "
              f"{small_text}: {typical:.3f} ({'yes' if ok else 'NO'})")
    print()
print(f"{compared} figures compared (busbw at each size >= {large_text}: {BUS_LOW}-{BUS_HIGH}x; "
      f"median time over the sizes <= {small_text}: {TIME_LOW}-{TIME_HIGH}x), {failed} out of "
      "bounds")
sys.exit(1 if failed or compared == 0 else 0)
EOF_PY
