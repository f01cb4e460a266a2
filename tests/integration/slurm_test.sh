#!/usr/bin/env bash
# gpuclk's Slurm prolog and epilog (deploy/slurm/) on a real Slurm: the test starts munged,
# slurmctld and slurmd (root, foreground, own key, socket, ports on loopback, spool and state
# directories) with one node of four GPUs — gres.conf File= points at four empty files, so Slurm
# allocates them and sets SLURM_JOB_GPUS/CUDA_VISIBLE_DEVICES — while the GPUs themselves are one
# simulated 4-GPU node (libnvml-sim.so, one state file every process shares). Checks: a job with
# --gres=gpu:2 sees its two GPUs at the site profile's settings and the other two untouched, and
# all four are back when it ends; two concurrent jobs on different GPUs each change and restore
# only their own, also when one is cancelled mid-run and when slurmd restarts in between; a job's
# profile request is honoured, a path in it is not; the report's energy matches the simulator's
# truth within 5 %; a profile that cannot be applied drains the node; with `gpuclk serve` running,
# the measurement reads the service. Skipped (77) when not root or Slurm is not installed.
set -u
GPUCLK_BIN=${1:?usage: slurm_test.sh /path/to/gpuclk}
GPUCLK_BIN=$(readlink -f "$GPUCLK_BIN")
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (slurmd runs the prolog and epilog as root)"; exit 77; }
for p in slurmctld slurmd munged sbatch scontrol scancel squeue setpriv jq python3; do
  command -v $p >/dev/null || { echo "SKIP: $p not installed (scripts/install-deps.sh)"; exit 77; }
done
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-slurm.XXXXXX")
chmod 0755 "$TMP"
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  # The jobs' measurements run detached from slurmd: stop any an epilog did not (by pid).
  for p in "$TMP"/state/job-*/stat.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
  [ "${KEEP_TMP:-0}" == 1 ] && echo "kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
FAILURES=0 CHECKS=0
fail() { FAILURES=$((FAILURES + 1)); echo "FAIL: $*" >&2; }
check() { CHECKS=$((CHECKS + 1)); }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# within PCT a b: |a - b| <= PCT % of b
within() { awk -v a="$2" -v b="$3" -v p="$1" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= p / 100 * b) }'; }
# wait_for SECONDS CONDITION...: polls the condition every 0.1 s; false when time runs out.
wait_for() {
  local n=$(($1 * 10))
  shift
  while [ $n -gt 0 ]; do
    "$@" && return 0
    sleep 0.1
    n=$((n - 1))
  done
  return 1
}
dump_logs() {
  echo "--- slurmctld.log" >&2; tail -20 "$TMP/slurmctld.log" >&2
  echo "--- slurmd.log" >&2; tail -30 "$TMP/slurmd.log" >&2
}

# --- the simulated node and gpuclk's Slurm settings ---
unset GPUCLK_NVML_LIB GPUCLK_SIM_SCENARIO GPUCLK_READ_ONLY GPUCLK_STATE_DIR GPUCLK_FALLBACK_SIM
export GPUCLK_SIM_STATE="$TMP/sim.state"
# No service answers there until part 4: the jobs' measurements sample NVML themselves.
export GPUCLK_SOCKET="$TMP/serve.sock"
mkdir -p "$TMP/profiles" "$TMP/out" "$TMP/dev"
cat >"$TMP/profiles/site.toml" <<'END'
version = 1
description = "site default of the test"
[settings]
application_clocks = "2619,1500"
locked_gpu_clocks = "1200"
power_limit_w = 600
END
cat >"$TMP/profiles/low.toml" <<'END'
version = 1
description = "a profile a job asks for"
[settings]
application_clocks = "2619,1305"
power_limit_w = 450
END
cat >"$TMP/gpuclk-slurm.conf" <<END
GPUCLK=$GPUCLK_BIN
GPUCLK_OPTS="--sim"
PROFILE_DIR=$TMP/profiles
DEFAULT_PROFILE=site
STATE_BASE=$TMP/state
REPORT_DIR=$TMP/reports
REPORT_TO_OUTPUT_DIR=yes
STAT_INTERVAL=100ms
STOP_TIMEOUT=10
SCONTROL=scontrol
END
chmod 0644 "$TMP/gpuclk-slurm.conf"
for which in prolog epilog; do
  cat >"$TMP/$which.sh" <<END
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin GPUCLK_SIM_STATE=$GPUCLK_SIM_STATE GPUCLK_SOCKET=$GPUCLK_SOCKET
export GPUCLK_SLURM_CONF=$TMP/gpuclk-slurm.conf SLURM_CONF=$TMP/slurm.conf
exec $ROOT/deploy/slurm/gpuclk-$which.sh
END
  chmod 0755 "$TMP/$which.sh"
