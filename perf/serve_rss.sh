#!/usr/bin/env bash
# gpuclk serve's RSS under sustained /metrics load (docs/serve.md, "Cost and latency"): the
# service on the simulated 8x H100 node, wrk with 20 keep-alive connections each pacing a request
# every 18 ms (~1000 requests/s), a 5 s warm-up, then ROUNDS rounds of 10 s, RSS after each.
#   perf/serve_rss.sh [GPUCLK_BIN] [ROUNDS]                 (defaults: build/release/gpuclk, 8)
#   MALLOC_ARENA_MAX=2 perf/serve_rss.sh ...                glibc's arenas capped, for comparison
#   VALGRIND=1 perf/serve_rss.sh ...   memcheck instead: 600 scrapes, then the leak summary
set -euo pipefail
BIN=${1:-build/release/gpuclk}
ROUNDS=${2:-8}
TMP=$(mktemp -d)
SERVE_PID=""
trap '[ -n "$SERVE_PID" ] && kill $SERVE_PID 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
export GPUCLK_SIM_STATE=$TMP/sim.state
run=("$BIN")
if [ "${VALGRIND:-0}" = 1 ]; then
  # gpuclk execs gpuclk-serve (the service): valgrind follows the exec to it.
  run=(valgrind --trace-children=yes --leak-check=full --show-leak-kinds=definite,indirect
       --log-file="$TMP/vg.log" "$BIN")
fi
"${run[@]}" --sim=8xh100 --socket "$TMP/g.sock" serve --listen 127.0.0.1:0 2>"$TMP/serve.log" &
SERVE_PID=$!
for _ in $(seq 600); do grep -q "metrics http://" "$TMP/serve.log" 2>/dev/null && break; sleep 0.2; done
PORT=$(grep -o 'http://127.0.0.1:[0-9]*' "$TMP/serve.log" | head -1 | sed 's/.*://')
[ -n "$PORT" ] || { echo "serve did not start: $(cat "$TMP/serve.log")"; exit 1; }
URL=http://127.0.0.1:$PORT/metrics
if [ "${VALGRIND:-0}" = 1 ]; then
  for _ in $(seq 600); do curl -s -o /dev/null "$URL"; done
  kill -TERM $SERVE_PID; wait $SERVE_PID || true; SERVE_PID=""
  echo "valgrind memcheck over 600 scrapes:"
  grep -E "definitely lost|indirectly lost|ERROR SUMMARY" "$TMP/vg.log"
  exit 0
fi
printf 'function delay() return 18 end\n' >"$TMP/pace.lua"
rss() { awk '/^VmRSS/ {print $2}' "/proc/$SERVE_PID/status"; }
wrk -t 2 -c 20 -d 5s -s "$TMP/pace.lua" "$URL" >/dev/null
echo "after the warm-up: RSS $(rss) kB${MALLOC_ARENA_MAX:+ (MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX)}"
for i in $(seq "$ROUNDS"); do
  rps=$(wrk -t 2 -c 20 -d 10s -s "$TMP/pace.lua" "$URL" | awk '/Requests\/sec/ {print $2}')
  echo "round $i: $rps requests/s, RSS $(rss) kB"
done
