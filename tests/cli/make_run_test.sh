#!/usr/bin/env bash
# `make run` on a machine without a GPU: the build stays quiet (no "Entering directory" lines, no
# progress), then one line saying it shows the simulated node, then the status table.
# Runs the real Makefile on the build this test belongs to (build/PRESET of the source tree), which
# is up to date when the tests run, so the build step only checks.
source "$(dirname "$0")/lib.sh" "$1"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
preset=$(basename "$GPUCLK_BIN_DIR")
if [ "$GPUCLK_BIN_DIR" != "$SRC/build/$preset" ] || command -v nvidia-smi >/dev/null; then
  echo "SKIP: needs the binary in $SRC/build/PRESET and no NVIDIA driver"
  exit 0
fi

OUT=$(cd "$SRC" && timeout "$(scaled 250)" env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory run \
  PRESET="$preset" JOBS=1 2>&1)
RC=$?
LAST_CMD="make run PRESET=$preset"
expect_exit 0
expect_no_out "Entering directory"
expect_no_out "Leaving directory"
expect_no_out "Building CXX"
expect_no_out "Built target"
# The first line is the note, the second the table's header.
check
sed -n 1p <<<"$OUT" | grep -qE '^gpuclk: no NVIDIA GPU here \(.*\); showing the simulated 4x H100 node \(gpuclk --sim\)$' ||
  fail "the first line is not the simulated-node note"
check
sed -n 2p <<<"$OUT" | grep -q '^GPU  Name' || fail "second line is not the status table's header"
finish