done
# Slurm 22.05 wants a character device behind File= ("not a valid character or block device"
# for plain files); links to /dev/null are that, need no mknod, and nothing opens them. Slurm
# numbers each GPU by its file name's digits: SLURM_JOB_GPUS=2 for dev/nvidia2.
for i in 0 1 2 3; do ln -s /dev/null "$TMP/dev/nvidia$i"; done

# --- munge, slurmctld, slurmd ---
dd if=/dev/urandom of="$TMP/munge.key" bs=1024 count=1 status=none
chmod 0400 "$TMP/munge.key"
mkdir -m 0700 "$TMP/munge"
munged --foreground --force --key-file="$TMP/munge.key" --socket="$TMP/munge/munge.sock" \
  --pid-file="$TMP/munge/munged.pid" --log-file="$TMP/munge/munged.log" \
  --seed-file="$TMP/munge/munged.seed" >"$TMP/munged.out" 2>&1 &
PIDS+=($!)
NODE=$(hostname -s)
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
mkdir -p "$TMP/ctld" "$TMP/spool"
cat >"$TMP/slurm.conf" <<END
ClusterName=gpuclktest
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$TMP/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$TMP/ctld
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/slurmctld.log
SlurmdLogFile=$TMP/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
GresTypes=gpu
Prolog=$TMP/prolog.sh
Epilog=$TMP/epilog.sh
PrologFlags=Alloc
ReturnToService=2
KillWait=2
InactiveLimit=0
SlurmdTimeout=30
SchedulerType=sched/builtin
# Pending jobs are looked at every 2 s, not 60: a job submitted while the node was not yet back
# (RESUME after the drain below) waited for the next pass, past the test's 30 s (CI, -j4).
SchedulerParameters=sched_interval=2
SlurmdParameters=config_overrides
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=4 Gres=gpu:4 State=UNKNOWN
PartitionName=gpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
END
cat >"$TMP/gres.conf" <<END
NodeName=$NODE Name=gpu File=$TMP/dev/nvidia[0-3]
END
export SLURM_CONF="$TMP/slurm.conf"
wait_for 10 test -S "$TMP/munge/munge.sock" || { echo "munged did not start: $(cat "$TMP/munged.out" "$TMP/munge/munged.log")"; exit 1; }
slurmctld -D -i -f "$SLURM_CONF" >"$TMP/slurmctld.out" 2>&1 &
PIDS+=($!)
start_slurmd() {
  slurmd -D -f "$SLURM_CONF" -N "$NODE" >>"$TMP/slurmd.out" 2>&1 &
  SLURMD_PID=$!
  PIDS+=("$SLURMD_PID")
}
start_slurmd
# Idle and nothing else: not +COMPLETING (an epilog still running), not +NOT_RESPONDING.
node_idle() { scontrol show node "$NODE" 2>/dev/null | grep -qE 'State=(IDLE|MIXED) '; }
wait_for 30 node_idle || { echo "the node did not come up"; dump_logs; cat "$TMP/slurmctld.out" "$TMP/slurmd.out"; exit 1; }
echo "slurm up: node $NODE, slurmctld :$CTLD_PORT, slurmd :$SLURMD_PORT"

