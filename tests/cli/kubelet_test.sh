#!/usr/bin/env bash
# Pods by name (attribution/pod_names.h): a fake kubelet — a real gRPC server, tests/cli/fake_kubelet.py
# on python3-grpcio — answers the pod-resources API's List on a Unix socket: pod ml/train-0
# (container trainer) holds GPU 0 as a time-slicing replica, pod web/viewer holds GPU 1. A real
# simulated job runs in the kubepods cgroup of train-0's UID on GPU 0; `gpuclk serve` asks the
# kubelet through --kubelet-socket and joins its answer with the job's pod UID and GPU: gpuclk ps,
# the `processes` answer, stat --pod NAMESPACE/NAME, the gpuclk_pod_* series and
# --metrics-compat dcgm-exporter's pod/namespace/container labels name the pod.
source "$(dirname "$0")/lib.sh" "$1"
source "$(dirname "$0")/kubelet_lib.sh"

make_pod_cgroup burstable

read -r GPU0 GPU1 < <(gpu_uuids 2xh200)
cat >"$KUBELET_CONFIG" <<JSON
{"pods": [
  {"namespace": "ml", "name": "train-0",
   "containers": [{"name": "trainer", "devices": [{"resource": "nvidia.com/gpu", "ids": ["$GPU0::0"]}]}]},
  {"namespace": "web", "name": "viewer",
   "containers": [{"name": "app", "devices": [{"resource": "nvidia.com/gpu", "ids": ["$GPU1"]}]},
                  {"name": "sidecar"}]}
]}
JSON
start_kubelet

SOCK="$TEST_TMP/s.sock"
start_serve --sim 2xh200 --socket "$SOCK" serve --counters-interval 1s --listen 127.0.0.1:0 \
  --kubelet-socket "$KUBELET_SOCK" --metrics-compat dcgm-exporter
start_job "$POD_CG" 0

# The job's pod by name once the service saw it and asked the kubelet (a new pod UID is asked
# about within kPodResourcesRetry, 5 s).
wait_for_ps "pod ml/train-0" 30 || fail "gpuclk ps never named the pod"
gpuclk --sim 2xh200 --socket "$SOCK" ps
expect_exit 0
expect_out_re "^ +0 +$JOB_PID .*pod ml/train-0 .*running"

ask '{"request":"processes"}
' >"$TEST_TMP/processes.json"
OUT=$(cat "$TEST_TMP/processes.json")
LAST_CMD="processes request"
expect_json ".processes[] | select(.pid == $JOB_PID) | [.owner, .pod_namespace, .pod_name, .container_name] | join(\" \")" \
  "pod:$POD_UID ml train-0 trainer"
expect_json ".owners[] | select(.owner == \"pod:$POD_UID\") | .pod_name" "train-0"

gpuclk --sim 2xh200 --socket "$SOCK" stat --pod ml/train-0 --format json
expect_exit 0
expect_json ".owner" "pod:$POD_UID"
expect_json ".pod_namespace + \"/\" + .pod_name" "ml/train-0"
gpuclk --sim 2xh200 --socket "$SOCK" stat --pod ml/nobody
expect_exit 6

OUT=$(curl -s "http://127.0.0.1:$PORT/metrics")
LAST_CMD="GET /metrics"
expect_out "gpuclk_pod_energy_joules_total{pod_uid=\"$POD_UID\",namespace=\"ml\",pod=\"train-0\",user=\"$(id -un)\"}"
# dcgm-exporter's labels on each GPU's series: its one holder's pod, namespace and container.
expect_out_re "^DCGM_FI_DEV_POWER_USAGE\{gpu=\"0\",.*container=\"trainer\",namespace=\"ml\",pod=\"train-0\"\}"
expect_out_re "^DCGM_FI_DEV_POWER_USAGE\{gpu=\"1\",.*container=\"app\",namespace=\"web\",pod=\"viewer\"\}"

# The kubelet was asked at start and for the new UID, not at every refresh.
CALLS=$(wc -l <"$KUBELET_CONFIG.calls")
check
[ "$CALLS" -ge 1 ] && [ "$CALLS" -le 4 ] || fail "the kubelet was asked $CALLS times"
ERR=$(cat "$TEST_TMP/serve.log")
LAST_CMD="gpuclk serve's log"
expect_no_err_re "kubelet"
finish
