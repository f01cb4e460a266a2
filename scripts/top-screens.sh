#!/usr/bin/env bash
# The captures of `gpuclk top` in README.md and docs/top.md: tmux panes read back as text.
#   scripts/top-screens.sh [GPUCLK_BIN] [OUT_DIR]     (defaults: build/release/gpuclk, top-screens)
# 1. 8xh100.txt: the simulated 8x H100 node in 80x24, frozen at 10 s (top's own sampler).
# 2. serve.txt: the same node through `gpuclk serve`, 100x34, after 40 s of a node running 10x
#    faster than the wall clock (~7 simulated minutes: the history graphs are full at once).
# 3. capped.txt: the h100-calibration H100 at 40 s (TF32 GEMM, held at the 700 W limit), 100x30.
set -euo pipefail
BIN=$(realpath "${1:-build/release/gpuclk}")
OUT=${2:-top-screens}
mkdir -p "$OUT"
TMP=$(mktemp -d)
SOCKET="gpuclk-top-screens-$$"
SERVE_PID=""
cleanup() {
  tmux -L "$SOCKET" kill-server 2>/dev/null || true
  if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID"; wait "$SERVE_PID" || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

# shot NAME COLS ROWS WAIT "ENV" "ARGS": top in a fresh pane, captured after WAIT seconds.
shot() {
  tmux -L "$SOCKET" kill-server 2>/dev/null || true
  sleep 0.5
  tmux -L "$SOCKET" new-session -d -x "$2" -y "$3" "env $5 TERM=xterm-256color '$BIN' $6 top; sleep 60"
  sleep "$4"
  tmux -L "$SOCKET" capture-pane -p | sed 's/ *$//' >"$OUT/$1.txt"
  echo "$OUT/$1.txt"
}

shot 8xh100 80 24 4 "GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=10 GPUCLK_SIM_STATE=$TMP/8x.state" --sim=8xh100
shot capped 100 30 4 "GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=40 GPUCLK_SIM_STATE=$TMP/cal.state" \
  --sim=h100-calibration

GPUCLK_SIM_SPEED=10 GPUCLK_SIM_STATE="$TMP/serve.state" \
  "$BIN" --sim=8xh100 --socket "$TMP/g.sock" serve --listen off 2>"$TMP/serve.log" &
SERVE_PID=$!
sleep 40
shot serve 100 34 5 "GPUCLK_SIM_SPEED=10 GPUCLK_SIM_STATE=$TMP/serve.state" \
  "--sim=8xh100 --socket $TMP/g.sock"