# --- helpers for jobs and the simulated GPUs ---
# The job script: records what Slurm gave it and what gpuclk reads on every GPU, works on its
# GPUs (the simulator's sim-job, on CUDA_VISIBLE_DEVICES) for HOLD simulated seconds.
cat >"$TMP/job.sh" <<END
#!/bin/bash
out=$TMP/out/\$SLURM_JOB_ID
echo "\${SLURM_JOB_GPUS:-}" >\$out.job_gpus
echo "\${CUDA_VISIBLE_DEVICES:-}" >\$out.cuda_visible_devices
$GPUCLK_BIN --sim query --query-gpu=index,clocks.sm,clocks.applications.graphics,power.limit \
  --format=csv,noheader,nounits >\$out.query
touch \$out.started
# CGROUP=DIR: into the cgroup slurmd's proctrack/cgroup plugin would give the job (this test's
# Slurm tracks processes without cgroups), so the service finds the job from /proc/PID/cgroup.
if [ -n "\${CGROUP:-}" ]; then
  d=\$CGROUP/slurm/uid_\$(id -u)/job_\$SLURM_JOB_ID/step_batch
  mkdir -p \$d && echo \$\$ >\$d/cgroup.procs
fi
$GPUCLK_BIN --sim sim-job --workload gemm-bf16 --seconds "\${HOLD:-3}" >\$out.simjob 2>&1
END
chmod 0755 "$TMP/job.sh"
# submit ARGS...: sbatch's job id (the job's output in $TMP/out).
submit() { sbatch --parsable -o "$TMP/out/slurm-%j.out" "$@" "$TMP/job.sh"; }
# settings GPU: "SM_MHZ APP_GFX_MHZ POWER_W" of one GPU now, read from the test's side, from NVML
# (not a service's last sample).
settings() {
  "$GPUCLK_BIN" --sim --direct -i "$1" query --query-gpu=clocks.sm,clocks.applications.graphics,power.limit \
    --format=csv,noheader,nounits | tr -d ',' | awk '{ printf "%d %d %d\n", $1, $2, $3 }'
}
# Originals of the simulated H100s: application clocks 1980 MHz, power limit 700 W.
is_original() { local sm app pl; read -r sm app pl < <(settings "$1"); [ "$app" == 1980 ] && [ "$pl" == 700 ]; }
is_site() { local sm app pl; read -r sm app pl < <(settings "$1"); [ "$sm" == 1200 ] && [ "$app" == 1500 ] && [ "$pl" == 600 ]; }
is_low() { local sm app pl; read -r sm app pl < <(settings "$1"); [ "$app" == 1305 ] && [ "$pl" == 450 ]; }
job_done() { [ -f "$TMP/reports/$1.json" ] && [ ! -d "$TMP/state/job-$1" ]; }
job_gpus() { cat "$TMP/out/$1.job_gpus" 2>/dev/null; }
others() { # the node's GPUs not in the comma list $1
  local g
  for g in 0 1 2 3; do [[ ",$1," == *",$g,"* ]] || echo $g; done
}

# --- 1. a job with --gres=gpu:2 and no usable request: the site profile on its two GPUs only ---
for g in 0 1 2 3; do check; is_original $g || fail "GPU $g is not at its original settings before any job: $(settings $g)"; done
job=$(HOLD=3 submit --gres=gpu:2 --comment "gpuclk:../profiles/low")
check; wait_for 30 job_done "$job" || { fail "job $job: no report or state dir left after 30 s"; dump_logs; }
gpus=$(job_gpus "$job")
check; [[ "$gpus" =~ ^[0-3],[0-3]$ ]] || fail "job $job: SLURM_JOB_GPUS '$gpus', expected two of 0-3"
check; [ "$(cat "$TMP/out/$job.cuda_visible_devices")" == "$gpus" ] || fail "job $job: CUDA_VISIBLE_DEVICES '$(cat "$TMP/out/$job.cuda_visible_devices")' is not SLURM_JOB_GPUS '$gpus'"
while IFS=', ' read -r idx sm app pl; do
  if [[ ",$gpus," == *",$idx,"* ]]; then
    check; [ "$sm" == 1200 ] && [ "$app" == 1500 ] && [ "${pl%.*}" == 600 ] ||
      fail "job $job saw its GPU $idx at SM $sm MHz, app clocks $app MHz, limit $pl W; the site profile is 1200/1500/600"
  else
    check; [ "$app" == 1980 ] && [ "${pl%.*}" == 700 ] ||
      fail "job $job saw GPU $idx (not its own) at app clocks $app MHz, limit $pl W: changed"
  fi
