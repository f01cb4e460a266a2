#!/usr/bin/env bash
# gpuclk top on the simulator, driven in tmux as a user runs it (new-session with a fixed size,
# send-keys, capture-pane): each GPU's SM clock and power match `gpuclk query` on a frozen
# clock; a power-capped GPU says so; 8 GPUs fit 80x24; the keys do what the help says; a resize
# redraws in the other layout; q, SIGINT and SIGTERM leave the alternate screen; NO_COLOR drops
# the colours; through `gpuclk serve` the same values come without loading NVML.
# Skips (77) without tmux.
source "$(dirname "$0")/lib.sh" "$1"

command -v tmux >/dev/null || { echo "SKIP: tmux is not installed"; exit 77; }

# One tmux server per screen (a server being killed can still hold its socket when the next
# new-session connects: clients_nvtop_test.sh saw it in CI).
SOCKETS=()
SOCKET=""
SERVE_PID=""
stop_all() {
  local s
  for s in "${SOCKETS[@]}"; do tmux -L "$s" kill-server 2>/dev/null; done
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
}
trap 'stop_all; rm -rf "$TEST_TMP"' EXIT

# start COLS ROWS "ENV" "ARGS": runs `gpuclk ARGS top` in a new tmux server, inside a shell
# that prints BEFORE-TOP first and TOP-EXIT=<code> after, then waits (≤ 15 s) for the screen.
start() {
  local cols=$1 rows=$2 env=$3 args=$4
  SOCKET="gpuclk-top-$$-${#SOCKETS[@]}"
  SOCKETS+=("$SOCKET")
  printf '%s\n' "$GPUCLK_BIN" >"$TEST_TMP/bin"
  tmux -L "$SOCKET" new-session -d -x "$cols" -y "$rows" \
    "echo BEFORE-TOP; env $env TERM=xterm-256color '$GPUCLK_BIN' $args top; \
     echo TOP-EXIT=\$?; sleep 60"
  LAST_CMD="gpuclk $args top ($env, ${cols}x${rows})"
  wait_screen "? help"
}

# wait_screen TEXT: captures the pane into $OUT until it shows TEXT (≤ 15 s).
wait_screen() {
  for _ in $(seq "$(scaled 75)"); do
    OUT=$(tmux -L "$SOCKET" capture-pane -p 2>/dev/null)
    grep -qF -- "$1" <<<"$OUT" && return 0
    sleep 0.2
  done
  fail "the screen never showed '$1'"
  return 1
}
keys() { tmux -L "$SOCKET" send-keys "$@"; }
alternate_on() { tmux -L "$SOCKET" display -p '#{alternate_on}'; }

# query SCENARIO START FIELDS: gpuclk query on the same frozen node (CSV, no units).
query() {
  Q=$(GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=$2 GPUCLK_SIM_STATE="$TEST_TMP/q-$1-$2.state" \
    "$GPUCLK_BIN" --sim="$1" query --fields "$3" --format csv,noheader,nounits 2>&1)
}
round() { printf '%.0f' "$1"; }

# --- errors before the terminal is touched ---
gpuclk --sim top </dev/null
expect_exit 2; expect_err "needs a terminal"
gpuclk --sim top -d 50ms
expect_exit 2; expect_err "bad -d '50ms'"; expect_err "from 100ms to 1h"
gpuclk --sim -i 9 top
expect_exit 6

