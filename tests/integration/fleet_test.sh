#!/usr/bin/env bash
# gpuclk fleet against a real Prometheus scraping eight `gpuclk serve`, each a simulated node of
# eight H100s under a BF16 GEMM loop (own scenario, state file, journal, socket and port). Three
# problems are planted: node 3's application clocks set lower than the others' (through
# `gpuclk set` on its state before its service starts), node 5's GPU 5 poorly cooled (thermal
# slowdown), node 6's GPU 3 lost. fleet must find exactly those (rule, node, GPU) and nothing
# else above info; its JSON is checked with jq, its table names every node. A clock lock set on
# one GPU while the services run must show up as the odd setting of its node; --dmon streams a
# line per node and refresh when piped. Then the error
# paths: bad options (exit 2), a selector matching nothing (exit 6), a server that never
# answers, one that is not Prometheus and a stopped Prometheus (exit 255 within --timeout,
# naming the URL).
set -u
GPUCLK_BIN=${1:?usage: fleet_test.sh /path/to/gpuclk}
source "$(dirname "$0")/fleet_lib.sh" fleet prometheus promtool curl jq python3
# Warm (5 min after power-on), so the poorly cooled GPU is in thermal slowdown from the start.
export GPUCLK_SIM_START=300

# --- the scenarios: one node type, two with a fault ---
cat >"$TMP/node.toml" <<'TOML'
[node]
description = "8x H100 SXM5 80GB, BF16 GEMM loop (gpuclk fleet test)"
gpu_model = "h100-sxm5-80gb"
gpu_count = 8
privileged = true
cpu_count = 224
numa_nodes = 2
gpus_per_pcie_switch = 2
nvswitch = true

[gpu_defaults]
workload = "gemm"

[workloads.gemm]
start_s = 1
repeat = true
process = { pid = 44000, name = "python3 bench_bf16.py", memory_gib = 40 }

[[workloads.gemm.phases]]
name = "BF16 GEMM 8192^3"
kind = "compute"
dtype = "bf16"
tflop = 1000
intensity = 850
TOML
{ cat "$TMP/node.toml"; printf '\n[[gpu]]\nindex = 5\ncooling_factor = 2.2\n'; } >"$TMP/hot.toml"
{ cat "$TMP/node.toml"; printf '\n[[gpu]]\nindex = 3\nlost_at_s = 10\n'; } >"$TMP/lost.toml"
NODES=(0 1 2 3 4 5 6 7)
MISMATCHED=3 HOT=5 HOT_GPU=5 LOST=6 LOST_GPU=3
scenario() { case $1 in $HOT) echo "$TMP/hot.toml" ;; $LOST) echo "$TMP/lost.toml" ;; *) echo "$TMP/node.toml" ;; esac; }
on_node() { # on_node N ARGS...: gpuclk on node N's simulated GPUs and journal (exec: so a
  local n=$1; shift  # background `on_node` is the service's own pid, which cleanup stops)
  export GPUCLK_SIM_STATE="$TMP/n$n.state" GPUCLK_STATE_DIR="$TMP/n$n.journal"
  exec "$GPUCLK_BIN" --sim "$(scenario "$n")" --socket "$TMP/n$n.sock" "$@"
}

# The planted mismatch: node 3's application clocks 1410 MHz (the others keep 1980).
(on_node $MISMATCHED set --app-clocks 2619,1410) >"$TMP/set.txt" 2>&1 ||
  { echo "set on node $MISMATCHED failed: $(cat "$TMP/set.txt")"; exit 1; }

for n in "${NODES[@]}"; do
  (on_node "$n" serve --listen 127.0.0.1:0 --interval 250ms) 2>"$TMP/n$n.log" &
  PIDS+=($!)
done
wait_for_services "${NODES[@]}"

# --- Prometheus scrapes them ---
start_prometheus "${NODES[@]}"
# Eight nodes up with their settings and findings, and a few scrapes of each in the range.
# (Bounds only for a hang: each loop ends as soon as its condition holds; a loaded machine with
# sanitized services needs more than the seconds an idle one does.)
for _ in $(seq $((600 * ${GPUCLK_TEST_TIME_SCALE:-1}))); do
  up=$(promql 'sum(up{job="gpuclk"})')
  n=$(promql 'min(count_over_time(gpuclk_gpu_application_sm_clock_hertz[20s]))')
  [ "${up:-0}" == 8 ] && [ "${n:-0}" -ge 6 ] && break
  sleep 0.1