done <"$TMP/out/$job.query"
check; [ "$(wc -l <"$TMP/out/$job.query")" == 4 ] || fail "job $job: query output: $(cat "$TMP/out/$job.query")"
for g in 0 1 2 3; do check; is_original $g || fail "after job $job: GPU $g not restored: $(settings $g)"; done
report="$TMP/reports/$job.json"
check; [ "$(jq -r '.profile + "|" + .profile_source + "|" + (.restored|tostring)' "$report")" == "site|site default|true" ] ||
  fail "job $job report: $(jq -c '{profile, profile_source, restored}' "$report")"
check; jq -e '.notes[0] | test("not a profile name")' "$report" >/dev/null || fail "job $job: a path as profile was not refused: $(jq -c .notes "$report")"
check; [ "$(jq -c '[.stat.gpus[].index]' "$report")" == "[${gpus}]" ] || fail "job $job: the report covers GPUs $(jq -c '[.stat.gpus[].index]' "$report"), not $gpus"
for k in 0 1; do
  energy=$(jq ".stat.gpus[$k].energy_j" "$report") truth=$(jq ".stat.gpus[$k].simulator_energy_j" "$report")
  check; within 5 "$energy" "$truth" || fail "job $job GPU #$k: energy $energy J vs simulator truth $truth J: more than 5 % apart"
  check; [ "$(jq ".stat.gpus[$k].sm_clock_mhz.median" "$report")" == 1200 ] || fail "job $job: median SM clock $(jq ".stat.gpus[$k].sm_clock_mhz.median" "$report") MHz, locked at 1200"
done
check; jq -e '.stat.gpus[0].verdict | length > 0' "$report" >/dev/null || fail "job $job: no verdict"
text="$TMP/out/gpuclk-$job.$NODE.txt"
check; grep -q "^gpuclk report for Slurm job $job" "$text" 2>/dev/null && grep -q "Verdict" "$text" ||
  fail "job $job: no text report beside the job's output ($text)"