# --- 4 H100s (default) at t = 10 s, frozen, 120x40: a block of 3 lines per GPU ---
SIM="GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=10 GPUCLK_SIM_STATE=$TEST_TMP/default.state"
start 120 40 "$SIM" "--sim"
wait_screen "persistence"
query default 10 "index,clocks.sm,clocks.max.sm,power.draw,power.limit"
while IFS=, read -r index sm max draw limit; do
  sm=${sm// /}; max=${max// /}; draw=$(round "${draw// /}"); limit=$(round "${limit// /}")
  block=$(grep -A2 -E "^ *$index NVIDIA" <<<"$OUT")
  check; grep -qE "SM .* $sm/$max MHz" <<<"$block" ||
    fail "GPU $index: no '$sm/$max MHz' in its block (gpuclk query: $sm of $max MHz): $block"
  check; grep -qE "Pwr .* $draw/$limit W" <<<"$block" ||
    fail "GPU $index: no '$draw/$limit W' in its block (gpuclk query: $draw of $limit W)"
done <<<"$Q"
check; [ -n "$Q" ] || fail "gpuclk query printed nothing"
expect_out "4 GPUs, simulated: default"
expect_out "own sampler, every 1 s"
# The heading says the node's time stands still (GPUCLK_SIM_SPEED=0 stays with its state file).
expect_out "simulated: default, time frozen at 10 s"
# Each graph has a y-scale: its top (max SM clock, power limit, slowdown temperature) and 0.
expect_out_re "^ SM clock +1980┤"; expect_out_re "^ power +700┤"; expect_out_re "^ temperature +89┤"
check; [ "$(grep -cF '    0┤' <<<"$OUT")" -eq 3 ] || fail "not 3 graphs with a 0 at the bottom: $OUT"
check; [ "$(alternate_on)" = 1 ] || fail "top does not use the alternate screen"

# Keys: select, metric, sort, history span, pause, help.
keys j; wait_screen "GPU 1 NVIDIA"
expect_out "graph: temperature"
keys m; wait_screen "graph: utilization"
keys s; wait_screen "sorted by CPU"
keys h; wait_screen "history 15 min"
keys p; wait_screen "PAUSED"
keys p; sleep 0.5; OUT=$(tmux -L "$SOCKET" capture-pane -p); expect_no_out "PAUSED"
keys '?'; wait_screen "gpuclk top: keys"
expect_out "sort processes"
keys x; sleep 0.5; OUT=$(tmux -L "$SOCKET" capture-pane -p); expect_no_out "gpuclk top: keys"
keys 3; wait_screen "GPU 3 NVIDIA"

# Resize: the same GPUs in one row each, with the column header.
tmux -L "$SOCKET" resize-window -x 80 -y 20
wait_screen "Held back by"
LAST_CMD="resize to 80x20"
check; [ "$(grep -cE '^ +[0-3] \[' <<<"$OUT")" -eq 4 ] || fail "not 4 compact GPU rows: $OUT"

# q: the alternate screen is left, the shell's line is back, exit 0.
keys q; wait_screen "TOP-EXIT="
LAST_CMD="q"
expect_out "TOP-EXIT=0"; expect_out "BEFORE-TOP"; expect_no_out "? help"
check; [ "$(alternate_on)" = 0 ] || fail "still on the alternate screen after q"

# --- 4 H100s in 80x24, time running (GPM figures come): the detail shows DRAM whole, and every
# line fits 80 columns (issue 32: the DRAM value was cut off) ---
SIM="GPUCLK_SIM_SPEED=4 GPUCLK_SIM_START=10 GPUCLK_SIM_STATE=$TEST_TMP/gpm.state"
start 80 24 "$SIM" "--sim"
wait_screen "DRAM"
expect_out_re "DRAM [0-9]+%"
expect_out_re "1980┤"
check; [ "$(wc -l <<<"$OUT")" -le 24 ] || fail "more than 24 lines"
keys q; wait_screen "TOP-EXIT=0"

# --- the header at 80 columns keeps the source and interval whole and cuts the node's
# description instead (it ended "every 1" or "· own ? help"; issue 42) ---
SIM="GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=10 GPUCLK_SIM_STATE=$TEST_TMP/head.state"
start 80 24 "$SIM" "--sim=h100-calibration"
check; head -1 <<<"$OUT" | grep -qE "· own sampler, every 1 s +\? help  q quit$" ||
  fail "header: $(head -1 <<<"$OUT")"
keys q; wait_screen "TOP-EXIT=0"

# --- 8 H100s in 80x24: a compact row each, all 8 on screen, values as gpuclk query ---
SIM="GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=10 GPUCLK_SIM_STATE=$TEST_TMP/8x.state"
start 80 24 "$SIM" "--sim=8xh100"
wait_screen "Held back by"
# The header keeps where the numbers come from and how often; the node's description (with the
# frozen time's note) gives way (it was cut to "· own ? help").
expect_out_re "^gpuclk top · 8 GPUs.* · own sampler, every 1 s +\? help  q quit$"
query 8xh100 10 "index,clocks.sm,clocks.max.sm,power.draw,power.limit"
while IFS=, read -r index sm max draw limit; do
  sm=${sm// /}; max=${max// /}; draw=$(round "${draw// /}"); limit=$(round "${limit// /}")
  check; grep -qE "^ +$index \[.* $sm/$max .* $draw/$limit " <<<"$OUT" ||
    fail "GPU $index: no row with '$sm/$max' and '$draw/$limit' (gpuclk query)"
done <<<"$Q"
check; [ "$(grep -cE '^ +[0-7] \[' <<<"$OUT")" -eq 8 ] || fail "not 8 GPU rows in 80x24"
check; [ "$(wc -l <<<"$OUT")" -le 24 ] || fail "more than 24 lines"
# The scenario's process on the selected GPU 0: pid 41000, the driver's name for it.
expect_out_re "41000 .*python3 train.py"
# SIGINT (Ctrl-C): the terminal is restored, exit 130.
keys C-c; wait_screen "TOP-EXIT="
LAST_CMD="C-c"
expect_out "TOP-EXIT=130"
check; [ "$(alternate_on)" = 0 ] || fail "still on the alternate screen after SIGINT"

# --- 16 H100s (the 8xh100 scenario with gpu_count = 16) in 80x24: all 16 rows ---
sed 's/^gpu_count = 8/gpu_count = 16/' "$GPUCLK_BIN_DIR/scenarios/8xh100.toml" >"$TEST_TMP/16xh100.toml"
SIM="GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=10 GPUCLK_SIM_STATE=$TEST_TMP/16x.state"
start 80 24 "$SIM" "--sim=$TEST_TMP/16xh100.toml"
wait_screen "Held back by"
expect_out "16 GPUs"
check; [ "$(grep -cE '^ +[0-9]+ \[' <<<"$OUT")" -eq 16 ] || fail "not 16 GPU rows in 80x24"
check; [ "$(wc -l <<<"$OUT")" -le 24 ] || fail "more than 24 lines"
keys q; wait_screen "TOP-EXIT=0"

# --- a power-capped H100 (h100-calibration at 40 s: TF32 GEMM at 700 W) says why ---
SIM="GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=40 GPUCLK_SIM_STATE=$TEST_TMP/cal.state"
start 100 30 "$SIM" "--sim=h100-calibration"
wait_screen "held back"
query h100-calibration 40 "clocks.sm,clocks_event_reasons.active"
check; grep -q "0x0000000000000004" <<<"$Q" || fail "query: not power capped at 40 s: $Q"
expect_out "held back: power cap"
expect_out_re "SM .* ${Q%%,*}/1980 MHz"
# NO_COLOR: colours with it unset, none with it set (capture-pane -e keeps the SGR sequences).
COLORED=$(tmux -L "$SOCKET" capture-pane -p -e)
check; grep -qE $'\e\\[3[1-6]m' <<<"$COLORED" || fail "no colour without NO_COLOR"
# SIGTERM: the terminal is restored, exit 143.
kill -TERM "$(pgrep -f "$GPUCLK_BIN --sim=h100-calibration top" | head -1)"
wait_screen "TOP-EXIT="
LAST_CMD="SIGTERM"
expect_out "TOP-EXIT=143"
check; [ "$(alternate_on)" = 0 ] || fail "still on the alternate screen after SIGTERM"

start 100 30 "NO_COLOR=1 $SIM" "--sim=h100-calibration"
wait_screen "held back"
COLORED=$(tmux -L "$SOCKET" capture-pane -p -e)
check; ! grep -qE $'\e\\[3[1-6]m' <<<"$COLORED" || fail "colours despite NO_COLOR=1"
keys q; wait_screen "TOP-EXIT=0"

# --- a link down (doctor/nvlink-down: link 7 of the 2x H200 pair) shows in the findings ---
SIM="GPUCLK_SIM_SPEED=4 GPUCLK_SIM_START=30 GPUCLK_SIM_STATE=$TEST_TMP/nvl.state"
start 120 40 "$SIM" "--sim=$GPUCLK_BIN_DIR/scenarios/doctor/nvlink-down.toml"
wait_screen "NVLink link 7"
expect_out_re "warning +GPU [01]: NVLink link 7 down"
keys q; wait_screen "TOP-EXIT=0"
# ... and through gpuclk serve (its slow tier comes with the history).
SOCK="$TEST_TMP/nvl.sock"
GPUCLK_SIM_SPEED=4 GPUCLK_SIM_START=30 GPUCLK_SIM_STATE="$TEST_TMP/nvl-serve.state" \
  "$GPUCLK_BIN" --sim="$GPUCLK_BIN_DIR/scenarios/doctor/nvlink-down.toml" --socket "$SOCK" \
  serve --listen off 2>"$TEST_TMP/nvl-serve.log" &
SERVE_PID=$!
for _ in $(seq "$(scaled 200)"); do grep -q "sampling every" "$TEST_TMP/nvl-serve.log" 2>/dev/null && break; sleep 0.1; done
start 120 40 "GPUCLK_SIM_SPEED=4 GPUCLK_SIM_STATE=$TEST_TMP/nvl-serve.state" \
  "--sim=$GPUCLK_BIN_DIR/scenarios/doctor/nvlink-down.toml --socket $SOCK"
wait_screen "NVLink link 7"
expect_out "· gpuclk serve"
keys q; wait_screen "TOP-EXIT=0"
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=""

# --- through gpuclk serve: the service's values, its history at once, no NVML loaded ---
SOCK="$TEST_TMP/gpuclk.sock"
GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=10 GPUCLK_SIM_STATE="$TEST_TMP/serve.state" \
  "$GPUCLK_BIN" --sim=8xh100 --socket "$SOCK" serve --listen off 2>"$TEST_TMP/serve.log" &
SERVE_PID=$!
for _ in $(seq "$(scaled 200)"); do grep -q "sampling every" "$TEST_TMP/serve.log" 2>/dev/null && break; sleep 0.1; done
SIM="GPUCLK_SIM_SPEED=0 GPUCLK_SIM_STATE=$TEST_TMP/serve.state"
start 120 40 "$SIM" "--sim=8xh100 --socket $SOCK --nvml-lib /nonexistent/libnvidia-ml.so.1 -i 2,5"
wait_screen "persistence"
expect_out "2 GPUs, simulated: 8xh100"
expect_out "gpuclk serve, every 1 s"
query 8xh100 10 "index,clocks.sm,clocks.max.sm,power.draw,power.limit"
while IFS=, read -r index sm max draw limit; do
  [ "$index" = 2 ] || [ "$index" = 5 ] || continue
  sm=${sm// /}; max=${max// /}; draw=$(round "${draw// /}"); limit=$(round "${limit// /}")
  block=$(grep -A2 -E "^ *$index NVIDIA" <<<"$OUT")
  check; grep -qE "SM .* $sm/$max MHz" <<<"$block" || fail "GPU $index via serve: no '$sm/$max MHz'"
  check; grep -qE "Pwr .* $draw/$limit W" <<<"$block" || fail "GPU $index via serve: no '$draw/$limit W'"
done <<<"$Q"
check; [ "$(grep -cE '^ *[0-9] NVIDIA' <<<"$OUT")" -eq 2 ] || fail "-i 2,5: not 2 GPU blocks"
expect_out_re "41002 .*python3 train.py"
keys q; wait_screen "TOP-EXIT=0"

finish
