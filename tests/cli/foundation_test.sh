#!/usr/bin/env bash
# status, info, topo, clocks, query on the simulated 4xH100 node: every command, every format,
# selection by index/UUID/bus id, bad input.
source "$(dirname "$0")/lib.sh" "$1"

# --- status (default command) ---
gpuclk --sim
expect_exit 0; expect_out "NVIDIA H100 80GB HBM3"; expect_out "simulated node"
gpuclk --sim status --format json
expect_exit 0; expect_json '.gpus | length' 4; expect_json '.gpus[0]."clocks.max.sm"' 1980
expect_json '.gpus[0]."power.limit"' 700
gpuclk --sim status --format csv
expect_exit 0; expect_out "index, name, pstate, clocks.sm [MHz]"; expect_lines 5

# make run's fallback: no driver, GPUCLK_FALLBACK_SIM=1 -> one banner line and the simulated node.
if [ ! -e /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 ]; then
  GPUCLK_FALLBACK_SIM=1 gpuclk
  expect_exit 0; expect_err "showing the simulated 4x H100 node"; expect_out "NVIDIA H100 80GB HBM3"
fi

# --- query ---
gpuclk --sim query --fields index,name,clocks.max.sm,clocks.max.mem,power.limit --format csv,noheader,nounits
expect_exit 0; expect_lines 4; expect_out "0, NVIDIA H100 80GB HBM3, 1980, 2619, 700.00"
gpuclk --sim query --fields clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format csv
expect_exit 0; expect_out "clocks.sm [MHz], clocks.mem [MHz], power.draw [W], temperature.gpu, clocks_event_reasons.active"
gpuclk --sim query --fields index,clocks.max.sm,peak.bf16.max,power.min_limit --format json
expect_exit 0; expect_json '.[0]."clocks.max.sm"' 1980; expect_json '.[0]."peak.bf16.max"' 1070.5
expect_json '.[0]."power.min_limit"' 200; expect_json 'length' 4
gpuclk --sim query --fields index,name --format table
expect_exit 0; expect_out "index  name"
# nvidia-smi's four ECC totals (issue 32: the corrected ones were missing, and "did you mean"
# offered the uncorrected field).
GPUCLK_SIM_SPEED=0 GPUCLK_SIM_STATE="$TEST_TMP/ecc.state" gpuclk --sim=faults -i 3 query --format csv,noheader \
  --fields ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total
expect_exit 0; expect_out_re '^[0-9]+, 0, [0-9]+, 0$'
gpuclk --sim query --fields ecc.errors.corected.volatile.total
expect_exit 2; expect_err "did you mean ecc.errors.corrected.volatile.total"
gpuclk --sim query --help-fields
expect_exit 0; expect_out "clocks.sm [MHz]"; expect_out "clocks_event_reasons.sw_power_cap"

# Bad input.
gpuclk --sim query --fields clocks.sm,bogus.field
expect_exit 2; expect_err "unknown field 'bogus.field'"
gpuclk --sim query
expect_exit 2; expect_err "needs --fields"
gpuclk --sim query --fields clocks.sm --format xml
expect_exit 2; expect_err "unknown format 'xml'"
gpuclk --sim query --fields clocks.sm --format json,noheader
expect_exit 2

# --- selection by index, UUID and PCI bus id ---
gpuclk --sim query --fields uuid,pci.bus_id --format csv,noheader
uuid2=$(sed -n 3p <<<"$OUT" | cut -d, -f1 | tr -d ' ')
bus3=$(sed -n 4p <<<"$OUT" | cut -d, -f2 | tr -d ' ')
gpuclk --sim -i "$uuid2" query --fields index --format csv,noheader
expect_exit 0; expect_lines 1; expect_out "2"
gpuclk --sim -i "${bus3#0000}" query --fields index --format csv,noheader
expect_exit 0; expect_out "3"
gpuclk --sim -i "3,0,$uuid2" query --fields index --format csv,noheader
expect_exit 0; expect_lines 3; [ "$(tr '\n' ' ' <<<"$OUT")" == "3 0 2 " ] || fail "order not kept: $OUT"
gpuclk --sim query --fields index -i 1 --format csv,noheader   # -i after the subcommand too
expect_exit 0; expect_lines 1
gpuclk --sim -i 9 status
expect_exit 6; expect_err "no GPU with index 9"; expect_err "GPUs here"
gpuclk --sim -i GPU-00000000-dead status
expect_exit 6
gpuclk --sim -i "zero" status
expect_exit 2

