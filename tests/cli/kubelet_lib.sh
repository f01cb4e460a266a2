# Helpers of the kubelet tests (kubelet_test.sh, kubelet_errors_test.sh), sourced after lib.sh:
# the fake kubelet (fake_kubelet.py, Debian's python3-grpcio: skips, 77, without it), a simulated
# job in a cgroup, and waiting for gpuclk ps to show something.
# Debian's python3, where python3-grpcio lives (a python3 earlier on PATH may lack it).
KUBELET_PY=/usr/bin/python3
"$KUBELET_PY" -c 'import grpc' 2>/dev/null || { echo "skipped: $KUBELET_PY has no grpc module (apt-get install python3-grpcio)"; exit 77; }
KUBELET_SOCK="$TEST_TMP/kubelet.sock"
KUBELET_CONFIG="$TEST_TMP/kubelet.json"
KUBELET_PID=""
JOB_PID=""
start_kubelet() {
  "$KUBELET_PY" "$(dirname "${BASH_SOURCE[0]}")/fake_kubelet.py" "$KUBELET_SOCK" "$KUBELET_CONFIG" \
    2>"$TEST_TMP/kubelet.log" &
  KUBELET_PID=$!
  for _ in $(seq "$(scaled 100)"); do
    [ -e "$KUBELET_CONFIG.ready" ] && [ -S "$KUBELET_SOCK" ] && return 0
    kill -0 "$KUBELET_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "the fake kubelet did not start: $(cat "$TEST_TMP/kubelet.log")" >&2
  exit 1
}
stop_kubelet() {
  [ -n "$KUBELET_PID" ] && kill "$KUBELET_PID" 2>/dev/null && wait "$KUBELET_PID" 2>/dev/null
  KUBELET_PID=""
}
# gpu_uuids SCENARIO: the simulated GPUs' UUIDs, on one line.
gpu_uuids() {
  "$GPUCLK_BIN" --sim "$1" --direct query --query-gpu=uuid --format=csv,noheader | tr '\n' ' '
}
# start_job CGROUP GPU: a simulated BF16 GEMM of up to 120 s on GPU, in CGROUP; JOB_PID.
start_job() {
  sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$1" "$GPUCLK_BIN" --sim 2xh200 -i "$2" \
    sim-job --workload gemm-bf16 --seconds 120 >/dev/null 2>&1 &
  JOB_PID=$!
}
stop_job() {
  [ -n "$JOB_PID" ] && kill "$JOB_PID" 2>/dev/null && wait "$JOB_PID" 2>/dev/null
  JOB_PID=""
}
# remove_cgroup DIR TOP: DIR and its parents up to TOP, where empty.
remove_cgroup() {
  local d=$1
  while [ "$d" != "$2" ] && rmdir "$d" 2>/dev/null; do d=$(dirname "$d"); done
}
# wait_for_ps TEXT SECONDS: until gpuclk ps shows TEXT on the job's row (SECONDS, scaled).
wait_for_ps() {
  for _ in $(seq "$(scaled "$(($2 * 4))")"); do
    gpuclk --sim 2xh200 --socket "$SOCK" ps
    grep -E "^ +[0-9]+ +$JOB_PID " <<<"$OUT" | grep -qF -- "$1" && return 0
    sleep 0.25
  done
  return 1
}
expect_no_err_re() { check; ! grep -qE -- "$1" <<<"$ERR" || fail "stderr matches /$1/"; }
# make_pod_cgroup QOS: a fresh pod UID (POD_UID) and a container's cgroup in its kubepods slice
# (POD_CG, cgroupfs layout under CG), removed on exit with the job, the service and the kubelet;
# skips (77) where no cgroup can be made.
make_pod_cgroup() {
  CG=/sys/fs/cgroup/pids
  POD_UID=$(python3 -c 'import uuid; print(uuid.uuid4())')
  POD_CG="$CG/kubepods/$1/pod$POD_UID/$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  mkdir -p "$POD_CG" 2>/dev/null || { echo "skipped: cannot make a kubepods cgroup under $CG (root, cgroup v1 pids)"; exit 77; }
  trap 'stop_job; stop_serve; stop_kubelet; remove_cgroup "$POD_CG" "$CG"; rm -rf "$TEST_TMP"' EXIT
}