done
check; [ "${up:-0}" == 8 ] && [ "${n:-0}" -ge 6 ] ||
  fail "Prometheus did not get 8 nodes (up=$up, samples per series=$n): $(tail -5 "$TMP/prometheus.log")"
echo "Prometheus has 8 nodes after $(($(date +%s) - START)) s"

# --- the exporter's series fleet relies on ---
got=$(promql "count(gpuclk_finding{instance=\"${INSTANCE[$LOST]}\",rule=\"gpu_lost\",severity=\"critical\",gpus=\"$LOST_GPU\"})")
check; [ "$got" == 1 ] || fail "node $LOST: no gpuclk_finding{rule=\"gpu_lost\",gpus=\"$LOST_GPU\"} ($got)"
got=$(promql 'count(gpuclk_gpu_locked_clocks{domain="sm"} == 0)')
check; [ "$got" == 64 ] || fail "gpuclk_gpu_locked_clocks{domain=\"sm\"} == 0 on $got GPUs, expected 64"

# --- fleet: JSON ---
"$GPUCLK_BIN" fleet --prometheus "$URL" --range 20s --format json >"$TMP/fleet.json" 2>"$TMP/fleet.err"
RC=$?
check; [ $RC -eq 11 ] || fail "fleet exited $RC, expected 11 (a lost GPU is critical): $(cat "$TMP/fleet.err")"
check; jq -e . "$TMP/fleet.json" >/dev/null || fail "fleet --format json is not JSON: $(head -c 300 "$TMP/fleet.json")"
got=$(jq '.gpus | length' "$TMP/fleet.json")
check; [ "$got" == 64 ] || fail "fleet lists $got GPUs, expected 64"
# (A GPU lost before its service started has no UUID or model: the service never read them.)
got=$(jq -c '[.gpus[] | select(((.instance|type)=="string" and (.gpu|type)=="number" and (.lost or
          ((.uuid|startswith("GPU-")) and .model=="NVIDIA H100 80GB HBM3" and (.power_limit_w|type)=="number" and (.app_sm_clock_mhz|type)=="number"
          and (.persistence_mode|type)=="boolean" and (.sm_clock_mhz|type)=="number" and (.power_w|type)=="number"))) | not)]' "$TMP/fleet.json")
check; [ "$got" == "[]" ] || fail "GPUs without instance, gpu, uuid, model, clocks, power, settings: $got"
got=$(jq -c "[.gpus[] | select(.lost) | [.instance, .gpu]]" "$TMP/fleet.json")
check; [ "$got" == "[[\"${INSTANCE[$LOST]}\",$LOST_GPU]]" ] || fail "lost GPUs: $got"
got=$(jq '(.findings | length) as $all | [.findings[] | select((.rule|type)=="string" and (.severity|IN("info","warning","critical")) and (.instance|type)=="string"
          and (.gpus|type)=="array" and (.summary|type)=="string" and (.evidence|type)=="object" and (.fix|type)=="string")] | length == $all' "$TMP/fleet.json")
check; [ "$got" == true ] || fail "a finding lacks rule, severity, instance, gpus, summary, evidence or fix"
got=$(jq '[.nodes[] | select(.up == true and .gpus == 8 and .energy_j > 0)] | length' "$TMP/fleet.json")
check; [ "$got" == 8 ] || fail "$got of 8 nodes up with 8 GPUs and energy over the range"
got=$(jq -r ".gpus[] | select(.instance==\"${INSTANCE[$MISMATCHED]}\" and .gpu==0) | .app_sm_clock_mhz" "$TMP/fleet.json")
check; [ "$got" == 1410 ] || fail "node $MISMATCHED GPU 0 application SM clock $got, expected 1410"

# Exactly the planted problems among the findings above info (the nodes' own findings may add
# detail, but only on the planted GPUs).
jq -r '.findings[] | select(.severity != "info") | "\(.rule) \(.instance) \(.gpus | map(tostring) | join(","))"' \
  "$TMP/fleet.json" | sort >"$TMP/found.txt"
{
  echo "gpu_lost ${INSTANCE[$LOST]} $LOST_GPU"
  echo "settings_differ ${INSTANCE[$MISMATCHED]} 0,1,2,3,4,5,6,7"
  echo "throttled ${INSTANCE[$HOT]} $HOT_GPU"
} | sort >"$TMP/expected.txt"
FLEET_RULES='^(settings_differ|throttled|straggler|idle_allocated|gpu_lost|node_not_scraped) '
grep -E "$FLEET_RULES" "$TMP/found.txt" >"$TMP/found_fleet.txt"
check; diff "$TMP/expected.txt" "$TMP/found_fleet.txt" >"$TMP/diff.txt" ||
  fail "fleet's findings above info differ from the planted ones: $(cat "$TMP/diff.txt")"
