#!/usr/bin/env bash
# How often GPU 0 is found locked while `gpuclk serve --govern phase` governs a simulated node
# (tests/faults/restart_test.sh kills the governor and expects a lock to put back): LOOKS looks at
# the simulator's own settings (tests/faults/sim_settings.py), ~0.1 s apart, after 2 s of governing
# at GPUCLK_SIM_SPEED=4, as the test runs it (docs/hardening.md, "CI").
#   perf/governor_lock_looks.sh [GPUCLK_BIN] [SCENARIO] [LOOKS]
#   perf/governor_lock_looks.sh build/ci/gpuclk tests/cli/fixtures/govern-4gpu.toml 40
set -uo pipefail
cd "$(dirname "$0")/.."
source tests/faults/lib.sh "${1:-build/release/gpuclk}"
SCENARIO=${2:-tests/cli/fixtures/govern-idle.toml}
LOOKS=${3:-40}
export GPUCLK_SIM_SPEED=4
start_serve --sim "$SCENARIO" --socket "$TEST_TMP/s.sock" -i 0 serve --listen off --govern phase || exit 1
sleep 2
locked=0
for _ in $(seq "$LOOKS"); do
  if sim_settings "$SCENARIO" | grep -q "^GPU 0: locked_sm=[0-9]"; then locked=$((locked + 1)); fi
done
stop_serve
echo "$SCENARIO: GPU 0 locked in $locked of $LOOKS looks"
