#!/usr/bin/env bash
# The README's `stat` example reproduces: its command, run as written (a fresh simulator state),
# gives the excerpt's clocks, the same energy source and verdict within the jitter of starting
# a process (the run is 6 s of wall time at 10x: ±1 % of the simulated minute).
source "$(dirname "$0")/lib.sh" "$1"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

cmd=$(grep -E '^\$ .*gpuclk --sim=h100-calibration stat -- sleep 6$' "$SRC/README.md" | sed 's/^\$ //')
check
[ -n "$cmd" ] || fail "README has no stat example"
check
grep -q 'GPUCLK_SIM_STATE=\$(mktemp -u)' <<<"$cmd" || fail "the stat example does not start from a fresh simulator state"
excerpt=$(sed -n '/^\$ .*gpuclk --sim=h100-calibration stat -- sleep 6$/,/^```$/p' "$SRC/README.md")
value() { grep -E "^ *$1 *:" | head -1 | sed -E 's/^[^:]*: *//'; }

# As a user would run it: the README's words, our binary for `gpuclk`, temp files in the test's dir.
export TMPDIR=$TEST_TMP
unset GPUCLK_SIM_STATE
ERR=$(cd "$TEST_TMP" && PATH="$GPUCLK_BIN_DIR:$PATH" timeout 60 bash -c "$cmd" 2>&1 >/dev/null)
RC=$?
OUT=$ERR
LAST_CMD=$cmd
expect_exit 0
for field in p5 Median p95 "Energy from"; do
  check
  [ "$(value "$field" <<<"$OUT")" = "$(value "$field" <<<"$excerpt")" ] ||
    fail "$field: '$(value "$field" <<<"$OUT")', README '$(value "$field" <<<"$excerpt")'"
done
# Energy and the power-capped share: within 2 % of the README's.
for field in Energy sw_power_cap; do
  got=$(value "$field" <<<"$OUT" | grep -oE '^[0-9.]+')
  want=$(value "$field" <<<"$excerpt" | grep -oE '^[0-9.]+')
  check
  awk -v g="${got:-0}" -v w="$want" 'BEGIN { exit !(g > w * 0.98 && g < w * 1.02) }' ||
    fail "$field: $got, README $want (±2 %)"
done
expect_err "Verdict                         : power-capped 4"
finish
