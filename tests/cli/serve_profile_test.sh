#!/usr/bin/env bash
# gpuclk serve --profile on the simulator (4x H100): a bad profile or --profile-check stops it
# before any GPU is written; the profile is applied at start (journaled); drift made by another
# process (and a simulated driver reload) is corrected within ~2 checks, logged and counted on
# /metrics; SIGTERM leaves the
# profile applied; kill -9 then `gpuclk restore` returns the original settings; read-only mode
# reports drift and writes nothing. With --govern the governor owns the SM clock lock: the
# profile neither writes nor keeps it, and stopping puts back the lock only. The Kubernetes variant (deploy/kubernetes/
# gpuclk-serve-profile.yaml) parses, mounts its ConfigMap where --profile points, and its
# profile applies on the simulated H100s (no kubectl: python3-yaml and `gpuclk apply --dry-run`).
source "$(dirname "$0")/lib.sh" "$1"
SOCK="$TEST_TMP/gpuclk.sock"
PROFILE="$TEST_TMP/node.toml"
cat >"$PROFILE" <<'TOML'
version = 1
gpus = "all"
[settings]
persistence_mode = "on"
application_clocks = "2619,1755"
locked_gpu_clocks = "1755"
power_limit_w = 650
[[override]]
gpus = "1"
power_limit_w = 600
TOML