# --- a frozen node says so, in every later command too (the speed lives in the state file); a
# start time on a node already on is said to be ignored, naming the file (issue 32) ---
FROZEN="$TEST_TMP/frozen.state"
GPUCLK_SIM_STATE=$FROZEN GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=45 gpuclk --sim status
expect_exit 0
expect_out "(simulated node: default, time frozen at 45 s (GPUCLK_SIM_SPEED=0, kept in $FROZEN for every later command; GPUCLK_SIM_SPEED=1 runs it again))"
check; ! grep -q "ignored" <<<"$ERR" || fail "a fresh state file took GPUCLK_SIM_START, yet it says ignored"
GPUCLK_SIM_STATE=$FROZEN gpuclk --sim status
expect_exit 0; expect_out "time frozen at 45 s"
GPUCLK_SIM_STATE=$FROZEN GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=45 gpuclk --sim status
expect_exit 0; check; ! grep -q "ignored" <<<"$ERR" || fail "the same start time is not ignored"
GPUCLK_SIM_STATE=$FROZEN GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=100 gpuclk --sim status
expect_exit 0; expect_out "time frozen at 45 s"
expect_err "libnvml-sim: GPUCLK_SIM_START=100 ignored: the simulated node in $FROZEN is already on (started at 45 s, now at 45 s); delete that file (or give GPUCLK_SIM_STATE a new one) to power it on at 100 s"
# Asking for the start the node had continues it, at any speed: nothing to say.
GPUCLK_SIM_STATE=$FROZEN GPUCLK_SIM_SPEED=20 GPUCLK_SIM_START=45 gpuclk --sim query --fields index
expect_exit 0; check; ! grep -q "ignored" <<<"$ERR" || fail "the node's own start time is said to be ignored: $ERR"
GPUCLK_SIM_STATE=$FROZEN GPUCLK_SIM_SPEED=20 gpuclk --sim status
expect_exit 0; expect_out "time runs 20x (GPUCLK_SIM_SPEED=20"
GPUCLK_SIM_STATE=$FROZEN GPUCLK_SIM_SPEED=1 gpuclk --sim status
expect_exit 0; expect_out "(simulated node: default)"

