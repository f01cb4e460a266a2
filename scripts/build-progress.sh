#!/usr/bin/env bash
# `make run`'s build: the build tool's lines go to BUILD_DIR/build.log; on a terminal one line
# shows how far it is ("building gpuclk: 52/180 steps, 95 s"), piped nothing is printed. When the
# build fails, its errors and the log's last lines are printed and the exit status is the build's.
#   scripts/build-progress.sh BUILD_DIR JOBS TARGET...
set -uo pipefail
dir=$1 jobs=$2
shift 2
log=$dir/build.log
start=$SECONDS
if [ -t 1 ]; then
  # Ninja writes "[52/180] Building ...", CMake's Makefiles "[ 45%] Building ...".
  cmake --build "$dir" -j "$jobs" --target "$@" 2>&1 | tee "$log" |
    awk -v start="$(date +%s)" '
      match($0, /^\[ *[0-9]+\/[0-9]+\]/) { step = substr($0, 2, RLENGTH - 2); gsub(/ /, "", step) }
      match($0, /^\[ *[0-9]+%\]/) { step = substr($0, 2, RLENGTH - 2); gsub(/ /, "", step) }
      step != "" && step != last {
        printf "\rbuilding gpuclk: %s%s, %d s ", step, (step ~ /%/ ? "" : " steps"), systime() - start
        fflush(); last = step
      }
      END { if (last != "") printf "\r\033[K" }'
  rc=${PIPESTATUS[0]}
else
  cmake --build "$dir" -j "$jobs" --target "$@" >"$log" 2>&1
  rc=$?
fi
if [ "$rc" -ne 0 ]; then
  grep -E 'error|Error' "$log" | head -20
  echo "--- the last lines of $log:"
  tail -n 30 "$log"
  echo "build failed after $((SECONDS - start)) s (exit $rc)"
fi
exit "$rc"
