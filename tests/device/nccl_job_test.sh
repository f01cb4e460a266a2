#!/usr/bin/env bash
# On real GPUs: a PyTorch job with NCCL (torch.distributed, one process per rank, a DDP-like step:
# a BF16 GEMM, then two 25 MiB all-reduces) runs with NVIDIA's NCCL Inspector enabled, and the
# node service (read-only, its own socket and state, --nccl-inspector-dir) follows the plugin's
# files as they grow (docs/nccl.md). Checked:
#   - the plugin wrote one file per rank, every line a record gpuclk's reader takes;
#   - /metrics carries the job's all-reduces (operations, bytes, time, bus bandwidth, time share)
#     under the owner the attribution gave its processes, and the reader met no problem;
#   - `gpuclk ps` and `gpuclk stat --job OWNER` show the job's collectives;
#   - with LATE_RANK=K on a host of two GPUs or more (rank K sleeps LATE_MS before each step, as
#     a rank with more input or compute would; no setting of the GPUs changes), `gpuclk doctor`
#     names rank K's GPU in a late_rank finding; without it, no late_rank finding.
# On one GPU the job has one rank, and a one-rank communicator's collectives never reach NCCL's
# profiler: the plugin makes its file and writes nothing into it (torch 2.11, NCCL 2.28.9 on an
# H100: 3763 steps, 0 bytes; docs/results/nccl_job_h100.md). There the test checks what it can
# (the plugin loads and makes a file per rank, the service follows it without a problem) and
# exits 77 naming what needs two GPUs. Where the processes run in a container (as on the GPU
# machines we use), the attribution books them to the container, not SLURM_JOB_ID: the
# series' job label is checked against what `ps` says of the ranks' owner.
# The plugin's files are kept under $OUT/inspector/ (recordings for tests/data/nccl_inspector/).
#
#   tests/device/nccl_job_test.sh   (GPUCLK_BIN, default build/device/gpuclk; OUT for logs;
#                                    RANKS (default: every GPU), SECONDS_RUN (default 25), JOB_ID,
#                                    LATE_RANK, LATE_MS (default 20), TORCH_PYTHON,
#                                    NCCL_INSPECTOR_SRC (default build/peers/nccl-inspector) or
#                                    NCCL_INSPECTOR_PLUGIN (a built libnccl-profiler-inspector.so))
# Exit 1 on a failed check, 77 without a GPU, PyTorch or the plugin. Never writes a setting:
# GPUCLK_READ_ONLY=1 and a temporary --state-dir.
export GPUCLK_READ_ONLY=1
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
BIN=${GPUCLK_BIN:-build/device/gpuclk}
OUT=${OUT:-/tmp/gpuclk-nccl-job}
SECONDS_RUN=${SECONDS_RUN:-25}
LATE_MS=${LATE_MS:-20}
# The ranks carry SLURM_JOB_ID, as a Slurm job's tasks do: the attribution books them to that job.
JOB_ID=${JOB_ID:-4242}
mkdir -p "$OUT"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "skip: no NVIDIA GPU here"; exit 77; fi
GPUS=$(nvidia-smi -L | wc -l)
RANKS=${RANKS:-$GPUS}
PY=${TORCH_PYTHON:-}
for p in /opt/torch/.venv/bin/python3 python3; do
  [ -n "$PY" ] && break
  "$p" -c 'import torch.distributed' 2>/dev/null && PY=$p
