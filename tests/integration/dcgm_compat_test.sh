#!/usr/bin/env bash
# `gpuclk serve --metrics-compat dcgm-exporter[:SET]` under a real Prometheus: two simulated nodes
# (4x H100 with the current set, dcgm-exporter 4.8's; 2x H200 with the older one, `:3`; each with
# its own NODE_NAME, state, socket and port) export dcgm-exporter's DCGM_FI_* series beside
# gpuclk's. Checked: promtool parses /metrics, finds gpuclk's part clean
# and has nothing to say of the DCGM part but what it says of dcgm-exporter's own names (counters
# without _total, the camelCase modelName label); every template-variable query and every PromQL
# expression of NVIDIA's dcgm-exporter dashboard (tests/integration/fixtures/, its origin in the
# README there) returns data from the older set's node, and with its `Hostname` label spelled
# `hostname` as 4.8.3 renamed it, from the current set's node; the labels are dcgm-exporter's
# release's; values in dcgm-exporter's units
# agree with gpuclk's series of the same scrape (mJ = J x 1000, MHz, %, MiB); a bad
# --metrics-compat value exits 2 naming the value and the valid one.
set -u
GPUCLK_BIN=${1:?usage: dcgm_compat_test.sh /path/to/gpuclk}
source "$(dirname "$0")/lib.sh" dcgm-compat prometheus promtool curl jq python3
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DASHBOARD="$ROOT/tests/integration/fixtures/dcgm-exporter-dashboard.json"
export GPUCLK_SIM_START=5 GPUCLK_SIM_SPEED=1
unset NODE_NAME

# --- a bad value: exit 2, the value and the valid one named, nothing started ---
for bad in dcgm prometheus DCGM-EXPORTER; do
  GPUCLK_SIM_STATE="$TMP/bad.state" "$GPUCLK_BIN" --sim default --socket "$TMP/bad.sock" serve \
    --listen off --metrics-compat "$bad" >"$TMP/bad.out" 2>&1
  rc=$?
  check; [ $rc -eq 2 ] || fail "--metrics-compat $bad: exit $rc, expected 2: $(cat "$TMP/bad.out")"
  check; grep -q "'$bad'.*dcgm-exporter" "$TMP/bad.out" ||
    fail "--metrics-compat $bad: the message does not name the value and dcgm-exporter: $(cat "$TMP/bad.out")"
done
check; "$GPUCLK_BIN" completion bash | grep -q -- "--metrics-compat" ||
  fail "gpuclk completion bash does not offer --metrics-compat"

# --- two nodes ---
NODES=(default 2xh200)
declare -A PORT HOST=([default]=gpu-node-a [2xh200]=gpu-node-b) GPUS=([default]=4 [2xh200]=2)
# Each node's set, its host label and whether it has the driver-version label.
declare -A COMPAT=([default]=dcgm-exporter [2xh200]=dcgm-exporter:3)
declare -A HOST_LABEL=([default]=hostname [2xh200]=Hostname)
declare -A DRIVER=([default]='DCGM_FI_DRIVER_VERSION!=""' [2xh200]='DCGM_FI_DRIVER_VERSION=""')
for node in "${NODES[@]}"; do
  NODE_NAME=${HOST[$node]} GPUCLK_SIM_STATE="$TMP/$node.state" GPUCLK_STATE_DIR="$TMP/$node.journal" \
    "$GPUCLK_BIN" --sim "$node" --socket "$TMP/$node.sock" serve --listen 127.0.0.1:0 \
    --counters-interval 1s --metrics-compat "${COMPAT[$node]}" 2>"$TMP/$node.log" &
  PIDS+=($!)
done
for node in "${NODES[@]}"; do
  for _ in $(seq 200); do grep -q "metrics http://" "$TMP/$node.log" && break; sleep 0.1; done
  PORT[$node]=$(grep -o 'http://127.0.0.1:[0-9]*' "$TMP/$node.log" | head -1 | sed 's/.*://')
  [ -n "${PORT[$node]}" ] || { echo "serve $node did not start: $(cat "$TMP/$node.log")"; exit 1; }
done
sleep 2.5  # two slow samples (the GPM ratios and the NVLink rate need them)

