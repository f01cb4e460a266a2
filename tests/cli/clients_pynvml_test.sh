#!/usr/bin/env bash
# Debian's python3-pynvml on the simulator, loaded the way it loads the driver's NVML
# (libnvidia-ml.so.1 through LD_LIBRARY_PATH=<build>/nvml-compat). On every shipped scenario,
# frozen 10 s after power-on: every device query pynvml wraps is called on every GPU
# (fixtures/pynvml_probe.py) — none may be a missing function or fail outside NVML's errors —
# and every value gpuclk query prints equals what pynvml read on the same node.
# Skips (77) without python3-pynvml: scripts/install-test-clients.sh installs it.
source "$(dirname "$0")/lib.sh" "$1"

PY=/usr/bin/python3  # Debian's interpreter: python3-pynvml is installed for it
PROBE="$(dirname "$0")/fixtures/pynvml_probe.py"
"$PY" -c 'import pynvml' 2>/dev/null || { echo "SKIP: python3-pynvml is not installed (scripts/install-test-clients.sh)"; exit 77; }
COMPAT="$GPUCLK_BIN_DIR/nvml-compat"
[ -e "$COMPAT/libnvidia-ml.so.1" ] || { echo "FAIL: $COMPAT/libnvidia-ml.so.1 is missing (built with nvml_sim)"; exit 1; }

# Every field gpuclk query knows, but the time stamp.
FIELDS=$("$GPUCLK_BIN" query --help-fields | awk '/^[a-z]/ && $1 != "timestamp" {print $1}' | paste -sd,)

for scenario in $(cd "$GPUCLK_BIN_DIR/scenarios" && ls -- *.toml | sed 's/\.toml$//'); do
  export GPUCLK_SIM_SCENARIO=$scenario GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=10
  export GPUCLK_SIM_STATE="$TEST_TMP/$scenario.state"
  gpuclk --sim="$scenario" query --fields "$FIELDS" --format json
  query_rc=$RC
  printf '%s' "$OUT" >"$TEST_TMP/query.json"
  OUT=$(LD_LIBRARY_PATH="$COMPAT" LD_PRELOAD=$(sanitizer_runtime) ASAN_OPTIONS=detect_leaks=0 \
    timeout "$(scaled 60)" "$PY" "$PROBE" --compare "$TEST_TMP/query.json" 2>"$TEST_TMP/stderr")
  RC=$?
  ERR=$(cat "$TEST_TMP/stderr")
  LAST_CMD="pynvml_probe.py ($scenario)"
  expect_exit 0
  if [ "$query_rc" -ne 0 ]; then
    # No node to compare with (no-driver): pynvml's nvmlInit fails the same way.
    expect_json '.init' 'ERR:Driver Not Loaded'
    continue
  fi
  expect_json '.function_not_found | length' 0
  expect_json '.errors | length' 0
  expect_json '.mismatches | join("; ")' ''
  # Only the faults scenario injects read errors (random, a few per cent of telemetry reads).
  if [ "$scenario" = faults ]; then
    check; [ "$(jq '.unread | length' <<<"$OUT")" -le 10 ] || fail "faults: $(jq -c .unread <<<"$OUT")"
  else
    expect_json '.unread | join("; ")' ''
  fi
  expect_json '.gpus | length' "$(jq length "$TEST_TMP/query.json")"
  check; [ "$(jq .compared <<<"$OUT")" -ge 40 ] || fail "only $(jq .compared <<<"$OUT") values compared"
  # Events on a frozen clock: every supported type registers, and no event is waiting.
  expect_json '[.gpus[] | select(has("events")) | .events.register == null and .events.wait == "ERR:Timeout"] | all' true
  # Every GPU that runs the scenario's workload shows its process, in every list layout.
  expect_json '[.gpus[] | select(.["processes.compute"] | type == "array") |
                (.["processes.compute"] == .["processes.compute_v3"])] | all' true
done
echo "pynvml functions called: $(jq '.functions | length' <<<"$OUT"), calls on the last scenario: $(jq .calls <<<"$OUT")"
finish
