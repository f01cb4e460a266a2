#!/usr/bin/env bash
# deploy/slurm's prolog and epilog run directly, with the environment slurmd gives them, on the
# simulator (no Slurm needed; tests/integration/slurm_test.sh runs them under a real one): the
# cases a real Slurm rarely produces — a job without GPUs, malformed SLURM_JOB_GPUS, profile
# requests that are paths or junk, a settings file others may write, a measurement that died,
# a restore that fails (node left to drain, journal kept).
source "$(dirname "$0")/lib.sh" "$1"
DEPLOY="$(cd "$(dirname "$0")/../../deploy/slurm" && pwd)"
GPUCLK_BIN=$(readlink -f "$GPUCLK_BIN")
unset GPUCLK_STATE_DIR
export GPUCLK_SOCKET="$TEST_TMP/no-service.sock"
mkdir -p "$TEST_TMP/profiles"
cat >"$TEST_TMP/profiles/site.toml" <<'END'
version = 1
[settings]
power_limit_w = 600
END
cat >"$TEST_TMP/profiles/low.toml" <<'END'
version = 1
[settings]
power_limit_w = 450
END
conf() { # conf [EXTRA LINES]: the scripts' settings file
  {
    echo "GPUCLK=$GPUCLK_BIN"
    echo 'GPUCLK_OPTS="--sim"'
    echo "PROFILE_DIR=$TEST_TMP/profiles"
    echo "DEFAULT_PROFILE=site"
    echo "STATE_BASE=$TEST_TMP/state"
    echo "REPORT_DIR=$TEST_TMP/reports"
    echo "REPORT_TO_OUTPUT_DIR=no"
    echo "STOP_TIMEOUT=5"
    printf '%s\n' "$@"
  } >"$TEST_TMP/slurm.conf"
  chmod 0644 "$TEST_TMP/slurm.conf"
}
SLURM_JOB_UID=$(id -u) SLURM_JOB_USER=$(id -un)
export GPUCLK_SLURM_CONF="$TEST_TMP/slurm.conf" SLURM_JOB_UID SLURM_JOB_USER
# run prolog|epilog JOB [VAR=VALUE...]: the script with slurmd's variables for job JOB.
run() {
  local which=$1 job=$2
  shift 2
  OUT=$(env SLURM_JOB_ID="$job" SLURM_SCRIPT_CONTEXT="${which}_slurmd" "$@" \
    "$DEPLOY/gpuclk-$which.sh" 2>"$TEST_TMP/stderr")
  RC=$?
  ERR=$(cat "$TEST_TMP/stderr")
  LAST_CMD="gpuclk-$which.sh (job $job) $*"
}
limits() { "$GPUCLK_BIN" --sim --direct query --query-gpu=power.limit --format=csv,noheader,nounits | cut -d. -f1 | paste -sd' '; }
report() { jq -r "$1" "$TEST_TMP/reports/$2.json"; }
conf

# --- a job without GPUs: nothing at all ---
run prolog 1 SLURM_JOB_GPUS= CUDA_VISIBLE_DEVICES=
expect_exit 0
check; [ ! -e "$TEST_TMP/state/job-1" ] || fail "a job without GPUs got a state dir"
run epilog 1
expect_exit 0
check; [ "$(limits)" == "700 700 700 700" ] || fail "limits $(limits)"

# --- malformed GPU lists fail the prolog before any change ---
for bad in "0;1" "0,,1" "GPU-1234" ",2" "1 2"; do
  run prolog 2 SLURM_JOB_GPUS="$bad"
  expect_exit 1; expect_err "cannot read the job's GPUs from '$bad'"
done
check; [ "$(limits)" == "700 700 700 700" ] || fail "limits $(limits) after malformed GPU lists"
# CUDA_VISIBLE_DEVICES when SLURM_JOB_GPUS is not set (older slurmd)
run prolog 3 CUDA_VISIBLE_DEVICES=3
expect_exit 0
check; [ "$(limits)" == "700 700 700 600" ] || fail "CUDA_VISIBLE_DEVICES=3: limits $(limits)"
run epilog 3
expect_exit 0
check; [ "$(limits)" == "700 700 700 700" ] || fail "limits $(limits) after job 3"
expect_json_file() { check; local got; got=$(report "$1" "$2"); [ "$got" == "$3" ] || fail "job $2 report: $1 = '$got', expected '$3'"; }
expect_json_file '.gpus | length' 3 1
expect_json_file '.stat.gpus[0].index' 3 3

# --- profile requests: a site profile is used; paths, junk and unknown names get the default ---
run prolog 4 SLURM_JOB_GPUS=1 SLURM_JOB_COMMENT="project x, gpuclk:low"
expect_exit 0
check; [ "$(limits)" == "700 450 700 700" ] || fail "gpuclk:low: limits $(limits)"
run epilog 4
expect_json_file '.profile + "/" + .profile_source' 4 "low/job request"
for req in "/etc/passwd" "../profiles/low" "low/../low" "..low" 'lo"w' "nosuch" ".hidden"; do
  run prolog 5 SLURM_JOB_GPUS=2 SLURM_JOB_COMMENT="gpuclk:$req"
  expect_exit 0
  check; [ "$(limits)" == "700 700 600 700" ] || fail "gpuclk:$req: limits $(limits), expected the site default on GPU 2"
  run epilog 5
  expect_exit 0
  expect_json_file '.profile' 5 site
  expect_json_file '.notes | length' 5 1