# --- one spelling per key (issue 42): a key status, query and dmon share means one thing, in
# nvidia-smi's words (persistence_mode Enabled/Disabled, clocks_event_reasons.active the hex mask,
# .names the reasons space-separated); on one frozen node all three give the same values ---
KEYS="$TEST_TMP/keys.state"
GPUCLK_SIM_STATE=$KEYS GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=45 gpuclk --sim status --format json
expect_exit 0; STATUS_JSON=$OUT
GPUCLK_SIM_STATE=$KEYS gpuclk --sim query --fields index,persistence_mode,clocks_event_reasons.active,clocks_event_reasons.names,temperature.gpu,temperature.memory --format json
expect_exit 0; QUERY_JSON=$OUT
# dmon's JSON keys that query has are query's fields (temperature.memory was dmon's alone).
GPUCLK_SIM_STATE=$KEYS gpuclk --sim dmon -c 1 -s rp --format json
expect_exit 0; DMON_JSON=$OUT
check; jq -e -n --argjson s "$STATUS_JSON" --argjson q "$QUERY_JSON" --slurpfile d <(printf '%s\n' "$DMON_JSON") '
  [$s.gpus, $q, $d[0:4]] as [$st, $qu, $dm] | ($st | length) == 4 and
  all(range(0; 4); . as $i |
    ($st[$i] | keys) as $sk |
    all(($qu[$i] | keys)[]; . as $k | ($sk | index($k)) == null or $st[$i][$k] == $qu[$i][$k]) and
    all(($dm[$i] | keys)[]; . as $k | ($qu[$i] | has($k) | not) or $dm[$i][$k] == $qu[$i][$k]) and
    ($qu[$i].persistence_mode | IN("Enabled", "Disabled")) and
    ($qu[$i]."clocks_event_reasons.active" | test("^0x[0-9A-F]{16}$")) and
    ($st[$i]."clocks_event_reasons.names" | test(",") | not) and
    ($dm[$i] | has("temperature.memory")) and ($qu[$i]."temperature.memory" | type) == "number")' >/dev/null ||
  fail "a key means different things: status $STATUS_JSON query $QUERY_JSON dmon $DMON_JSON"
GPUCLK_SIM_STATE=$KEYS gpuclk --sim status --format csv
expect_exit 0; expect_out "persistence_mode"; expect_out "clocks_event_reasons.names"
check; ! grep -q "clocks_event_reasons.active" <<<"$OUT" || fail "status calls its names the hex mask's key"

# --- clocks ---
gpuclk --sim clocks -i 0
expect_exit 0; expect_out "Max Clocks"; expect_out "Clock Event Reasons"; expect_out "sw_power_cap"
expect_out "345–1980 MHz, step 15, 110 values"; expect_out "Memory 1593 MHz"
gpuclk --sim clocks --format json
expect_exit 0; expect_json '.gpus | length' 4; expect_json '.gpus[0].max_clocks.sm' 1980
expect_json '.gpus[0].supported_clocks[0].graphics_count' 110
expect_json '.gpus[0].clock_event_reasons.sw_power_cap.meaning | test("power limit")' true
gpuclk --sim clocks --format csv
expect_exit 0; expect_out "key, value"

# --- info ---
gpuclk --sim info
expect_exit 0; expect_out "Microarchitecture"; expect_out "Hopper"; expect_out "Compute Capability"
gpuclk --sim info --format json
expect_exit 0; expect_json '.gpus[0].sm_count' 132; expect_json '.gpus[0].compute_capability' 9.0
expect_json '.gpus[0].peak.bf16.at_max_clock' 1070.5; expect_json '.gpus[0].memory.peak_bandwidth' 3352
expect_json '.host.simulated' true; expect_json '.host.cpu.threads > 0' true
# A simulated node's host is the scenario's (default: 64 CPUs on 2 NUMA nodes), which the GPUs'
# affinity refers to; never this machine's CPUs mixed in (issue 32).
expect_json '.host.cpu.source | test("the simulated node")' true
expect_json '.host.cpu.threads' 64; expect_json '.host.cpu.numa_nodes | length' 2
expect_json '.host.cpu.numa_nodes[1].cpus' "32-63"
expect_json '.gpus[2].affinity.cpus' "32-63"; expect_json '.gpus[2].affinity.numa_nodes' "1"
expect_json '.gpus[2].affinity.gpu_numa_id' 1; expect_json '.gpus[0].affinity.numa_nodes' "0"
gpuclk --sim=8xh100 info --format json
expect_exit 0; expect_json '.host.cpu.threads' 224; expect_json '.host.cpu.numa_nodes[1].cpus' "112-223"
expect_json '[.gpus[] | .affinity.numa_nodes] | join(",")' "0,0,0,0,1,1,1,1"
gpuclk --sim info -i 0
expect_exit 0; expect_out_re "Source +: the simulated node \(scenario default: cpu_count, numa_nodes\)"
expect_out_re "Threads +: 64"; expect_out_re "Cores +: N/A"