settings() {
  gpuclk --sim --direct query --query-gpu=index,persistence_mode,clocks.applications.graphics,power.limit --format=csv,noheader
}
journal_gpus() { "$GPUCLK_BIN" --sim --format json journal 2>/dev/null | jq -r '.gpus | length'; }
locked() { # locked GPU clocks the journal records for GPU $1
  "$GPUCLK_BIN" --sim --format json journal 2>/dev/null |
    jq -r ".gpus[] | select(.index == $1) | .applied.locked_gpu_clocks.min_mhz // empty" 2>/dev/null
}
metric() { curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics" | grep -E "^$1" | head -1 | awk '{print $NF}'; }
wait_for() {
  local n=$(($1 * 5)); shift
  for _ in $(seq "$(scaled "$n")"); do eval "$*" && return 0; sleep 0.2; done
  return 1
}
APPLIED="0, Enabled, 1755 MHz, 650.00 W
1, Enabled, 1755 MHz, 600.00 W
2, Enabled, 1755 MHz, 650.00 W
3, Enabled, 1755 MHz, 650.00 W"

# An original that is not the driver's default (GPU 1), so "restored" cannot pass by resetting.
gpuclk --sim set -i 1 --power-limit 612.5 --app-clocks 2619,1980
expect_exit 0
rm -rf "$GPUCLK_STATE_DIR"
settings; ORIGINAL=$OUT

# --- Bad arguments and bad profiles: exit 2, nothing written, no socket left. ---
gpuclk --sim --socket "$SOCK" serve --listen off --profile "$PROFILE" --profile-check 500ms
expect_exit 2; expect_err "bad --profile-check '500ms'"
gpuclk --sim --socket "$SOCK" serve --listen off --profile "$PROFILE" --profile-check 2h
expect_exit 2; expect_err "bad --profile-check '2h'"
gpuclk --sim --socket "$SOCK" serve --listen off --profile "$PROFILE" --profile-check 61m
expect_exit 2; expect_err "bad --profile-check '61m'"
gpuclk --sim --socket "$SOCK" serve --listen off --profile-check 5s
expect_exit 2; expect_err "--profile-check requires --profile"
gpuclk --sim --socket "$SOCK" serve --listen off --profile "$TEST_TMP/missing.toml"
expect_exit 2; expect_err "missing.toml"
printf 'version = 1\n[settings]\npower_limt_w = 650\n' >"$TEST_TMP/typo.toml"
gpuclk --sim --socket "$SOCK" serve --listen off --profile "$TEST_TMP/typo.toml"
expect_exit 2; expect_err "power_limt_w"
# One value no GPU supports (GPU 3's override): refused before any GPU is written.
{ cat "$PROFILE"; printf '[[override]]\ngpus = "3"\npower_limit_w = 5000\n'; } >"$TEST_TMP/bad.toml"
gpuclk --sim --socket "$SOCK" serve --listen off --profile "$TEST_TMP/bad.toml"
expect_exit 2; expect_err "5000"
check; [ ! -e "$SOCK" ] || fail "a refused serve left its socket"
settings; check; [ "$OUT" == "$ORIGINAL" ] || fail "a refused profile changed the GPUs"
check; [ "$(journal_gpus)" == "0" ] || [ -z "$(journal_gpus)" ] || fail "a refused profile left a journal"

# --- Applied at start, journaled, on /metrics. ---
start_serve --sim --socket "$SOCK" serve --listen 127.0.0.1:0 --profile "$PROFILE" \
  --profile-check 1s || exit 1
LAST_CMD="serve --profile (start)"
settings; check; [ "$OUT" == "$APPLIED" ] || fail "profile not applied at start: $OUT"
check; [ "$(locked 0)" == "1755" ] || fail "GPU 0's lock not journaled: '$(locked 0)'"
check; grep -q "profile applied on GPU 1: power limit 612.500 W -> 600 W" "$TEST_TMP/serve.log" ||
  fail "no start log line for GPU 1: $(cat "$TEST_TMP/serve.log")"
check; [ "$(metric "gpuclk_profile_info\\{profile=\"$PROFILE\",read_only=\"0\"\\}")" == "1" ] ||
  fail "no gpuclk_profile_info 1"
check; [ "$(metric 'gpuclk_profile_in_sync\{gpu="2"')" == "1" ] || fail "GPU 2 not in sync"
check; [ -n "$(metric gpuclk_profile_last_check_timestamp_seconds)" ] || fail "no last check time"
check; curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/metrics.prom"
promtool check metrics <"$TEST_TMP/metrics.prom" >"$TEST_TMP/lint.txt" 2>&1 ||
  fail "promtool check metrics: $(cat "$TEST_TMP/lint.txt")"

# --- Drift from another process: corrected within ~2 checks, logged, counted. ---
gpuclk --sim --direct set -i 2 --power-limit 500
expect_exit 0
gpuclk --sim --direct set -i 3 --lock-gpu-clocks 1410
expect_exit 0
LAST_CMD="drift correction"
check; wait_for 4 'grep -q "profile drift corrected on GPU 2: power limit was 500 W, restored 650 W" "$TEST_TMP/serve.log"' ||
  fail "GPU 2's power limit not corrected: $(cat "$TEST_TMP/serve.log")"
check; wait_for 4 'grep -q "profile drift corrected on GPU 3: locked GPU clocks was 1410 MHz, restored 1755 MHz" "$TEST_TMP/serve.log"' ||
  fail "GPU 3's clock lock not corrected: $(cat "$TEST_TMP/serve.log")"
settings; check; [ "$OUT" == "$APPLIED" ] || fail "drift left: $OUT"
check; [ "$(locked 3)" == "1755" ] || fail "GPU 3's lock is '$(locked 3)'"
check; [ "$(metric 'gpuclk_profile_drift_corrections_total\{gpu="2"')" == "1" ] ||
  fail "corrections_total for GPU 2 is '$(metric 'gpuclk_profile_drift_corrections_total\{gpu="2"')'"
check; [ "$(metric 'gpuclk_profile_drift_corrections_total\{gpu="0"')" == "0" ] || fail "GPU 0 counted a correction"
check; [ "$(metric 'gpuclk_profile_in_sync\{gpu="3"')" == "1" ] || fail "GPU 3 not in sync after correction"
# A driver reload: the simulator powered on again by another process (its settings back to the
# driver's defaults) is corrected like any other drift.
if [[ "$(sanitizer_runtime)" == *libtsan* ]]; then
  # TSan must map its shadow before any other library: python3 cannot load it later.
  echo "note: the driver-reload step is skipped: python3 cannot host the TSan-built simulator"
else
  check; LD_PRELOAD=$(sanitizer_runtime) ASAN_OPTIONS=detect_leaks=0 \
    python3 -c "import ctypes, sys; l = ctypes.CDLL(sys.argv[1]); l.nvmlInit_v2(); sys.exit(l.gpuclk_sim_reset())" \
    "$GPUCLK_BIN_DIR/libnvml-sim.so" || fail "gpuclk_sim_reset failed"
  LAST_CMD="drift after a simulated driver reload"
  check; wait_for 4 'grep -q "profile drift corrected on GPU 1: power limit was 700 W, restored 600 W" "$TEST_TMP/serve.log"' ||
    fail "the reload's defaults not corrected: $(cat "$TEST_TMP/serve.log")"
  check; wait_for 2 '[ "$(settings; echo "$OUT")" == "$APPLIED" ]' || fail "after the reload: $OUT"
fi
# While the service runs, `gpuclk restore` is one more drift: the profile comes back.
gpuclk --sim restore
expect_exit 0
LAST_CMD="restore while serving"
check; wait_for 4 '[ "$(settings; echo "$OUT")" == "$APPLIED" ] && [ "$(locked 0)" == "1755" ]' ||
  fail "the profile did not come back after a restore: $(settings; echo "$OUT")"

# --- SIGTERM leaves the profile applied; `gpuclk restore` undoes it. ---
stop_serve
check; grep -q "stays applied; \`gpuclk restore\` returns the GPUs to their original settings" "$TEST_TMP/serve.log" ||
  fail "no word at stop that the profile stays applied: $(cat "$TEST_TMP/serve.log")"
settings; check; [ "$OUT" == "$APPLIED" ] || fail "SIGTERM did not leave the profile applied: $OUT"
gpuclk --sim restore
expect_exit 0
settings; check; [ "$OUT" == "$ORIGINAL" ] || fail "restore after SIGTERM: $OUT"

# --- kill -9, then `gpuclk restore` returns the original settings. ---
start_serve --sim --socket "$SOCK" serve --listen off --profile "$PROFILE" --profile-check 1s || exit 1
kill -9 "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=""
gpuclk --sim restore
expect_exit 0
settings; check; [ "$OUT" == "$ORIGINAL" ] || fail "restore after kill -9: $OUT"
check; [ "$(journal_gpus)" == "0" ] || [ -z "$(journal_gpus)" ] || fail "journal not empty after restore"

# --- Read-only: drift is reported (log, series), nothing is written. ---
GPUCLK_READ_ONLY=1 start_serve --sim --socket "$SOCK" serve --listen 127.0.0.1:0 \
  --profile "$PROFILE" --profile-check 1s || exit 1
LAST_CMD="serve --profile, read-only"
check; grep -q "read-only mode: drift is reported, never corrected" "$TEST_TMP/serve.log" ||
  fail "read-only mode not stated: $(cat "$TEST_TMP/serve.log")"
check; grep -q "GPU 1 differs from the profile: power limit is 612.500 W, the profile has 600 W" "$TEST_TMP/serve.log" ||
  fail "start-up difference not reported: $(cat "$TEST_TMP/serve.log")"
# A new drift is reported once; a lasting one is not repeated at every check.
"$GPUCLK_BIN" --sim --direct set -i 2 --power-limit 500 >/dev/null 2>&1
check; wait_for 4 'grep -q "profile drift on GPU 2: power limit is 500 W, the profile has 650 W (read-only mode: not restored)" "$TEST_TMP/serve.log"' ||
  fail "drift not reported: $(cat "$TEST_TMP/serve.log")"
sleep 2.2
check; [ "$(grep -c "GPU 1 .*612.500 W" "$TEST_TMP/serve.log")" == "1" ] ||
  fail "a lasting difference is logged more than once: $(cat "$TEST_TMP/serve.log")"
settings; check; [ "$(sed -n 3p <<<"$OUT")" == "2, Enabled, 1980 MHz, 500.00 W" ] ||
  fail "read-only mode corrected GPU 2: $OUT"
check; [ "$(metric 'gpuclk_profile_in_sync\{gpu="1"')" == "0" ] || fail "GPU 1 in sync in read-only mode"
check; [ "$(metric 'gpuclk_profile_drift_corrections_total\{gpu="1"')" == "0" ] || fail "read-only counted a correction"
check; [ "$(metric 'gpuclk_profile_drifts_total\{gpu="2"')" == "1" ] || fail "read-only drift on GPU 2 not counted once"
check; [ "$(metric "gpuclk_profile_info\\{profile=\"$PROFILE\",read_only=\"1\"\\}")" == "1" ] || fail "no read_only=1 info"
stop_serve
check; [ "$(journal_gpus)" == "1" ] || fail "read-only mode journaled (only the shell's set on GPU 2 should be)"
gpuclk --sim restore
settings; check; [ "$OUT" == "$ORIGINAL" ] || fail "read-only mode wrote: $OUT"

# --- A write that fails at start (GPU 2 cannot lock clocks): undone, apply's exit code. ---
export GPUCLK_SIM_STATE="$TEST_TMP/faults-sim.state" GPUCLK_STATE_DIR="$TEST_TMP/faults-state"
fsettings() {
  GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=100 "$GPUCLK_BIN" --sim control-faults --direct query \
    --query-gpu=index,clocks.applications.graphics,power.limit --format=csv,noheader
}
FAULTS_ORIGINAL=$(fsettings)
GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=100 gpuclk --sim control-faults --socket "$SOCK" serve \
  --listen off --profile "$PROFILE"
expect_exit 255; expect_err "applying profile $PROFILE failed"
check; [ ! -e "$SOCK" ] || fail "a failed start left its socket"
check; [ "$(fsettings)" == "$FAULTS_ORIGINAL" ] || fail "a failed start left changes: $(fsettings)"
check; [ "$("$GPUCLK_BIN" --sim control-faults --format json journal 2>/dev/null | jq -r '.gpus | length')" == "0" ] ||
  fail "a failed start left GPUs in the journal"

# --- With --govern (-i 0,1): the governor owns the clock lock, the profile keeps the rest. ---
export GPUCLK_SIM_STATE="$TEST_TMP/gov-sim.state" GPUCLK_STATE_DIR="$TEST_TMP/gov-state" GPUCLK_SIM_SPEED=4
GOV="$(cd "$(dirname "$0")" && pwd)/fixtures/govern-4gpu.toml"
gsettings() {
  gpuclk --sim "$GOV" --direct query --query-gpu=index,clocks.applications.graphics,power.limit --format=csv,noheader
}
gjournal() { "$GPUCLK_BIN" --sim "$GOV" --format json journal 2>/dev/null; }
gsettings; GOV_ORIGINAL=$OUT
start_serve --sim "$GOV" --socket "$SOCK" -i 0,1 serve --listen off --govern phase \
  --profile "$PROFILE" --profile-check 1s || exit 1
LAST_CMD="serve --govern phase --profile"
check; grep -q "the governor owns the SM clock lock" "$TEST_TMP/serve.log" ||
  fail "not stated that the governor owns the lock: $(cat "$TEST_TMP/serve.log")"
gsettings
check; [ "$(sed -n 1,2p <<<"$OUT")" == "0, 1755 MHz, 650.00 W
1, 1755 MHz, 600.00 W" ] || fail "profile not applied on GPUs 0,1: $OUT"
check; [ "$(sed -n 3p <<<"$OUT")" == "$(sed -n 3p <<<"$GOV_ORIGINAL")" ] || fail "-i 0,1 but GPU 2 changed"
check; wait_for 15 'gjournal | jq -e "[.history[] | select(.command == \"serve --govern phase\")] | length > 0" >/dev/null' ||
  fail "the governor never wrote: $(cat "$TEST_TMP/serve.log")"
sleep 2.2  # two profile checks while the governor holds locks
check; [ "$(gjournal | jq '[.history[] | select((.command | startswith("serve --profile")) and .setting == "locked_gpu_clocks")] | length')" == "0" ] ||
  fail "the profile wrote a clock lock under --govern"
check; ! grep -q "locked GPU clocks" "$TEST_TMP/serve.log" || fail "the profile reported the governor's lock as drift"
stop_serve
gsettings
check; [ "$(sed -n 1,2p <<<"$OUT")" == "0, 1755 MHz, 650.00 W
1, 1755 MHz, 600.00 W" ] || fail "stopping the governor undid the profile: $OUT"
check; [ "$(gjournal | jq -r '[.gpus[] | .applied.locked_gpu_clocks | objects] | length')" == "0" ] ||
  fail "a clock lock is left after the governor stopped: $(gjournal | jq -c '.gpus[].applied')"
gpuclk --sim "$GOV" restore
expect_exit 0
gsettings; check; [ "$OUT" == "$GOV_ORIGINAL" ] || fail "restore after --govern --profile: $OUT"

# --- deploy/kubernetes: YAML parses; the ConfigMap's profile is what --profile reads. ---
DEPLOY="$(cd "$(dirname "$0")/../../deploy/kubernetes" && pwd)"
LAST_CMD="deploy/kubernetes/gpuclk-serve-profile.yaml"
check
if ! OUT=$(python3 - "$DEPLOY" "$TEST_TMP/k8s-profile.toml" 2>&1 <<'PY'
import sys, yaml
deploy, out = sys.argv[1], sys.argv[2]
for name in ("gpuclk-serve.yaml", "servicemonitor.yaml", "gpuclk-serve-profile.yaml"):
    docs = [d for d in yaml.safe_load_all(open(f"{deploy}/{name}")) if d]
    assert docs, f"{name}: no documents"
# Both DaemonSets: the host's PID namespace and the kubelet's pod-resources socket (read-only),
# which per-pod attribution needs, and probes of /healthz (which answers 503 when unhealthy).
for name in ("gpuclk-serve.yaml", "gpuclk-serve-profile.yaml"):
    ds = next(d for d in yaml.safe_load_all(open(f"{deploy}/{name}")) if d and d["kind"] == "DaemonSet")
    spec = ds["spec"]["template"]["spec"]
    assert spec.get("hostPID") is True, f"{name}: no hostPID: true"
    c = spec["containers"][0]
    mount = next((m for m in c["volumeMounts"] if m["mountPath"] == "/var/lib/kubelet/pod-resources"), None)
    assert mount and mount.get("readOnly") is True, f"{name}: no read-only pod-resources mount"
    volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
    assert volume["hostPath"]["path"] == "/var/lib/kubelet/pod-resources", f"{name}: {volume}"
    for probe in ("readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"]["path"] == "/healthz", f"{name}: {probe}"
docs = {d["kind"]: d for d in yaml.safe_load_all(open(f"{deploy}/gpuclk-serve-profile.yaml"))}
cm, ds = docs["ConfigMap"], docs["DaemonSet"]
spec = ds["spec"]["template"]["spec"]
args = spec["containers"][0]["args"]
path = args[args.index("--profile") + 1]
mount = next(m for m in spec["containers"][0]["volumeMounts"] if m["name"] == "profile")
volume = next(v for v in spec["volumes"] if v["name"] == "profile")
assert volume["configMap"]["name"] == cm["metadata"]["name"], "the volume is not the ConfigMap"
item = volume["configMap"]["items"][0]
assert path == mount["mountPath"] + "/" + item["path"], f"--profile {path} is not the mounted file"
assert "GPUCLK_READ_ONLY" not in [e["name"] for e in spec["containers"][0]["env"]], "read-only"
open(out, "w").write(cm["data"][item["key"]])
PY
); then
  fail "$OUT"
fi
gpuclk --sim apply --dry-run "$TEST_TMP/k8s-profile.toml"
expect_exit 0; expect_out "would"

finish
