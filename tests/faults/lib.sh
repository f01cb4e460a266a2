# The fault tests' helpers, on top of tests/cli/lib.sh (sourced with the gpuclk binary's path).
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh" "$1"
FAULTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FIXTURES="$(cd "$FAULTS_DIR/../cli/fixtures" && pwd)"

# sim_settings SCENARIO: every GPU's settings as the simulator holds them, clock locks included
# (tests/faults/sim_settings.py), one line a GPU.
sim_settings() {
  LD_PRELOAD="$(sanitizer_runtime)" ASAN_OPTIONS=detect_leaks=0 \
    python3 "$FAULTS_DIR/sim_settings.py" "$GPUCLK_BIN_DIR/libnvml-sim.so" "$1"
}
# journal_gpus SCENARIO: how many GPUs the journal holds a change for.
journal_gpus() { "$GPUCLK_BIN" --sim "$1" --format json journal 2>/dev/null | jq -r '.gpus | length'; }
# wait_for SECONDS CONDITION...: polls the shell condition every 0.2 s (scaled).
wait_for() {
  local n=$(($1 * 5)); shift
  for _ in $(seq "$(scaled "$n")"); do eval "$*" && return 0; sleep 0.2; done
  return 1
}
# same_settings BEFORE AFTER WHAT: fails naming the difference.
same_settings() {
  check
  [ "$1" == "$2" ] || fail "$3: the GPUs' settings differ from before:
$(diff <(echo "$1") <(echo "$2"))"
}
