#!/usr/bin/env bash
# Pods by UID when the kubelet cannot name them (attribution/pod_names.h): a fake kubelet (a real gRPC
# server, fake_kubelet.py) that answers gRPC status UNAVAILABLE, then no kubelet socket at all.
# Either way the service says so once in its log, goes on, and gpuclk ps and /metrics name the
# job's pod by its UID.
source "$(dirname "$0")/lib.sh" "$1"
source "$(dirname "$0")/kubelet_lib.sh"

make_pod_cgroup besteffort
SOCK="$TEST_TMP/s.sock"

# 1. The kubelet answers an error: said once, with its status and message.
echo '{"error": {"code": "UNAVAILABLE", "message": "pod-resources is down for the test"}}' >"$KUBELET_CONFIG"
start_kubelet
start_serve --sim 2xh200 --socket "$SOCK" serve --counters-interval 1s --listen 127.0.0.1:0 \
  --kubelet-socket "$KUBELET_SOCK"
start_job "$POD_CG" 1
wait_for_ps "pod $POD_UID" 30 || fail "gpuclk ps never showed the pod's UID"
# Asked at start and again for the new UID (kPodResourcesRetry after the first ask).
for _ in $(seq "$(scaled 40)"); do
  [ "$(wc -l <"$KUBELET_CONFIG.calls")" -ge 2 ] && break
  sleep 0.25
done
ERR=$(cat "$TEST_TMP/serve.log")
LAST_CMD="gpuclk serve's log (kubelet answers an error)"
check
[ "$(wc -l <"$KUBELET_CONFIG.calls")" -ge 2 ] || fail "the kubelet was asked $(wc -l <"$KUBELET_CONFIG.calls") times, not again for the new pod"
expect_err "gRPC status 14 (UNAVAILABLE): pod-resources is down for the test"
check
[ "$(grep -c 'pod-resources API' <<<"$ERR")" -eq 1 ] || fail "the error is not said exactly once"
OUT=$(curl -s "http://127.0.0.1:$PORT/metrics")
LAST_CMD="GET /metrics"
expect_out "gpuclk_pod_energy_joules_total{pod_uid=\"$POD_UID\",user="
expect_no_out "namespace="
stop_job
stop_serve
stop_kubelet

# 2. No socket: never asked, said once as a pod needs a name.
start_serve --sim 2xh200 --socket "$SOCK" serve --counters-interval 1s --listen off \
  --kubelet-socket "$TEST_TMP/absent.sock"
start_job "$POD_CG" 0
wait_for_ps "pod $POD_UID" 30 || fail "gpuclk ps never showed the pod's UID"
for _ in $(seq "$(scaled 20)"); do
  grep -q "no kubelet pod-resources socket" "$TEST_TMP/serve.log" && break
  sleep 0.25
done
ERR=$(cat "$TEST_TMP/serve.log")
LAST_CMD="gpuclk serve's log (no kubelet socket)"
expect_err "no kubelet pod-resources socket at $TEST_TMP/absent.sock: pods are named by UID"
check
[ "$(grep -c 'kubelet' <<<"$ERR")" -eq 1 ] || fail "the absent socket is not said exactly once"
gpuclk --sim 2xh200 --socket "$SOCK" ps
expect_out_re "^ +0 +$JOB_PID .*pod $POD_UID .*running"
finish
