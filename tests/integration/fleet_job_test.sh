#!/usr/bin/env bash
# gpuclk fleet --job / --pod against a real Prometheus scraping five `gpuclk serve`, each a
# simulated node of four H100s whose GPUs the node books to a Slurm job or a pod (the scenario's
# processes name them; docs/attribution.md): Slurm job 5150 spans nodes 0-2, and GPU 2 of node 1
# is poorly cooled (thermal slowdown holds its clock down); node 3 runs job 6000, a BF16 GEMM at
# its power limit (~1410 MHz), node 4 a pod whose memory-bound job runs near 1980 MHz. fleet must
# name node 1's GPU 2 the straggler of job 5150 with heat as its cause, and nothing for the
# other two jobs — GPUs of different jobs are not each other's peers (issue 44: a power-capped
# job's GPUs were called stragglers against a lighter job's) — and the node's own service must
# name it too (its straggler finding on /metrics, through Prometheus). Then the job view's JSON,
# table and CSV, its totals, and its errors: a job no node ran (exit 6), bad options (exit 2).
set -u
GPUCLK_BIN=${1:?usage: fleet_job_test.sh /path/to/gpuclk}
source "$(dirname "$0")/fleet_lib.sh" fleet-job prometheus curl jq python3
export GPUCLK_SIM_START=300  # warm: the poorly cooled GPU is in thermal slowdown from the start
POD_UID=7c0ffee0-1234-4abc-9def-000000004444

# scenario OWNER PHASE [EXTRA]: four H100s, one process per GPU working for OWNER.
scenario() {
  cat <<TOML
[node]
description = "4x H100, one job (gpuclk fleet --job test)"
gpu_model = "h100-sxm5-80gb"
gpu_count = 4
privileged = true
nvswitch = true

[gpu_defaults]
workload = "work"

[workloads.work]
start_s = 1
repeat = true
process = { pid = 45000, name = "python3 train.py", memory_gib = 40, $1 }

[[workloads.work.phases]]
$2
${3:-}
TOML
}
GEMM='kind = "compute"
dtype = "bf16"
tflop = 1000
intensity = 850'
COPY='kind = "memory"
gib = 2000'
scenario 'slurm_job = 5150' "$GEMM" >"$TMP/job.toml"
scenario 'slurm_job = 5150' "$GEMM" $'\n[[gpu]]\nindex = 2\ncooling_factor = 4.0' >"$TMP/hot.toml"
scenario 'slurm_job = 6000' "$GEMM" >"$TMP/capped.toml"
scenario "pod = \"$POD_UID\"" "$COPY" >"$TMP/light.toml"
NODES=(0 1 2 3 4)
HOT=1 HOT_GPU=2
scenario_of() { case $1 in 1) echo "$TMP/hot.toml" ;; 3) echo "$TMP/capped.toml" ;; 4) echo "$TMP/light.toml" ;; *) echo "$TMP/job.toml" ;; esac; }

for n in "${NODES[@]}"; do
  GPUCLK_SIM_STATE="$TMP/n$n.state" GPUCLK_STATE_DIR="$TMP/n$n.journal" "$GPUCLK_BIN" \
    --sim "$(scenario_of "$n")" --socket "$TMP/n$n.sock" serve --listen 127.0.0.1:0 \
    --counters-interval 1s 2>"$TMP/n$n.log" &
  PIDS+=($!)
done
wait_for_services "${NODES[@]}"
start_prometheus "${NODES[@]}"
# Every GPU booked to its job a few scrapes long, and the hot GPU's node naming it (its service
# judges a window of samples: seconds after the job's processes are known).
for _ in $(seq $((900 * ${GPUCLK_TEST_TIME_SCALE:-1}))); do
  jobs=$(promql 'count(min_over_time(gpuclk_gpu_slurm_job_seconds_total{state="context"}[15s]) > 0)')
  pods=$(promql 'count(gpuclk_gpu_pod_seconds_total{state="context"} > 0)')
  own=$(promql "count(gpuclk_finding{instance=\"${INSTANCE[$HOT]}\",rule=\"straggler\",gpus=\"$HOT_GPU\"})")
  [ "${jobs:-0}" == 16 ] && [ "${pods:-0}" == 4 ] && [ "${own:-0}" == 1 ] && break
  sleep 0.1
