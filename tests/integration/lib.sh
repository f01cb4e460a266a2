# What the integration tests that start services share: a folder for the test, its processes
# stopped at exit, checks counted, a free loopback port. Sourced as `source lib.sh NAME TOOL...`:
# skips (77) when a TOOL is missing. TMP: the test's folder; PIDS: what cleanup stops.
for p in "${@:2}"; do
  command -v "$p" >/dev/null || { echo "SKIP: $p not installed"; exit 77; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-$1.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
# The services a test starts are the ones it names: nothing from the caller's environment.
unset GPUCLK_SOCKET GPUCLK_NVML_LIB GPUCLK_SIM_SCENARIO GPUCLK_SIM_SPEED
FAILURES=0 CHECKS=0
fail() { FAILURES=$((FAILURES + 1)); echo "FAIL: $*" >&2; }
check() { CHECKS=$((CHECKS + 1)); }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