done
# a glob in the comment is a word, not a file list (the prolog runs in slurmd's directory)
touch "$TEST_TMP/gpuclk:low"
(cd "$TEST_TMP" && run prolog 11 SLURM_JOB_GPUS=1 SLURM_JOB_COMMENT="gpuclk:*" && run epilog 11)
expect_json_file '.profile + "/" + (.notes | length | tostring)' 11 "site/1"
# control characters in a request never reach the JSON report unescaped
run prolog 6 SLURM_JOB_GPUS=0 SLURM_JOB_COMMENT="$(printf 'gpuclk:a\001b\\c')"
run epilog 6
expect_exit 0
check; jq -e . "$TEST_TMP/reports/6.json" >/dev/null || fail "job 6: the report is not JSON: $(cat "$TEST_TMP/reports/6.json")"

# --- an empty default profile: measure only ---
conf "DEFAULT_PROFILE="
run prolog 7 SLURM_JOB_GPUS=0,1
expect_exit 0
check; [ "$(limits)" == "700 700 700 700" ] || fail "no default profile: limits $(limits)"
sleep 0.5
run epilog 7
expect_exit 0
expect_json_file '.stat.gpus | length' 7 2
conf

# --- a settings file others could write is refused, as is a missing one that was named ---
chmod 0666 "$TEST_TMP/slurm.conf"
run prolog 8 SLURM_JOB_GPUS=0
expect_exit 1; expect_err "is writable by others than its owner; not using it"
chmod 0644 "$TEST_TMP/slurm.conf"
run prolog 8 SLURM_JOB_GPUS=0 GPUCLK_SLURM_CONF="$TEST_TMP/nope.conf"
expect_exit 1; expect_err "which is not a file"
run prolog 8 SLURM_JOB_ID=x SLURM_JOB_GPUS=0
expect_exit 1; expect_err "is not a job id"
run prolog "12;rm" SLURM_JOB_GPUS=0
expect_exit 1; expect_err "is not a job id"
check; [ "$(limits)" == "700 700 700 700" ] || fail "limits $(limits) after refused runs"

# --- the measurement died: no report, but the GPUs are restored and the job is not failed ---
run prolog 9 SLURM_JOB_GPUS=3
expect_exit 0
stat_pid=$(cat "$TEST_TMP/state/job-9/stat.pid")
kill -KILL "$stat_pid"
run epilog 9
expect_exit 0
expect_err "no report for this job"
expect_json_file '.stat' 9 null
expect_json_file '.restored' 9 true
check; [ "$(limits)" == "700 700 700 700" ] || fail "limits $(limits) after job 9"
placeholder_gone() { ! pgrep -f -- "--pid=$stat_pid /dev/null" >/dev/null; }
for _ in $(seq "$(scaled 30)"); do placeholder_gone && break; sleep 0.1; done
check; placeholder_gone || fail "job 9: the measurement's placeholder outlived it: $(pgrep -af -- "--pid=$stat_pid")"

# --- a restore that fails: the epilog fails (Slurm drains the node), the journal stays ---
run prolog 10 SLURM_JOB_GPUS=2
expect_exit 0
conf 'GPUCLK_OPTS="--sim --read-only"'
run epilog 10
expect_exit 1; expect_err "restoring GPUs 2 failed"
expect_json_file '.restored' 10 false
check; [ -s "$TEST_TMP/state/job-10/journal.json" ] || fail "job 10's journal was removed although the restore failed"
conf
run epilog 10 # the admin's retry
expect_exit 0
check; [ ! -e "$TEST_TMP/state/job-10" ] && [ "$(limits)" == "700 700 700 700" ] || fail "retry: limits $(limits)"

# --- NCCL telemetry: the prolog makes the job's Inspector directory, the TaskProlog points the
# task at it (its "export" lines), the epilog removes it; off without NCCL_INSPECTOR_ROOT ---
run task-prolog 60
expect_exit 0
expect_lines 1 # nothing but an empty line: off by default
mkdir -p "$TEST_TMP/nccl"
: >"$TEST_TMP/plugin.so"
conf "NCCL_INSPECTOR_ROOT=$TEST_TMP/nccl" "NCCL_INSPECTOR_PLUGIN=$TEST_TMP/plugin.so"
run prolog 61 SLURM_JOB_GPUS=0
expect_exit 0
check; [ -d "$TEST_TMP/nccl/61" ] || fail "the prolog made no $TEST_TMP/nccl/61"
run task-prolog 61
expect_exit 0
expect_out "export NCCL_PROFILER_PLUGIN=$TEST_TMP/plugin.so"
expect_out "export NCCL_INSPECTOR_ENABLE=1"
expect_out "export NCCL_INSPECTOR_DUMP_DIR=$TEST_TMP/nccl/61"
expect_out "export NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=1000000"
run task-prolog 61 NCCL_PROFILER_PLUGIN=/opt/own.so
expect_lines 1 # the job's own plugin stays
run epilog 61 SLURM_JOB_GPUS=0
expect_exit 0
check; [ ! -e "$TEST_TMP/nccl/61" ] || fail "the epilog left $TEST_TMP/nccl/61"
conf

finish