# --- 2. two jobs at once on different GPUs: one asks for a profile and is cancelled mid-run,
#        slurmd restarts while the other runs; each restores only its own GPUs ---
# The site job must still run when slurmd is stopped below, after the checks of the other job
# and its cancellation: 15 s was not enough on a machine five times oversubscribed. (The
# simulated job runs in real time here.)
SITE_HOLD=$((15 + 10 * ${GPUCLK_TEST_TIME_SCALE:-1}))
site_job=$(HOLD=$SITE_HOLD submit --gres=gpu:2)
low_job=$(HOLD=120 submit --gres=gpu:2 --comment "gpuclk:low")
started() { [ -f "$TMP/out/$1.started" ]; }
check; wait_for 20 started "$site_job" && wait_for 20 started "$low_job" || { fail "jobs $site_job and $low_job did not both start"; dump_logs; }
site_gpus=$(job_gpus "$site_job") low_gpus=$(job_gpus "$low_job")
check; [ "$(echo "$site_gpus,$low_gpus" | tr ',' '\n' | sort -u | wc -l)" == 4 ] || fail "jobs got GPUs '$site_gpus' and '$low_gpus': not four different ones"
for g in ${site_gpus//,/ }; do check; is_site $g || fail "job $site_job's GPU $g: $(settings $g), not the site profile"; done
for g in ${low_gpus//,/ }; do check; is_low $g || fail "job $low_job's GPU $g: $(settings $g), not profile low"; done

scancel "$low_job"
check; wait_for 20 job_done "$low_job" || { fail "cancelled job $low_job: no report or state dir left after 20 s"; dump_logs; }
for g in ${low_gpus//,/ }; do check; is_original $g || fail "cancelled job $low_job's GPU $g not restored: $(settings $g)"; done
for g in ${site_gpus//,/ }; do check; is_site $g || fail "job $low_job's epilog touched job $site_job's GPU $g: $(settings $g)"; done
report="$TMP/reports/$low_job.json"
check; [ "$(jq -r '.profile + "|" + .profile_source + "|" + (.restored|tostring)' "$report")" == "low|job request|true" ] ||
  fail "job $low_job report: $(jq -c '{profile, profile_source, restored}' "$report")"
check; [ "$(jq '.stat.gpus | length' "$report")" == 2 ] || fail "cancelled job $low_job: no measurement in its report"

# slurmd goes away and comes back while the site job runs: the epilog of the new slurmd
# restores from what the prolog left on disk.
kill -TERM "$SLURMD_PID"
wait "$SLURMD_PID" 2>/dev/null
check; [ -s "$TMP/state/job-$site_job/journal.json" ] ||
  fail "job $site_job's journal is gone with slurmd$(job_done "$site_job" && echo " (the job had already ended: HOLD $SITE_HOLD s was too short)")"
start_slurmd
check; wait_for $((SITE_HOLD + 25)) job_done "$site_job" || { fail "job $site_job (slurmd restarted): no report or state dir left after $((SITE_HOLD + 25)) s"; dump_logs; }
for g in 0 1 2 3; do check; is_original $g || fail "after both jobs: GPU $g not restored: $(settings $g)"; done
report="$TMP/reports/$site_job.json"
check; [ "$(jq -r '.restored' "$report")" == true ] || fail "job $site_job: $(jq -c '{restored, notes}' "$report")"
for k in 0 1; do
  energy=$(jq ".stat.gpus[$k].energy_j" "$report") truth=$(jq ".stat.gpus[$k].simulator_energy_j" "$report")
  check; within 5 "$energy" "$truth" || fail "job $site_job GPU #$k: energy $energy J vs simulator truth $truth J: more than 5 % apart"
done
check; ! ls "$TMP"/state/job-* >/dev/null 2>&1 || fail "state dirs left: $(ls "$TMP/state")"
echo "reports: $(for j in "$job" "$low_job" "$site_job"; do jq -c '{job_id, gpus, profile, restored, energy_j: [.stat.gpus[].energy_j], truth_j: [.stat.gpus[].simulator_energy_j], verdict: .stat.gpus[0].verdict}' "$TMP/reports/$j.json"; done)"

# --- 3. a profile that cannot be applied fails the prolog: Slurm drains the node and requeues
#        the job (held); no GPU is changed and the reason is in slurmd's log ---
cat >"$TMP/profiles/broken.toml" <<'END'
version = 1
description = "a clock the GPUs do not support"
[settings]
application_clocks = "2619,1234"
END
bad_job=$(HOLD=1 submit --gres=gpu:2 --comment "gpuclk:broken")
drained() { scontrol show node "$NODE" | grep -q 'State=[A-Z+]*DRAIN'; }
check; wait_for 20 drained || { fail "a failed prolog (job $bad_job) did not drain the node: $(scontrol show node "$NODE" | grep -E 'State|Reason')"; dump_logs; }
check; [ ! -f "$TMP/out/$bad_job.started" ] || fail "job $bad_job ran although its prolog failed"
for g in 0 1 2 3; do check; is_original $g || fail "failed prolog of job $bad_job left GPU $g at $(settings $g)"; done
check; grep -q "applying profile broken (job request) to GPUs .* failed" "$TMP/slurmd.log" "$TMP/slurmd.out" ||
  fail "slurmd's log does not say why job $bad_job's prolog failed"
check; ! ls "$TMP"/state/job-* >/dev/null 2>&1 || fail "state dirs left: $(ls "$TMP/state")"
scancel "$bad_job"
scontrol update NodeName="$NODE" State=RESUME

# --- 4. with `gpuclk serve` on the node, the job's measurement reads the service's samples ---
"$GPUCLK_BIN" --sim --socket "$GPUCLK_SOCKET" serve --listen 127.0.0.1:0 --counters-interval 1s 2>"$TMP/serve.log" &
PIDS+=($!)
check; wait_for 10 test -S "$GPUCLK_SOCKET" || fail "gpuclk serve did not start: $(cat "$TMP/serve.log")"
check; wait_for 20 node_idle || fail "the node did not come back after RESUME: $(scontrol show node "$NODE" | grep -E 'State|Reason')"
# The job moves itself into a Slurm cgroup when this host lets it make one (cgroup v1, root).
CG=/sys/fs/cgroup/pids
cgroup=""
if mkdir -p "$CG/slurm" 2>/dev/null; then cgroup=$CG; fi
served_job=$(CGROUP=$cgroup HOLD=8 submit --gres=gpu:2)
check; wait_for 30 job_done "$served_job" || { fail "job $served_job (with serve): no report or state dir left after 30 s"; dump_logs; }
report="$TMP/reports/$served_job.json"
for g in 0 1 2 3; do check; is_original $g || fail "after job $served_job: GPU $g not restored: $(settings $g)"; done
check; [ "$(jq -r '.stat.sampling.sampled_by' "$report")" == "gpuclk serve" ] ||
  fail "job $served_job: the measurement did not go through gpuclk serve: $(jq -c '.stat.sampling' "$report")"
check; jq -e '[.stat.gpus[] | .energy_j > 500 and .sm_clock_mhz.median == 1200] | all' "$report" >/dev/null ||
  fail "job $served_job (through serve): $(jq -c '[.stat.gpus[] | {energy_j, sm: .sm_clock_mhz.median}]' "$report")"
# The service booked the job's processes' energy to the job (docs/attribution.md); the epilog put
# it in the JSON report and a line of it in the text report. Truth: the simulator's, per GPU.
if [ -n "$cgroup" ]; then
  truth=$(awk '$1 ~ /^[0-9]+$/ { s += $7 } END { print s + 0 }' "$TMP/out/$served_job.simjob")
  check; jq -e --arg owner "slurm:$served_job" '.attributed.owner == $owner and (.attributed.gpus | length) == 2' "$report" >/dev/null ||
    fail "job $served_job: the report's attribution is not the job's: $(jq -c '.attributed | {owner, gpus}' "$report")"
  check; jq -e --argjson t "$truth" '(.attributed.usage.energy_j - $t | fabs) <= 0.05 * $t' "$report" >/dev/null ||
    fail "job $served_job: attributed $(jq '.attributed.usage.energy_j' "$report") J, the simulator's truth $truth J"
  check; grep -q "^its processes, as gpuclk serve booked them: [0-9.]* kJ GPU energy, .* on GPUs [0-9],[0-9]" "$TMP/out/gpuclk-$served_job.$NODE.txt" ||
    fail "job $served_job: the text report lacks the service's line: $(cat "$TMP/out/gpuclk-$served_job.$NODE.txt")"
  rmdir "$CG/slurm/uid_$(id -u)/job_$served_job/step_batch" "$CG/slurm/uid_$(id -u)/job_$served_job" "$CG/slurm/uid_$(id -u)" "$CG/slurm" 2>/dev/null
else
  echo "note: cannot make cgroups under $CG: the attribution to the job is not checked"
fi

finish() {
  echo "$CHECKS checks, $FAILURES failed"
  [ "$FAILURES" -eq 0 ]
}
finish