while read -r rule instance gpus; do
  ok=0
  [ "$instance" == "${INSTANCE[$MISMATCHED]}" ] && ok=1
  [ "$instance" == "${INSTANCE[$HOT]}" ] && [ "$gpus" == "$HOT_GPU" ] && ok=1
  [ "$instance" == "${INSTANCE[$LOST]}" ] && [ "$gpus" == "$LOST_GPU" ] && ok=1
  check; [ $ok == 1 ] || fail "a node's finding beyond the planted problems: $rule $instance GPUs $gpus"
done < <(grep -vE "$FLEET_RULES" "$TMP/found.txt")
got=$(jq -r "[.findings[] | select(.rule==\"settings_differ\")][0] | .summary + \" / \" + .fix" "$TMP/fleet.json")
check; [[ "$got" == *"1410/2619 MHz"*"fleet's 1980/2619 MHz"*"gpuclk set --app-clocks 2619,1980"* ]] ||
  fail "settings_differ does not name the odd value, the majority and the fix: $got"
echo "findings above info:"; sed 's/^/    /' "$TMP/found.txt"

# --- fleet: table ---
"$GPUCLK_BIN" fleet --prometheus "$URL" --range 20s >"$TMP/fleet.txt" 2>&1
RC=$?
check; [ $RC -eq 11 ] || fail "fleet (table) exited $RC"
for n in "${NODES[@]}"; do
  check; [ "$(grep -c "^${INSTANCE[$n]} " "$TMP/fleet.txt")" -ge 9 ] ||
    fail "the table lacks node ${INSTANCE[$n]} (8 GPU rows and a node row)"
done
check; grep -q "CRITICAL: ${INSTANCE[$LOST]}: GPU $LOST_GPU fell off the bus" "$TMP/fleet.txt" ||
  fail "no lost-GPU line in the table view: $(tail -20 "$TMP/fleet.txt")"

# --- fleet --dmon, piped: one line per node and refresh, streamed ---
t0=$(date +%s.%N)
"$GPUCLK_BIN" fleet --prometheus "$URL" --dmon --interval 1s -c 2 >"$TMP/dmon.txt" 2>&1
RC=$?
took=$(python3 -c "print(round($(date +%s.%N) - $t0, 2))")
check; [ $RC -eq 0 ] || fail "fleet --dmon -c 2 exited $RC: $(cat "$TMP/dmon.txt")"
check; [ "$(grep -c '^#' "$TMP/dmon.txt")" == 1 ] && [ "$(grep -vc '^#' "$TMP/dmon.txt")" == 16 ] ||
  fail "fleet --dmon -c 2: expected a header and 16 lines: $(cat "$TMP/dmon.txt")"
check; ! grep -q $'\x1b' "$TMP/dmon.txt" || fail "fleet --dmon piped wrote escape codes"
check; python3 -c "import sys; sys.exit(0 if 1 <= $took < 4 else 1)" || fail "fleet --dmon --interval 1s -c 2 took $took s"
line=$(grep "${INSTANCE[$LOST]}" "$TMP/dmon.txt" | head -1)
check; [[ "$line" =~ ${INSTANCE[$LOST]}\ +1\ +8\ +1\  ]] || fail "node $LOST's line lacks up 1, 8 GPUs, 1 lost: $line"
"$GPUCLK_BIN" fleet --prometheus "$URL" --dmon --interval 1s -c 1 --format csv >"$TMP/dmon.csv" 2>&1
check; [ "$(head -1 "$TMP/dmon.csv")" == "time, instance, up, gpus, lost, sm_clock_mhz, power_w, power_limit_w, temperature_max_c, utilization_pct, critical, warning" ] &&
  [ "$(grep -c "^[0-9:]*, 127.0.0.1:[0-9]*, 1, 8, " "$TMP/dmon.csv")" == 8 ] ||
  fail "fleet --dmon --format csv: $(cat "$TMP/dmon.csv")"
echo "fleet --dmon (piped):"; head -3 "$TMP/dmon.txt" | sed 's/^/    /'