# --- promtool: the text parses; gpuclk's part is clean; of the DCGM part it says only what it
#     says of dcgm-exporter's own names ---
for node in "${NODES[@]}"; do
  curl -sf "http://127.0.0.1:${PORT[$node]}/metrics" >"$TMP/$node.prom"
  check; grep -q '^DCGM_FI_DEV_GPU_TEMP{' "$TMP/$node.prom" || fail "$node: no DCGM_FI_DEV_GPU_TEMP"
  promtool check metrics <"$TMP/$node.prom" >"$TMP/$node.lint" 2>&1
  rc=$?
  check; [ $rc -eq 0 ] || [ $rc -eq 3 ] || fail "promtool check metrics ($node): exit $rc (not a lint finding): $(cat "$TMP/$node.lint")"
  unexpected=$(grep -vE '^DCGM_FI_[A-Z0-9_]+ (counter metrics should have "_total" suffix|metric name should not include type .counter.|label names should be written in .snake_case. not .camelCase.)$' "$TMP/$node.lint")
  check; [ -z "$unexpected" ] || fail "promtool check metrics ($node) found more than dcgm-exporter's naming: $unexpected"
  # gpuclk's own families alone: clean.
  awk '/^# HELP DCGM_FI_/ {skip=1} /^# HELP gpuclk_/ {skip=0} !skip' "$TMP/$node.prom" >"$TMP/$node.gpuclk.prom"
  check; grep -q DCGM_ "$TMP/$node.gpuclk.prom" && fail "$node: DCGM series among gpuclk's"
  check; promtool check metrics <"$TMP/$node.gpuclk.prom" >"$TMP/lint.txt" 2>&1 ||
    fail "promtool check metrics ($node, gpuclk's part): $(cat "$TMP/lint.txt")"
  echo "promtool on $node's DCGM part:$(sed 's/^DCGM_FI_[A-Z0-9_]* //' "$TMP/$node.lint" | sort | uniq -c | tr -s ' \n' ' ;')"
done


# --- Prometheus scrapes them ---
PROM_PORT=$(free_port)
{
  echo "global: {scrape_interval: 1s, evaluation_interval: 1s}"
  echo "scrape_configs:"
  echo "  - job_name: gpuclk"
  echo "    static_configs:"
  for node in "${NODES[@]}"; do
    echo "      - targets: ['127.0.0.1:${PORT[$node]}']"
  done
} >"$TMP/prometheus.yml"
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$TMP/prometheus.log" 2>&1 &
PIDS+=($!)
API="http://127.0.0.1:$PROM_PORT/api/v1"
promql() { curl -sf --get "$API/query" --data-urlencode "query=$1"; }
value() { promql "$1" | jq -r '.data.result[0].value[1] // empty' 2>/dev/null; }
for _ in $(seq 300); do
  n=$(value 'count(DCGM_FI_PROF_GR_ENGINE_ACTIVE) and count(DCGM_FI_DEV_FB_FREE)')
  up=$(value 'sum(up{job="gpuclk"})')
  [ "${n:-0}" == 6 ] && [ "${up:-0}" == 2 ] && break
  sleep 0.1
done
check; { [ "${up:-0}" == 2 ] && [ "${n:-0}" == 6 ]; } ||
  fail "Prometheus did not get 2 nodes x 6 GPUs (up=$up, GR_ENGINE_ACTIVE series=$n): $(tail -5 "$TMP/prometheus.log")"

# --- dcgm-exporter's labels, as each set's release spells them ---
for node in "${NODES[@]}"; do
  q="count(DCGM_FI_DEV_GPU_TEMP{${HOST_LABEL[$node]}=\"${HOST[$node]}\",gpu=~\"[0-9]+\",UUID=~\"GPU-.+\",pci_bus_id=~\"[0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}[.][0-7]\",device=~\"nvidia[0-9]+\",modelName=~\"NVIDIA .+\",${DRIVER[$node]}})"
  got=$(value "$q")
  check; [ "${got:-0}" == "${GPUS[$node]}" ] || fail "$node: $got GPUs with dcgm-exporter's labels, expected ${GPUS[$node]}: $q"
done
# device is "nvidia" and the index.
# shellcheck disable=SC2016  # $1 is label_replace's, not the shell's
got=$(value 'count(DCGM_FI_DEV_GPU_TEMP unless on(instance, gpu, device) label_replace(DCGM_FI_DEV_GPU_TEMP, "device", "nvidia$1", "gpu", "(.*)"))')
check; [ -z "$got" ] || fail "device is not nvidia<gpu> on $got series"
# No pod/namespace/container where nobody is known to hold the GPU (no labels, as dcgm-exporter).
got=$(value 'count(DCGM_FI_DEV_GPU_TEMP{pod!=""} or DCGM_FI_DEV_GPU_TEMP{namespace!=""} or DCGM_FI_DEV_GPU_TEMP{container!=""})')
check; [ -z "$got" ] || fail "owner labels without an owner: $got series"

# --- units: dcgm-exporter's, against gpuclk's series of the same scrape ---
# rate() over [10s] with fewer samples than the window extrapolates (about half the rate with 4
# s of samples): wait until every GPU's window is covered.
wait_covered() {
  for _ in $(seq 200); do
    n=$(value 'min(count_over_time(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[10s]))')
    [ "${n:-0}" -ge 10 ] && return
    sleep 0.1
  done
}
wait_covered
while read -r what expr limit; do
  got=$(value "$expr")
  check; python3 -c "import sys; sys.exit(0 if float('${got:-nan}') <= $limit else 1)" 2>/dev/null ||
    fail "$what: $expr = ${got:-no data}, expected <= $limit"
  echo "units: $what: largest difference $got (limit $limit)"