done
[ -n "$PY" ] || { echo "skip: no python3 with PyTorch (set TORCH_PYTHON)"; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-nccl-job.XXXXXX")
SERVE=""
trap '[ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
FAIL=0
fail() { echo "FAIL: $*"; FAIL=1; }
ok() { echo "ok: $*"; }

PLUGIN=${NCCL_INSPECTOR_PLUGIN:-}
if [ -z "$PLUGIN" ]; then
  SRC=${NCCL_INSPECTOR_SRC:-build/peers/nccl-inspector}
  [ -f "$SRC/Makefile" ] || { echo "skip: no NCCL Inspector source at $SRC (NCCL_INSPECTOR_SRC)"; exit 77; }
  cp -r "$SRC" "$T/plugin"
  make -C "$T/plugin" CUDA_HOME=/usr/local/cuda >"$OUT/plugin_build.log" 2>&1 ||
    { tail -20 "$OUT/plugin_build.log"; echo "FAIL: the plugin did not build"; exit 1; }
  PLUGIN=$(find "$T/plugin" -name 'libnccl-profiler-inspector.so' | head -1)
fi
[ -f "$PLUGIN" ] || { echo "skip: no libnccl-profiler-inspector.so"; exit 77; }
"$PY" -c 'import torch; print("torch", torch.__version__, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))' \
  | tee "$OUT/versions.txt"

GPUCLK_STATE_DIR="$T/state" "$BIN" --socket "$T/s.sock" serve --counters-interval 1s \
  --listen 127.0.0.1:0 --nccl-inspector-dir "$T/nccl" 2>"$OUT/serve.log" >&2 &
SERVE=$!
mkdir -p "$T/nccl"
for _ in $(seq 100); do grep -q "metrics http" "$OUT/serve.log" && break; sleep 0.2; done
URL=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$OUT/serve.log" | head -1)
[ -n "$URL" ] || { cat "$OUT/serve.log"; echo "FAIL: the service did not start"; exit 1; }

# The job: one process per rank, rank r on GPU r mod GPUs.
cat >"$T/job.py" <<'PY'
import os, sys, time, torch, torch.distributed as dist
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
seconds, late_rank, late_ms = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
torch.cuda.set_device(rank % torch.cuda.device_count())
dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
c = torch.empty_like(a)
buckets = [torch.randn(25 * 2**20 // 4, device="cuda") for _ in range(2)]
steps, end = 0, time.time() + seconds
while True:
    done = torch.tensor([time.time() > end], device="cuda", dtype=torch.int32)
    dist.all_reduce(done, op=dist.ReduceOp.MAX)
    if done.item():
        break
    if rank == late_rank:
        time.sleep(late_ms / 1000)
    for _ in range(4):
        torch.matmul(a, a, out=c)
    for b in buckets:
        dist.all_reduce(b)
    torch.cuda.synchronize()
    steps += 1
print(f"rank {rank}: {steps} steps", flush=True)
dist.destroy_process_group()
PY
mkdir -p "$T/nccl/job"
PIDS=()
for r in $(seq 0 $((RANKS - 1))); do
  env RANK="$r" WORLD_SIZE="$RANKS" LOCAL_RANK="$r" MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 \
    NCCL_PROFILER_PLUGIN="$PLUGIN" NCCL_INSPECTOR_ENABLE=1 NCCL_INSPECTOR_DUMP_DIR="$T/nccl/job" \
    NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=500000 SLURM_JOB_ID="$JOB_ID" \
    "$PY" "$T/job.py" "$SECONDS_RUN" "${LATE_RANK:--1}" "$LATE_MS" >"$OUT/rank$r.log" 2>&1 &
  PIDS+=($!)
done
echo "job: $RANKS rank(s), pids ${PIDS[*]}${LATE_RANK:+, rank $LATE_RANK $LATE_MS ms late each step}"
sleep $((SECONDS_RUN * 2 / 3))
curl -s "$URL" >"$OUT/metrics_running.txt"
"$BIN" --socket "$T/s.sock" ps >"$OUT/ps_running.txt" 2>&1
"$BIN" --socket "$T/s.sock" ps --format json >"$OUT/ps_running.json" 2>&1
"$BIN" --socket "$T/s.sock" doctor --duration 10s >"$OUT/doctor.txt" 2>&1
OWNER=$(grep -o 'gpuclk_job_nccl_operations_total{job="[^"]*"' "$OUT/metrics_running.txt" | head -1 | sed 's/.*job="//; s/"$//')
"$BIN" --socket "$T/s.sock" stat --job "$JOB_ID" >"$OUT/stat_job.txt" 2>&1
for p in "${PIDS[@]}"; do wait "$p" || fail "rank pid $p exited $?: $(tail -3 "$OUT/rank"*.log)"; done
sleep 2
curl -s "$URL" >"$OUT/metrics_end.txt"
kill "$SERVE"; wait "$SERVE" 2>/dev/null; SERVE=""
rm -rf "$OUT/inspector"; mkdir -p "$OUT/inspector" && cp "$T"/nccl/job/*.log "$OUT/inspector/" 2>/dev/null

not() { ! "$@"; }
# check CONDITION-COMMAND... -- WHAT WHY-NOT: "ok: WHAT" when the command succeeds, else FAIL.
check() {
  local cmd=() what why
  while [ "$1" != "--" ]; do cmd+=("$1"); shift; done
  what=$2 why=$3
  if "${cmd[@]}"; then ok "$what"; else fail "$why"; fi
}
logs=("$OUT"/inspector/*.log)
files=0; [ -e "${logs[0]}" ] && files=${#logs[@]}
check test "$files" -eq "$RANKS" -- "the plugin wrote $files file(s), one per rank" \
  "the plugin wrote $files file(s) for $RANKS rank(s) (NCCL's profiler lines: grep -i profiler $OUT/rank0.log)"
grep -E '^gpuclk_(job_nccl|nccl_inspector)' "$OUT/metrics_end.txt" | sed 's/^/  /'
check grep -q "^gpuclk_nccl_inspector_files $RANKS\$" "$OUT/metrics_running.txt" -- \
  "the service follows the $RANKS file(s)" "the service does not follow the plugin's files"
if [ "$RANKS" -lt 2 ]; then
  bytes=$(cat "$OUT"/inspector/*.log 2>/dev/null | wc -c)
  echo "one rank: the plugin's file holds $bytes bytes (a one-rank communicator's collectives do not reach the profiler)"
  [ "$FAIL" -eq 0 ] || exit 1
  echo "skip: the job's records, series, ps, stat --job and late_rank need two GPUs or more (RANKS=$RANKS)"
  exit 77
fi
# The ranks' owner as the attribution saw it: their Slurm job, or the container they run in.
ps_owner=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(next((p['owner'] for p in d['processes'] if p['pid']==int(sys.argv[2])), ''))" \
  "$OUT/ps_running.json" "${PIDS[0]}" 2>/dev/null)
check test -n "$OWNER" -a "$OWNER" = "${ps_owner:-slurm:$JOB_ID}" -- "/metrics: the job's collectives under job=\"$OWNER\"" \
  "no gpuclk_job_nccl series of the ranks' owner ${ps_owner:-slurm:$JOB_ID} on /metrics (job=\"$OWNER\")"
check grep -q '^gpuclk_job_nccl_operations_total{.*collective="all_reduce"} [1-9]' "$OUT/metrics_end.txt" -- \
  "all-reduces counted" "no all-reduce counted"
check grep -q '^gpuclk_nccl_inspector_errors_total 0$' "$OUT/metrics_end.txt" -- "the reader met no problem" \
  "reader problems: $(grep inspector_errors "$OUT/metrics_end.txt")"
check grep -q "NCCL collectives" "$OUT/ps_running.txt" -- "ps shows the collectives" "ps shows no collectives"
if [ "$OWNER" = "slurm:$JOB_ID" ]; then
  check grep -q "NCCL collectives" "$OUT/stat_job.txt" -- "stat --job $JOB_ID shows them" \
    "stat --job $JOB_ID shows no collectives"
else
  echo "note: the ranks' owner is $OWNER, not a Slurm job: stat --job not checked"
fi
if [ -n "${LATE_RANK:-}" ] && [ "$RANKS" -ge 2 ]; then
  gpu=$((LATE_RANK % GPUS))
  check grep -q "warning: GPU $gpu (rank $LATE_RANK" "$OUT/doctor.txt" -- "doctor names rank $LATE_RANK's GPU $gpu late" \
    "doctor did not name GPU $gpu: $(grep -i late "$OUT/doctor.txt" | head -3)"
else
  check not grep -q "late_rank\]" "$OUT/doctor.txt" -- "no late_rank finding" "a late_rank finding without a planted late rank"
fi
if [ "$FAIL" -eq 0 ]; then echo "nccl_job_test: passed"; else echo "nccl_job_test: FAILED"; fi
exit "$FAIL"