# --- the fleet examples of README.md and docs/fleet.md are this run's output ---
# (scripts/doc-examples.py --recorded: each line they show is a line of it, ports masked;
# FLEET_EXAMPLES=DIR keeps the outputs there, to write the examples from.)
jq -c '(.gpus[] | select(.gpu == 0)), .nodes[]' "$TMP/fleet.json" >"$TMP/fleet-jq.txt"
DOCS="$(cd "$(dirname "$0")/../.." && pwd)"
[ -n "${FLEET_EXAMPLES:-}" ] && cp "$TMP/fleet.txt" "$TMP/dmon.txt" "$TMP/fleet-jq.txt" "$FLEET_EXAMPLES/"
recorded() {
  check
  python3 "$DOCS/scripts/doc-examples.py" --recorded "$1" "$2" "$DOCS/README.md" "$DOCS/docs/fleet.md" \
    >"$TMP/recorded.out" 2>&1 || fail "the docs' example of $1 is not what it printed: $(cat "$TMP/recorded.out")"
}
recorded 'gpuclk fleet --prometheus "http://127.0.0.1:$PROM_PORT" --range 20s' "$TMP/fleet.txt"
recorded 'gpuclk fleet --prometheus "http://127.0.0.1:$PROM_PORT" --dmon --interval 1s -c 2' "$TMP/dmon.txt"
recorded 'gpuclk fleet --prometheus "http://127.0.0.1:$PROM_PORT" --range 20s --format json | jq -c '"'"'(.gpus[] | select(.gpu == 0)), .nodes[]'"'"'' "$TMP/fleet-jq.txt"

# --- a clock lock set while the services run (gpuclk's journal → /metrics → fleet) ---
(on_node 0 set -i 2 --lock-gpu-clocks 1410,1755) >"$TMP/lock.txt" 2>&1 ||
  fail "set --lock-gpu-clocks on node 0: $(cat "$TMP/lock.txt")"
for _ in $(seq $((300 * ${GPUCLK_TEST_TIME_SCALE:-1}))); do
  got=$(promql "gpuclk_gpu_locked_clock_max_hertz{instance=\"${INSTANCE[0]}\",gpu=\"2\",domain=\"sm\"}")
  [ "$got" == 1755000000 ] && break
  sleep 0.1
done
check; [ "$got" == 1755000000 ] || fail "node 0 GPU 2: gpuclk_gpu_locked_clock_max_hertz $got, expected 1755000000"
for n in 0 $LOST; do
  curl -sf "http://${INSTANCE[$n]}/metrics" >"$TMP/n$n.prom"
  check; promtool check metrics <"$TMP/n$n.prom" >"$TMP/lint.txt" 2>&1 ||
    fail "promtool check metrics (node $n): $(cat "$TMP/lint.txt")"
done
check; grep -q '^gpuclk_gpu_locked_clock_min_hertz{gpu="2",.*domain="sm"} 1410000000' "$TMP/n0.prom" ||
  fail "node 0: no lock's lower end on /metrics"
"$GPUCLK_BIN" fleet --prometheus "$URL" --range 20s --format json >"$TMP/lock.json" 2>&1
got=$(jq -r ".findings[] | select(.rule==\"settings_differ\" and .instance==\"${INSTANCE[0]}\") | \"\(.gpus) \(.summary)\"" "$TMP/lock.json")
check; [[ "$got" == "[2] "*"locked SM clocks 1410-1755 MHz on GPU 2 differ from the fleet's unlocked"* ]] ||
  fail "no settings_differ for node 0's clock lock: $got"

# --- bad options: exit 2, naming the value ---
expect_bad() { # expect_bad TEXT ARGS...
  local text=$1; shift
  "$GPUCLK_BIN" fleet "$@" >"$TMP/bad.out" 2>&1; local rc=$?
  check; [ $rc -eq 2 ] && grep -qF -- "$text" "$TMP/bad.out" ||
    fail "fleet $* exited $rc (expected 2 naming '$text'): $(cat "$TMP/bad.out")"
}
expect_bad "--prometheus" --range 1h
expect_bad "'ftp://x'" --prometheus ftp://x
expect_bad "'forever'" --prometheus "$URL" --range forever
expect_bad "'0s'" --prometheus "$URL" --timeout 0s
expect_bad "'job=gpuclk'" --prometheus "$URL" --selector 'job=gpuclk'

expect_bad "--dmon" --prometheus "$URL" --interval 2s
"$GPUCLK_BIN" fleet --prometheus "$URL" --selector '{job="nope"}' >"$TMP/none.out" 2>&1; RC=$?
check; [ $RC -eq 6 ] && grep -qF "no node matches {job=\"nope\"} at $URL" "$TMP/none.out" ||
  fail "fleet with a selector matching nothing exited $RC (expected 6): $(cat "$TMP/none.out")"