done <<'EOF'
energy_mJ max(abs(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION-on(instance,gpu)(gpuclk_gpu_energy_joules_total*1000))) 0.5
sm_clock_MHz max(abs(DCGM_FI_DEV_SM_CLOCK*1e6-on(instance,gpu)gpuclk_gpu_sm_clock_hertz)) 500000
power_W max(abs(DCGM_FI_DEV_POWER_USAGE-on(instance,gpu)gpuclk_gpu_power_watts)) 0
temperature_C max(abs(DCGM_FI_DEV_GPU_TEMP-on(instance,gpu)gpuclk_gpu_temperature_celsius)) 0.5
gpu_util_percent max(abs(DCGM_FI_DEV_GPU_UTIL-on(instance,gpu)(gpuclk_gpu_utilization_ratio*100))) 0.5
fb_used_MiB max(abs(DCGM_FI_DEV_FB_USED-on(instance,gpu)floor(gpuclk_gpu_memory_used_bytes/1048576))) 0
fb_free_MiB max(abs(DCGM_FI_DEV_FB_FREE-on(instance,gpu)floor((gpuclk_gpu_memory_total_bytes-gpuclk_gpu_memory_used_bytes)/1048576))) 0
tensor_ratio max(abs(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE-on(instance,gpu)gpuclk_gpu_gpm_activity_ratio{activity="tensor"})) 0
xid max(DCGM_FI_DEV_XID_ERRORS) 0
EOF
# The energy counter's rate in mJ/s is the power in W x 1000.
got=$(value 'sum(rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[10s])) / sum(avg_over_time(DCGM_FI_DEV_POWER_USAGE[10s])) / 1000')
echo "energy rate (mJ/s) / mean power (W) / 1000 = $got"
check; python3 -c "import sys; sys.exit(0 if 0.8 < float('$got') < 1.25 else 1)" 2>/dev/null ||
  fail "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION's rate / DCGM_FI_DEV_POWER_USAGE = $got, expected 0.8-1.25 (mJ vs W)"

# --- NVIDIA's dashboard: every variable query, then every panel's expression, returns data ---
# dashboard FILE HOSTVAR NODE: asks FILE's queries; its host variable must hold NODE's name alone.
# A variable's values as Grafana's "All" of a multi-value variable gives them: (a|b|c).
declare -A VARS
substitute() {
  local q=$1 name
  for name in "${!VARS[@]}"; do q=${q//\$$name/${VARS[$name]}}; done
  printf '%s' "$q"
}
dashboard() {
  local file=$1 hostvar=$2 node=$3 nvars=0 name query selector label values e q n
  VARS=()
  while IFS=$'\t' read -r name query; do
    [[ $query =~ ^label_values\((.*),[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)\)$ ]] ||
      { fail "variable $name: not a label_values query: $query"; continue; }
    selector=$(substitute "${BASH_REMATCH[1]}")
    label=${BASH_REMATCH[2]}
    values=$(curl -sf --get "$API/label/$label/values" --data-urlencode "match[]=$selector" | jq -r '.data[]')
    nvars=$((nvars + 1))
    check; [ -n "$values" ] || { fail "$file: variable $name returns no data: $query"; continue; }
    # Regex metacharacters escaped as Grafana escapes them for Prometheus (a backslash, doubled
    # inside PromQL's string).
    # shellcheck disable=SC2016  # a Python expression: ${} is a regex's
    VARS[$name]="($(printf '%s\n' "$values" | python3 -c 'import re,sys; print("|".join(re.sub(r"([.*+?^${}()|\[\]\\])", r"\\\\\1", l.strip()) for l in sys.stdin if l.strip()))'))"
    echo "variable $name = ${VARS[$name]}"
  done < <(jq -r '.templating.list[] | select(.type == "query") | [.name, (.query.query // .query)] | @tsv' "$file")
  check; [ "${VARS[$hostvar]:-}" == "($node)" ] ||
    fail "$file: the $hostvar variable: ${VARS[$hostvar]:-none}, expected ($node)"
  mapfile -t EXPRS < <(jq -r '.panels[].targets[].expr' "$file")
  for e in "${EXPRS[@]}"; do
    q=$(substitute "$e")
    n=$(promql "$q" | jq -r '.data.result | length')
    check; [ "${n:-0}" -gt 0 ] || fail "$file: dashboard expression returns no data: $q"
  done
  echo "$file: ${#EXPRS[@]} dashboard expressions and $nvars variable queries asked (failures above)"
  [ "${#EXPRS[@]}" -ge 8 ] || fail "only ${#EXPRS[@]} expressions in $file"
}
# The older set: the dashboard as it is (its Hostname variable).
dashboard "$DASHBOARD" Hostname gpu-node-b
# The current set: dcgm-exporter 4.8.3 renamed the Hostname label to hostname, and NVIDIA's
# dashboard followed (its legends read {{hostname}}); the same queries with that spelling.
sed 's/Hostname/hostname/g' "$DASHBOARD" >"$TMP/dashboard-hostname.json"
dashboard "$TMP/dashboard-hostname.json" hostname gpu-node-a

# --- a clean stop ---
for i in 0 1; do kill -TERM "${PIDS[$i]}"; done
for i in 0 1; do
  wait "${PIDS[$i]}"; rc=$?
  check; [ $rc -eq 0 ] || fail "serve ${NODES[$i]} exited $rc on SIGTERM"
done
echo "$CHECKS checks, $FAILURES failed"
[ "$FAILURES" -eq 0 ]