done
check; [ "${jobs:-0}" == 16 ] && [ "${pods:-0}" == 4 ] ||
  fail "Prometheus lacks the per-GPU job series: $jobs Slurm GPUs (want 16), $pods pod GPUs (want 4)"
check; [ "${own:-0}" == 1 ] ||
  fail "node $HOT's own service did not name GPU $HOT_GPU a straggler: $(curl -s "http://${INSTANCE[$HOT]}/metrics" | grep '^gpuclk_finding')"
echo "Prometheus has the jobs after $(($(date +%s) - START)) s"
sleep 3  # a few more scrapes in the range

# --- the job across nodes: JSON ---
"$GPUCLK_BIN" fleet --prometheus "$URL" --range 15s --job 5150 --format json >"$TMP/job.json" 2>"$TMP/job.err"
RC=$?
check; [ $RC -eq 10 ] || fail "fleet --job 5150 exited $RC, expected 10 (a straggler is a warning): $(cat "$TMP/job.err")"
check; jq -e '.job.key == "slurm:5150" and .job.name == "Slurm job 5150" and .job.gpus == 12 and .job.nodes == 3
              and .job.energy_j > 0 and .job.gpu_hours > 0' "$TMP/job.json" >/dev/null ||
  fail "job 5150's totals: $(jq -c .job "$TMP/job.json")"
got=$(jq '[.gpus[] | select((.sm_clock_median_mhz|type)=="number" and (.sm_clock_p5_mhz|type)=="number"
           and .power_avg_w > 0 and .power_limit_w == 700 and .energy_j > 0 and .gpu_seconds > 0
           and .busy_share > 0.5 and (.uuid|startswith("GPU-")))] | length' "$TMP/job.json")
check; [ "$got" == 12 ] || fail "$got of 12 GPU rows complete: $(jq -c '.gpus[0]' "$TMP/job.json")"
got=$(jq -r '[.findings[] | select(.rule=="straggler") | "\(.instance) \(.gpus|map(tostring)|join(",")) \(.job)"] | join(";")' "$TMP/job.json")
check; [ "$got" == "${INSTANCE[$HOT]} $HOT_GPU slurm:5150" ] || fail "job 5150's stragglers: '$got'"
got=$(jq -r '.findings[] | select(.rule=="straggler") | .summary' "$TMP/job.json")
check; [[ "$got" == *"holds back Slurm job 5150 (12 GPUs on 3 nodes)"*"cause: heat: thermal slowdown"* ]] ||
  fail "the straggler's summary does not name the job and heat: $got"
got=$(jq -r ".gpus[] | select(.instance==\"${INSTANCE[$HOT]}\" and .gpu==$HOT_GPU) | .clock_event_reasons_s.sw_thermal_slowdown // 0" "$TMP/job.json")
check; python3 -c "import sys; sys.exit(0 if float('$got') >= 10 else 1)" ||
  fail "the hot GPU's row: thermal slowdown held it $got s of 15"
got=$(jq -r '[.findings[] | select(.severity != "info") | .instance] | unique | join(",")' "$TMP/job.json")
check; [ "$got" == "${INSTANCE[$HOT]}" ] || fail "findings above info of job 5150 on other nodes than $HOT: $got"

# --- the table and CSV ---
"$GPUCLK_BIN" fleet --prometheus "$URL" --range 15s --job 5150 >"$TMP/job.txt" 2>&1
RC=$?
check; [ $RC -eq 10 ] || fail "fleet --job 5150 (table) exited $RC"
check; grep -q "^Slurm job 5150: 12 GPUs on 3 nodes over the last 15 s" "$TMP/job.txt" &&
  grep -q "^Total: .* kJ booked to the job, .* GPU-hours" "$TMP/job.txt" &&
  grep -q "^warning: ${INSTANCE[$HOT]}: GPU $HOT_GPU holds back Slurm job 5150" "$TMP/job.txt" ||
  fail "fleet --job table: $(cat "$TMP/job.txt")"
check; [ "$(grep -cE "^127\.0\.0\.1:[0-9]+ +[0-3] +NVIDIA H100" "$TMP/job.txt")" == 12 ] ||
  fail "the table lacks a row per GPU: $(head -20 "$TMP/job.txt")"