# --- topo ---
gpuclk --sim topo
expect_exit 0; expect_out "GPU0"; expect_out "Legend:"; expect_out "NV#"
expect_out_re "^GPU2 .* 32-63 +1 +1 *$"; expect_out_re "^GPU0 .* 0-31 +0 +0 *$"
expect_out "CPU and NUMA affinity: CPUs and NUMA nodes of the simulated node (scenario default"
gpuclk --sim topo --format json
expect_exit 0; expect_json '.[0].GPU0' X; expect_json 'length' 4

# --- clock limits kept between processes (src/gpu/limits_cache.h) ---
# Off on the simulator unless named: nothing lands in the runtime directory.
XDG_RUNTIME_DIR="$TEST_TMP/xdg" gpuclk --sim --direct clocks -i 0
expect_exit 0; check; [ ! -e "$TEST_TMP/xdg/gpuclk" ] || fail "the simulator wrote a limits cache"
export GPUCLK_LIMITS_CACHE="$TEST_TMP/limits"
GPUCLK_NVML_TRACE="$TEST_TMP/trace1" gpuclk --sim --direct clocks -i 0
expect_exit 0; first=$OUT
check; [ "$(find "$TEST_TMP/limits" -name 'limits-GPU-*.json' | wc -l)" -eq 1 ] || fail "no limits file"
check; grep -q nvmlDeviceGetMaxClockInfo "$TEST_TMP/trace1" || fail "first run did not read NVML"
GPUCLK_NVML_TRACE="$TEST_TMP/trace2" gpuclk --sim --direct clocks -i 0
expect_exit 0
check; ! grep -qE "nvmlDeviceGet(MaxClockInfo|MaxCustomerBoostClock|DefaultApplicationsClock|SupportedMemoryClocks)" "$TEST_TMP/trace2" || fail "second run read the limits again"
limits_of() { sed -n '/Default Applications Clocks/,/Clock Range/p' <<<"$1"; }
check; [ "$(limits_of "$OUT" | grep -c MHz)" -eq 8 ] || fail "limits section: $(limits_of "$OUT")"
check; [ "$(limits_of "$OUT")" = "$(limits_of "$first")" ] || fail "cached limits differ"
check; [ "$(sed -n '/Supported Clocks/,$p' <<<"$OUT")" = "$(sed -n '/Supported Clocks/,$p' <<<"$first")" ] || fail "cached supported clocks differ"
# A damaged file is read past and written again.
limits_file=$(find "$TEST_TMP/limits" -name 'limits-GPU-*.json')
printf '{"format": 1, "max": [19' > "$limits_file"
GPUCLK_NVML_TRACE="$TEST_TMP/trace3" gpuclk --sim --direct clocks -i 0
expect_exit 0; expect_out "Max Clocks"
check; grep -q nvmlDeviceGetMaxClockInfo "$TEST_TMP/trace3" || fail "a damaged file was trusted"
check; jq -e '.max[1] == 1980' "$limits_file" >/dev/null || fail "the damaged file was not written again"
unset GPUCLK_LIMITS_CACHE

# --- simulator scenarios ---
gpuclk --sim=nosuchscenario status
expect_exit 2; expect_err "unknown simulator scenario 'nosuchscenario'"
# An empty scenario is no scenario (it took `status` as the name), and a name too long for the
# file system a bad argument, not an internal error (issue 42, items 11 and 12).
gpuclk --sim= status
expect_exit 2; expect_err "--sim='': no scenario named"; expect_err "give --sim alone for the default node"
gpuclk --sim '' status
expect_exit 2; expect_err "--sim='': no scenario named"
gpuclk --sim="$(printf 'a%.0s' $(seq 5000))" status
expect_exit 2; expect_err "…(5000 chars)': not a scenario name or path"; expect_err "at most 255 characters a name"

finish
