#!/usr/bin/env bash
# NCCL telemetry per job (serve/nccl_jobs.h, docs/nccl.md): gpuclk serve --nccl-inspector-dir
# follows the NCCL Inspector's files of each job directory as they grow. The recorded files of
# tests/data/nccl_inspector/ are renamed to the simulated job's pids (fixtures/nccl-4gpu.toml:
# Slurm job 4242, pid 41000+GPU) and written line by line, a line cut in two across polls: the
# service joins the ranks with their GPUs and job, exports per job and collective on /metrics,
# `gpuclk ps` and `stat --job` show the collectives, and the findings (the gpuclk_finding series
# and doctor through the service) name the late rank's GPU; a healthy job gets no finding.
source "$(dirname "$0")/lib.sh" "$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 77; }
SCENARIO="$ROOT/tests/cli/fixtures/nccl-4gpu.toml"
DATA="$ROOT/tests/data/nccl_inspector"
NCCL="$TEST_TMP/nccl"
SOCK="$TEST_TMP/s.sock"
GPUCLK_SIM_SPEED=$(slowed 2)
export GPUCLK_SIM_SPEED

# A root that does not exist is refused before anything starts.
gpuclk --sim "$SCENARIO" --socket "$SOCK" serve --listen off --nccl-inspector-dir "$TEST_TMP/none"
expect_exit 2
expect_err "--nccl-inspector-dir $TEST_TMP/none: not a directory"

mkdir -p "$NCCL"
start_serve --sim "$SCENARIO" --socket "$SOCK" serve --counters-interval 1s --listen 127.0.0.1:0 \
  --nccl-inspector-dir "$NCCL"