check; grep -E "^${INSTANCE[$HOT]} +$HOT_GPU " "$TMP/job.txt" | grep -q "sw_thermal_slowdown [0-9]* s" ||
  fail "the hot GPU's row does not say what held it back"
"$GPUCLK_BIN" fleet --prometheus "$URL" --range 15s --job 5150 --format csv >"$TMP/job.csv" 2>&1
check; [ "$(head -1 "$TMP/job.csv" | cut -d, -f1-4)" == "instance, gpu, model, sm_clock_median_mhz [MHz]" ] &&
  [ "$(wc -l <"$TMP/job.csv")" == 13 ] || fail "fleet --job --format csv: $(head -3 "$TMP/job.csv")"
echo "fleet --job 5150:"; sed 's/^/    /' "$TMP/job.txt"

# --- different jobs are not each other's peers ---
for job in 6000; do
  "$GPUCLK_BIN" fleet --prometheus "$URL" --range 15s --job $job --format json >"$TMP/j$job.json" 2>&1
  RC=$?
  check; [ $RC -eq 0 ] && jq -e '.job.gpus == 4 and .job.nodes == 1 and ([.findings[] | select(.rule=="straggler")] | length == 0)' "$TMP/j$job.json" >/dev/null ||
    fail "fleet --job $job exited $RC (want 0, 4 GPUs, no straggler): $(head -c 600 "$TMP/j$job.json")"
done
"$GPUCLK_BIN" fleet --prometheus "$URL" --range 15s --pod "$POD_UID" --format json >"$TMP/pod.json" 2>&1
RC=$?
check; [ $RC -eq 0 ] && jq -e ".job.key == \"pod:$POD_UID\" and .job.gpus == 4 and ([.findings[] | select(.rule==\"straggler\")] | length == 0)" "$TMP/pod.json" >/dev/null ||
  fail "fleet --pod $POD_UID exited $RC: $(head -c 600 "$TMP/pod.json")"
capped=$(jq '[.gpus[].sm_clock_median_mhz] | max' "$TMP/j6000.json")
light=$(jq '[.gpus[].sm_clock_median_mhz] | min' "$TMP/pod.json")
check; python3 -c "import sys; sys.exit(0 if $capped < 0.9 * $light else 1)" ||
  fail "the two jobs' clocks are too close to show the point: $capped vs $light MHz"
"$GPUCLK_BIN" fleet --prometheus "$URL" --range 15s --format json >"$TMP/fleet.json" 2>&1
got=$(jq -r '[.findings[] | select(.rule=="straggler") | "\(.instance) \(.gpus|map(tostring)|join(","))"] | unique | join(";")' "$TMP/fleet.json")
check; [ "$got" == "${INSTANCE[$HOT]} $HOT_GPU" ] ||
  fail "fleet's stragglers across the fleet: '$got' (want only node $HOT's GPU $HOT_GPU; job 6000 at $capped MHz and the pod at $light MHz are different jobs)"

# --- errors ---
"$GPUCLK_BIN" fleet --prometheus "$URL" --range 15s --job 999999 >"$TMP/none.out" 2>&1; RC=$?
check; [ $RC -eq 6 ] && grep -q "no GPU ran Slurm job 999999 in the last 15 s at $URL" "$TMP/none.out" ||
  fail "fleet --job 999999 exited $RC (want 6): $(cat "$TMP/none.out")"
expect_bad() { # expect_bad TEXT ARGS...
  local text=$1; shift
  "$GPUCLK_BIN" fleet --prometheus "$URL" "$@" >"$TMP/bad.out" 2>&1; local rc=$?
  check; [ $rc -eq 2 ] && grep -qF -- "$text" "$TMP/bad.out" ||
    fail "fleet $* exited $rc (expected 2 naming '$text'): $(cat "$TMP/bad.out")"
}
expect_bad "bad --job ''" --job ''
expect_bad "bad --pod '/x'" --pod /x
expect_bad "--job and --pod" --job 1 --pod a/b
expect_bad "--job and --dmon" --job 1 --dmon

echo "$CHECKS checks, $FAILURES failed, $(($(date +%s) - START)) s"
[ "$FAILURES" -eq 0 ]