# --- a server that accepts and never answers: exit 255 within --timeout ---
SLOW_PORT=$(free_port)
python3 -c "import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1',$SLOW_PORT)); s.listen(); c=s.accept(); time.sleep(60)" &
SLOW_PID=$!
PIDS+=($SLOW_PID)
# Listening before fleet connects (a fixed 0.3 s was not always enough under load: fleet then
# met a refused connection, not a silent server). /proc/net/tcp, not a connection: the server
# accepts only one. (Local address 0100007F:PORT in state 0A, LISTEN.)
for _ in $(seq 100); do
  grep -qi "0100007F:$(printf '%04X' "$SLOW_PORT") 00000000:0000 0A" /proc/net/tcp && break
  sleep 0.1
done
t0=$(date +%s.%N)
"$GPUCLK_BIN" fleet --prometheus "http://127.0.0.1:$SLOW_PORT" --timeout 2s >"$TMP/slow.out" 2>&1
RC=$?
took=$(python3 -c "print(round($(date +%s.%N) - $t0, 2))")
check; [ $RC -eq 255 ] || fail "fleet against a silent server exited $RC, expected 255"
# Well under the default 10 s: the 2 s applied. curl's own words say it waited ~2000 ms (1999
# once, under load: its timer fires on its own clock's tick); the wall time adds the start-up,
# which a sanitized build on a loaded machine stretched past 4 s.
bound=$((2 + 2 * ${GPUCLK_TEST_TIME_SCALE:-1}))
check; python3 -c "import sys; sys.exit(0 if $took < $bound else 1)" || fail "fleet --timeout 2s took $took s (>= $bound)"
# The 2 s cover all of fleet's queries from its start: curl is given what is left when the query
# goes out (1883 ms once in the sanitizer build under load, its start-up having taken the rest).
ms=$(grep -Eo "timed out after [0-9]+ milliseconds" "$TMP/slow.out" | grep -Eo "[0-9]+" | head -1)
check; [ -n "$ms" ] && [ "$ms" -ge 1000 ] && [ "$ms" -lt 3000 ] ||
  fail "curl did not time out after the 2 s's rest (1-3 s): $(cat "$TMP/slow.out")"
check; grep -q "http://127.0.0.1:$SLOW_PORT.*did not answer within --timeout 2 s" "$TMP/slow.out" &&
  grep -q "tried GET http://127.0.0.1:$SLOW_PORT/api/v1/query" "$TMP/slow.out" ||
  fail "no clear timeout message: $(cat "$TMP/slow.out")"
echo "silent server: exit $RC after $took s: $(head -1 "$TMP/slow.out")"

# --- an HTTP server that is not Prometheus: exit 255 naming what it answered ---
WEB_PORT=$(free_port)
(cd "$TMP" && exec python3 -m http.server "$WEB_PORT" --bind 127.0.0.1 >/dev/null 2>&1) &
PIDS+=($!)
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$WEB_PORT/" && break; sleep 0.1; done
"$GPUCLK_BIN" fleet --prometheus "http://127.0.0.1:$WEB_PORT" --timeout 3s >"$TMP/web.out" 2>&1
RC=$?
check; [ $RC -eq 255 ] && grep -q "Prometheus at http://127.0.0.1:$WEB_PORT gave no usable answer (HTTP 404): not JSON" "$TMP/web.out" ||
  fail "fleet against a plain web server exited $RC: $(cat "$TMP/web.out")"

# --- Prometheus stopped: exit 255 at once, naming the URL ---
kill -TERM $PROM_PID; wait $PROM_PID 2>/dev/null
t0=$(date +%s.%N)
"$GPUCLK_BIN" fleet --prometheus "$URL" --timeout 3s >"$TMP/down.out" 2>&1
RC=$?
took=$(python3 -c "print(round($(date +%s.%N) - $t0, 2))")
check; [ $RC -eq 255 ] || fail "fleet with Prometheus stopped exited $RC, expected 255"
check; python3 -c "import sys; sys.exit(0 if $took < 3.5 else 1)" || fail "fleet --timeout 3s took $took s"
check; grep -q "cannot reach Prometheus at $URL" "$TMP/down.out" || fail "no clear message: $(cat "$TMP/down.out")"
echo "Prometheus stopped: exit $RC after $took s: $(head -1 "$TMP/down.out")"

echo "$CHECKS checks, $FAILURES failed, $(($(date +%s) - START)) s"
[ "$FAILURES" -eq 0 ]