# copy_job FOLDER JOBDIR UPTO: the recording's files as the simulated ranks' (rank r: pid 41000+r),
# each file's first UPTO lines (all: 0) written, plus half of the next line (the plugin still
# writing it) when UPTO is given.
copy_job() {
  local folder=$1 dir=$2 upto=$3 rank=0 f
  mkdir -p "$dir"
  for f in "$DATA/$folder"/*.log; do
    local pid=$((41000 + rank)) out="$dir/vm-pid$((41000 + rank)).log"
    sed "s/\"pid\":[0-9]*/\"pid\":$pid/" "$f" >"$TEST_TMP/whole.$rank"
    if [ "$upto" = 0 ]; then
      cat "$TEST_TMP/whole.$rank" >"$out"
    else
      head -n "$upto" "$TEST_TMP/whole.$rank" >"$out"
      sed -n "$((upto + 1))p" "$TEST_TMP/whole.$rank" | head -c 300 >>"$out"
    fi
    rank=$((rank + 1))
  done
}
# finish_job FOLDER JOBDIR UPTO: the rest of each file, from where copy_job stopped.
finish_job() {
  local dir=$2 upto=$3 rank=0 f
  for f in "$DATA/$1"/*.log; do
    tail -n "+$((upto + 1))" "$TEST_TMP/whole.$rank" | tail -c "+301" >>"$dir/vm-pid$((41000 + rank)).log"
    rank=$((rank + 1))
  done
}
# wait_for TEXT: until the service's `collectives` answer holds TEXT (<= 20 s).
collectives() { ask '{"v":1,"request":"collectives"}
'; }
wait_for() {
  for _ in $(seq "$(scaled 200)"); do
    collectives | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  echo "no '$1' in: $(collectives | head -c 600)" >&2
  return 1
}

# Half of each rank's lines, and a line cut in two: 10 records per rank read, no error.
copy_job late_rank_4gpu "$NCCL/4242" 10
wait_for '"records":40'
# The simulated ranks' pids exist only in the service's attribution, whose first pass may come
# after the reader's first poll: until then the job is "process 41000" (/proc's answer, as for a
# pid of no Slurm job), and each poll re-resolves it (on a node, /proc's cgroup names the job).
wait_for '"owner":"slurm:4242"'
OUT=$(collectives)
LAST_CMD="collectives after half the lines"
expect_json '.errors' 0
expect_json '.files' 4
expect_json '.jobs[0].owner' slurm:4242
expect_json '.jobs[0].collectives[0].count' 40
# The rest, from the middle of the cut line: 80 records, still no error.
finish_job late_rank_4gpu "$NCCL/4242" 10
wait_for '"records":80'
OUT=$(collectives)
LAST_CMD="collectives after the rest"
expect_json '.errors' 0
expect_json '.jobs[0].ranks' 4
expect_json '.jobs[0].gpus | map(tostring) | join(",")' 0,1,2,3
expect_json '.jobs[0].collectives[0].collective' all_reduce
expect_json '.jobs[0].collectives[0].count' 80
expect_json '.jobs[0].communicators[0].delayed_operations >= 10' true

# /metrics: per job and collective, no GPU label.
METRICS=$(curl -sf "http://127.0.0.1:$PORT/metrics")
OUT=$METRICS
LAST_CMD="curl /metrics"
expect_out 'gpuclk_job_nccl_operations_total{job="slurm:4242",user="",collective="all_reduce"} 80'
expect_out_re '^gpuclk_job_nccl_bytes_total\{job="slurm:4242",user="",collective="all_reduce"\} 2097152000$'
expect_out_re '^gpuclk_job_nccl_seconds_total\{job="slurm:4242",user="",collective="all_reduce"\} [0-9.]+'
expect_out_re '^gpuclk_job_nccl_bus_bandwidth_bytes_per_second\{job="slurm:4242",user="",collective="all_reduce"\} [0-9.e+]+'
expect_out_re '^gpuclk_job_nccl_time_ratio\{job="slurm:4242",user="",collective="all_reduce"\} 0\.[0-9]+'
expect_out '# TYPE gpuclk_job_nccl_operations_total counter'
expect_out 'gpuclk_nccl_inspector_files 4'
expect_out 'gpuclk_nccl_inspector_errors_total 0'
if command -v promtool >/dev/null; then
  LINT=$(promtool check metrics <<<"$METRICS" 2>&1 | grep -i nccl)
  check; [ -z "$LINT" ] || fail "promtool on the NCCL series: $LINT"
fi

# The findings on /metrics: the late rank's GPU (rank 2 is 12 ms late at every step).
FOUND=0
for _ in $(seq "$(scaled 100)"); do
  curl -sf "http://127.0.0.1:$PORT/metrics" | grep -q 'gpuclk_finding{rule="late_rank",severity="warning",gpus="2"} 1' && { FOUND=1; break; }
  sleep 0.2
done
check; [ "$FOUND" = 1 ] || fail "no late_rank finding for GPU 2 on /metrics"

# ps and stat --job show the job's collectives.
gpuclk --sim "$SCENARIO" --socket "$SOCK" ps
expect_exit 0
expect_out "NCCL collectives per job"
expect_out_re 'Slurm job 4242 +all-reduce +4 +80 +1\.95 '
gpuclk --sim "$SCENARIO" --socket "$SOCK" --format json ps
expect_json '.collectives[0].collectives[0].count' 80
gpuclk --sim "$SCENARIO" --socket "$SOCK" stat --job 4242
expect_exit 0
expect_out "NCCL collectives"
expect_out_re 'Slurm job 4242 +all-reduce +4 +80 '
gpuclk --sim "$SCENARIO" --socket "$SOCK" --format json stat --job 4242
expect_json '.collectives[0].owner' slurm:4242

# doctor through the service names the late rank's GPU.
gpuclk --sim "$SCENARIO" --socket "$SOCK" doctor --duration 3s --rules late_rank,communication_bound
expect_out "GPU 2 (rank 2, pid 41002) of communicator (0xe62dedaa97644a, 4 ranks) of Slurm job 4242 arrives last"
gpuclk --sim "$SCENARIO" --socket "$SOCK" --format json doctor --duration 3s --rules late_rank
expect_json '[.findings[] | select(.rule == "late_rank") | .gpus[0]] | join(",")' 2
stop_serve

# A healthy job: its collectives, no finding.
rm -rf "${NCCL:?}"/*
mkdir -p "$NCCL/77"
start_serve --sim "$SCENARIO" --socket "$SOCK" serve --counters-interval 1s --listen 127.0.0.1:0 \
  --nccl-inspector-dir "$NCCL"
copy_job healthy_2gpu "$NCCL/77" 0
wait_for '"records":72'
sleep "$(scaled 4)"
gpuclk --sim "$SCENARIO" --socket "$SOCK" --format json doctor --duration 3s --rules late_rank,communication_bound
expect_exit 0
expect_json '.findings | length' 0
# ps -i: a job's collectives with its GPUs (0 and 1 here).
gpuclk --sim "$SCENARIO" --socket "$SOCK" -i 1 ps
expect_out_re 'Slurm job 4242 +all-reduce +2 +48 '
gpuclk --sim "$SCENARIO" --socket "$SOCK" -i 3 ps
expect_exit 0
expect_no_out "NCCL collectives"
OUT=$(curl -sf "http://127.0.0.1:$PORT/metrics")
LAST_CMD="curl /metrics (healthy)"
expect_out 'gpuclk_job_nccl_operations_total{job="slurm:4242",user="",collective="all_reduce"} 48'
expect_no_out 'rule="late_rank"'
expect_no_out 'rule="communication_bound"'

# A job at 6 GB/s (recorded with NCCL_P2P_DISABLE=1 on PCIe) on GPUs joined by the NVSwitch
# fabric: communication-bound, judged against the links' peak.
mkdir -p "$NCCL/88"
copy_job comm_bound_pcie_2gpu "$NCCL/88" 0
wait_for '"records":104'
gpuclk --sim "$SCENARIO" --socket "$SOCK" --format json doctor --duration 3s --rules communication_bound
expect_json '.findings[0].rule' communication_bound
expect_json '.findings[0].severity' warning
expect_json '.findings[0].evidence.link_basis' "18 NVLinks x 26.562 GB/s to the NVSwitches (GPU 0)"
expect_json '.findings[0].evidence.link_peak_gb_per_s' 478.12
expect_json '.findings[0].gpus | map(tostring) | join(",")' 0,1
stop_serve

finish
