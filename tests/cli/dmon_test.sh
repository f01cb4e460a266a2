#!/usr/bin/env bash
# gpuclk dmon on the simulator: nvidia-smi's layout, every group and format, rows that follow the
# scenario's phases, a GPU lost mid-run, Ctrl-C, bad arguments. Time runs 10-50x faster than the
# wall clock (GPUCLK_SIM_SPEED), so the whole script takes a few seconds.
source "$(dirname "$0")/lib.sh" "$1"
fresh_node() { rm -f "$GPUCLK_SIM_STATE" "$GPUCLK_SIM_STATE.lock"; }
export GPUCLK_SIM_SPEED=20

# --- layout: exactly nvidia-smi dmon's header lines (as quoted in docs/calibration.md) ---
gpuclk --sim dmon -c 2
expect_exit 0
check; [ "$(sed -n 1p <<<"$OUT")" == "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk " ] ||
  fail "first header line differs from nvidia-smi dmon's"
check; [ "$(sed -n 2p <<<"$OUT")" == "# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz " ] ||
  fail "units line differs from nvidia-smi dmon's"
expect_lines 10  # 2 header lines + 2 intervals x 4 GPUs
# idle: ~75 W, 34 C, no load, memory at 2619 MHz, SM at 345 MHz (media engines: 0 or '-')
expect_out_re '^    0     7[0-9]     3[0-9]     3[0-9]      0      0( +[0-9-]+){4}   2619    345 $'

gpuclk --sim -i 1 dmon -c 3 -s pc
expect_exit 0; expect_lines 5
check; [ "$(grep -vc '^#' <<<"$OUT")" -eq 3 ] && ! grep -q '^    [023] ' <<<"$OUT" || fail "-i 1 shows other GPUs"

gpuclk --sim dmon -c 1 -s pucvmetrgx -o DT -d 0.05
expect_exit 0
expect_out "#Date       Time            gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk  pviol  tviol     fb   bar1   ccpm  sbecc  dbecc    pci  rxpci  txpci reason  smact tensor   dram energy   mpwr "
expect_out "#YYYYMMDD   HH:MM:SS.mmm    Idx      W      C      C      %      %      %      %      %      %    MHz    MHz      %   bool     MB     MB     MB   errs   errs   errs   MB/s   MB/s      -      %      %      %      J      W "
expect_out "# slow fields are read every 100 ms"
expect_out_re '^ [0-9]{8}   [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}      3 '

# --- formats ---
gpuclk --sim dmon -c 2 -s pc --format csv
expect_exit 0; expect_lines 10
expect_out "#gpu, pwr, gtemp, mtemp, mclk, pclk"
expect_out "#Idx, W, C, C, MHz, MHz"
expect_out_re '^0, [0-9]+, [0-9]+, [0-9]+, 2619, [0-9]+$'
gpuclk --sim dmon -c 1 -s p --format csv,noheader,nounit
expect_exit 0; expect_lines 4
# Two active reasons are one field, quoted (RFC 4180): every row has the header's 7 fields. The
# calibration card runs a BF16 GEMM from t = 62 s: a 1755 MHz lock and a 400 W cap both hold it.
(
  export GPUCLK_SIM_STATE="$TEST_TMP/csv.state" GPUCLK_STATE_DIR="$TEST_TMP/csv-state"
  export GPUCLK_SIM_START=62 GPUCLK_SIM_SPEED=1
  "$GPUCLK_BIN" --sim=h100-calibration set --lock-gpu-clocks 1755 --power-limit 400 >/dev/null
  sleep 0.3
  "$GPUCLK_BIN" --sim=h100-calibration dmon -s pcr -c 2 --format csv
) >"$TEST_TMP/csv.out" 2>&1
OUT=$(cat "$TEST_TMP/csv.out"); RC=0; LAST_CMD="dmon -s pcr --format csv, two reasons"
expect_out '"appclk,pwrcap"'
check; python3 -c 'import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1]), skipinitialspace=True)]
assert len(rows) == 4 and all(len(r) == 7 for r in rows), rows' "$TEST_TMP/csv.out" ||
  fail "a CSV row does not have 7 fields"
gpuclk --sim dmon -c 2 -s pcrx --format json -i 0
expect_exit 0; expect_lines 2
expect_json 'select(.gpu == 0) | ."clocks.mem"' "2619
2619"
check; jq -e -s 'all(has("timestamp") and has("power.draw") and has("energy") and has("clocks_event_reasons.active"))' <<<"$OUT" >/dev/null ||
  fail "JSON Lines rows lack keys"
# One key, one meaning, in every command: dmon's temperature.memory is query's (query lacked it).
FROZEN="GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=30 GPUCLK_SIM_STATE=$TEST_TMP/frozen.state"
dmon_memory=$(env $FROZEN "$GPUCLK_BIN" --sim dmon -c 1 --format json -i 0 | jq -r '."temperature.memory"')
query_memory=$(env $FROZEN "$GPUCLK_BIN" --sim -i 0 query --query-gpu=temperature.memory --format=csv,noheader,nounits)
LAST_CMD="temperature.memory in dmon and query"
check; [ -n "$dmon_memory" ] && [ "$dmon_memory" == "$query_memory" ] ||
  fail "dmon says '$dmon_memory', query '$query_memory'"
# the memory's share of the power (an H100's memory scope): a number, below the GPU's power
check; jq -e -s 'all(."memory.power.draw.average" > 10 and ."memory.power.draw.average" < ."power.draw")' <<<"$OUT" >/dev/null ||
  fail "memory.power.draw.average missing or not below power.draw: $OUT"
