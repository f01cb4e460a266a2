#!/usr/bin/env bash
# Every read command's output on the simulator (frozen time), and every --help and completion
# script, from two gpuclk binaries: a refactor's check that nothing a user sees changed.
#   scripts/compare-outputs.sh OLD_GPUCLK NEW_GPUCLK
# Prints each command whose stdout, stderr or exit code differ (with the first lines of the diff)
# and "compared N outputs, M differ"; exit 0 when none differ. Paths of the two builds and their
# temporary state are masked.
set -uo pipefail
old=${1:?usage: compare-outputs.sh OLD_GPUCLK NEW_GPUCLK} new=${2:?usage: compare-outputs.sh OLD_GPUCLK NEW_GPUCLK}
export GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=30 GPUCLK_LIMITS_CACHE=off
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0; bad=0
run() {
  local tag=$1; shift
  for b in old new; do
    local bin=${!b}
    GPUCLK_SIM_STATE=$T/$b.state GPUCLK_STATE_DIR=$T/$b.st "$bin" "$@" >$T/$b.out 2>$T/$b.err; echo "rc=$?" >>$T/$b.out
    rm -f $T/$b.state*
    sed -i "s#$T/$b#TMP/X#g; s#$(dirname $bin)#BUILD#g" $T/$b.out $T/$b.err
  done
  n=$((n+1))
  if ! diff -q $T/old.out $T/new.out >/dev/null || ! diff -q $T/old.err $T/new.err >/dev/null; then
    bad=$((bad+1)); echo "DIFF: $*"; diff $T/old.out $T/new.out | head -5; diff $T/old.err $T/new.err | head -5
  fi
}
for scen in default 8xh100 2xh200 misconfigured; do
  for fmt in table csv json; do
    for cmd in status clocks info query "query --fields clocks.sm,power.draw" ps; do
      run x --sim=$scen --direct --format $fmt $cmd
    done
    run x --sim=$scen --direct --format $fmt topo
  done
done
for c in "" status clocks info topo query dmon stat set reset apply restore bench sweep doctor govern serve top fleet ps occupancy sim-job completion; do
  run x $c --help
done
run x completion bash
run x completion zsh
echo "compared $n outputs, $bad differ"
[ "$bad" -eq 0 ]