# clocks_event_reasons.active is query's field: the hex bitmask, not dmon's short names (issue 32)
check; jq -e -s 'all(."clocks_event_reasons.active" | test("^0x[0-9A-F]{16}$"))' <<<"$OUT" >/dev/null ||
  fail "clocks_event_reasons.active is not query's bitmask"
check; jq -e -s 'all(has("clocks_event_reasons.names"))' <<<"$OUT" >/dev/null ||
  fail "JSON Lines rows lack clocks_event_reasons.names"

# --- rows follow the scenario's phases: h100-calibration at 25x, one row per simulated second:
# 10 s no process (345 MHz, ~75 W), FP32 SGEMM (1980 MHz, ~690 W), 5 s gap with the context
# held (1980 MHz, ~120 W), TF32 GEMM power-capped near 1425 MHz. A single row between phases (the
# 1 s power average ramping) counts as neither.
fresh_node
GPUCLK_SIM_SPEED=25 gpuclk --sim h100-calibration dmon -s pcr -c 55
expect_exit 0
phases=$(grep -v '^#' <<<"$OUT" | awk '
  $7 == "idle" && $6 == 345 && $2 < 100            { print "idle"; next }
  $6 >= 1900 && $2 > 650                           { print "fp32"; next }
  $6 == 1980 && $2 > 100 && $2 < 200 && $7 == "none" { print "gap"; next }
  $6 >= 1380 && $6 <= 1470 && $7 == "pwrcap" && $2 > 650 { print "tf32"; next }
  { print "transition" }' | grep -v transition | uniq -c | awk '$1 >= 2 { printf "%s:%d ", $2, $1 }')
check; [[ "$phases" =~ ^idle:([5-9]|1[0-2])\ fp32:(1[2-9]|2[0-4])\ gap:[2-7]\ tf32:([5-9]|[1-9][0-9]) ]] ||
  fail "phases seen: '$phases' (want idle ~10, fp32 ~20, gap ~5, tf32 >= 5 rows)"

# --- a GPU lost mid-run (faults: GPU 2 falls off the bus at t = 60 s); the others go on ---
# 10 simulated seconds (1 s of wall time, 3 s in a sanitized build) before the loss leave a slow
# start (a sanitized build, a loaded machine) time for at least one row of GPU 2, and 20 rows
# (one a simulated second) end well after it.
fresh_node
GPUCLK_SIM_START=50 GPUCLK_SIM_SPEED=$(slowed 10) gpuclk --sim faults dmon -s pc -c 20
expect_exit 0
expect_err "GPU 2 was lost"
rows_gpu2=$(grep -c '^    2 ' <<<"$OUT"); rows_gpu0=$(grep -c '^    0 ' <<<"$OUT")
check; [ "$rows_gpu0" -eq 20 ] && [ "$rows_gpu2" -ge 1 ] && [ "$rows_gpu2" -le 11 ] ||
  fail "GPU 0 rows $rows_gpu0 (want 20), GPU 2 rows $rows_gpu2 (want 1-11: lost after ~10 s)"

# --- Ctrl-C ends it cleanly ---
"$GPUCLK_BIN" --sim dmon -d 0.1 >"$TEST_TMP/ctrlc.out" 2>&1 &
pid=$!
# Once its header is out: a background job of a script starts with SIGINT ignored, so a SIGINT
# before dmon's handler was lost and dmon ran on (under load 0.5 s was not enough: it hung).
for _ in $(seq "$(scaled 100)"); do grep -q "# gpu" "$TEST_TMP/ctrlc.out" && break; sleep 0.1; done
kill -INT $pid; wait $pid; RC=$?; OUT=$(cat "$TEST_TMP/ctrlc.out"); LAST_CMD="dmon + SIGINT"
expect_exit 0; expect_out "# gpu"

# --- -f writes a file ---
gpuclk --sim dmon -c 1 -s p -f "$TEST_TMP/dmon.log"
expect_exit 0; expect_lines 1
check; [ "$(grep -c '' "$TEST_TMP/dmon.log")" -eq 6 ] || fail "-f file has $(grep -c '' "$TEST_TMP/dmon.log") lines, want 6"

# --- bad arguments: exit 2, a message that says what is valid ---
gpuclk --sim dmon -s puz
expect_exit 2; expect_err "unknown metric group 'z'"; expect_err "valid: p u c v m e t"
gpuclk --sim dmon -d 0.001
expect_exit 2; expect_err "bad interval -d 0.001"; expect_err "at least 10ms"
gpuclk --sim dmon -d fast
expect_exit 2; expect_err "bad interval"
gpuclk --sim dmon -c -1
expect_exit 2; expect_err "bad count"
# -c 0 is no count >= 1 (it ran until Ctrl-C, as no -c does; issue 42): at most 10 s to say so.
OUT=$(timeout 10 "$GPUCLK_BIN" --sim dmon -c 0 2>"$TEST_TMP/stderr"); RC=$?
ERR=$(cat "$TEST_TMP/stderr"); LAST_CMD="gpuclk --sim dmon -c 0"
expect_exit 2; expect_err "bad count -c 0"; expect_err "or no -c to run until Ctrl-C"
gpuclk --sim dmon -o X
expect_exit 2; expect_err "unknown -o option 'X'"
gpuclk --sim dmon --format xml
expect_exit 2; expect_err "unknown dmon format 'xml'"
gpuclk --sim -i 9 dmon -c 1
expect_exit 6

finish
