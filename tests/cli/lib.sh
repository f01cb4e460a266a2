# Helpers for CLI tests: each test script sources this, runs the real gpuclk binary against
# libnvml-sim.so, and asserts exit codes and output. Usage in a test:
#   source "$(dirname "$0")/lib.sh" "$1"      # $1 = path to the gpuclk binary
#   gpuclk --sim clocks; expect_exit 0; expect_out "Max Clocks"
# Each script gets its own simulator state file, so tests run in parallel without sharing GPUs.
set -u
GPUCLK_BIN=${1:?usage: test.sh /path/to/gpuclk}
# Sanitized builds (ASan/UBSan, TSan) run several times slower: CMake sets
# GPUCLK_TEST_TIME_SCALE=3 on their tests (and triples ctest's timeout); every wait for something
# to happen scales with it (`scaled N`). Bounds a test asserts as behaviour stay as they are.
TIME_SCALE=${GPUCLK_TEST_TIME_SCALE:-1}
case "$TIME_SCALE" in '' | *[!0-9]* | 0) TIME_SCALE=1 ;; esac
# scaled N: N (seconds, a count of polls) stretched by the scale; slowed SPEED: a simulated-time
# speed divided by it, so a window of simulated seconds keeps its wall-time margin over a
# process's start-up.
scaled() { awk -v n="$1" -v s="$TIME_SCALE" 'BEGIN { v = n * s; if (v == int(v)) print v; else print v }'; }
slowed() { awk -v n="$1" -v s="$TIME_SCALE" 'BEGIN { printf "%.4g\n", n / s }'; }
# sanitizer_runtime: the ASan or TSan runtime a sanitized libnvml-sim.so needs loaded first in a
# program that is not ours (python3 through ctypes): for its LD_PRELOAD; empty in other builds.
sanitizer_runtime() { ldd "$GPUCLK_BIN_DIR/libnvml-sim.so" 2>/dev/null | awk '/libasan|libtsan/ { print $3; exit }'; }
GPUCLK_BIN_DIR=$(cd "$(dirname "$GPUCLK_BIN")" && pwd)
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-cli.XXXXXX")
# A `gpuclk serve` a test starts (start_serve) is stopped on exit too.
SERVE_PID=""
stop_serve() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
  wait "$SERVE_PID" 2>/dev/null
  SERVE_PID=""
}
trap 'stop_serve; rm -rf "$TEST_TMP"' EXIT
# ask JSON [LINES]: sends JSON (raw request lines) to the service's socket $SOCK, prints what comes
# back: LINES lines (default: one per request line), or what came within 5 s.
ask() {
  python3 - "$SOCK" "$1" "${2:-}" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode())
want = int(sys.argv[3]) if sys.argv[3] else sys.argv[2].count("\n")
data = b""
try:
    while not data.endswith(b"\n") or data.count(b"\n") < want:
        chunk = s.recv(1 << 20)
        if not chunk: break
        data += chunk
except socket.timeout:
    pass
sys.stdout.write(data.decode())
PY
}
# start_serve ARGS...: starts `gpuclk ARGS` (ARGS include `serve`) in the background, waits
# (<= 20 s) until it says it is ready; SERVE_PID, and PORT when it serves HTTP. Its stderr goes to
# $TEST_TMP/serve.log.
start_serve() {
  # Emptied here, not by the background job's redirection: that may run after the first grep
  # below, which would then find the previous service's "sampling every" line.
  : >"$TEST_TMP/serve.log"
  "$GPUCLK_BIN" "$@" 2>>"$TEST_TMP/serve.log" &
  SERVE_PID=$!
  for _ in $(seq "$(scaled 200)"); do
    if grep -q "sampling every" "$TEST_TMP/serve.log" 2>/dev/null; then
      PORT=$(grep -o 'http://127.0.0.1:[0-9]*' "$TEST_TMP/serve.log" | head -1 | sed 's/.*://')
      return 0
    fi
    kill -0 "$SERVE_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "serve did not start: $(cat "$TEST_TMP/serve.log")" >&2
  return 1
}
export GPUCLK_SIM_STATE="$TEST_TMP/sim.state"
export GPUCLK_STATE_DIR="$TEST_TMP/state"
unset GPUCLK_READ_ONLY GPUCLK_NVML_LIB GPUCLK_SIM_SCENARIO GPUCLK_FALLBACK_SIM
FAILURES=0
CHECKS=0
OUT=""
ERR=""
RC=0

# gpuclk ARGS...: runs the binary, keeps stdout in $OUT, stderr in $ERR, exit code in $RC.
gpuclk() {
  OUT=$("$GPUCLK_BIN" "$@" 2>"$TEST_TMP/stderr")
  RC=$?
  ERR=$(cat "$TEST_TMP/stderr")
  LAST_CMD="gpuclk $*"
}

fail() {
  FAILURES=$((FAILURES + 1))
  echo "FAIL: $LAST_CMD: $*" >&2
  echo "  stdout: $(printf '%s' "$OUT" | head -c 2000)" >&2
  echo "  stderr: $(printf '%s' "$ERR" | head -c 1000)" >&2
}
check() { CHECKS=$((CHECKS + 1)); }

expect_exit() { check; [ "$RC" -eq "$1" ] || fail "exit code $RC, expected $1"; }
expect_out() { check; grep -qF -- "$1" <<<"$OUT" || fail "stdout lacks '$1'"; }
expect_no_out() { check; ! grep -qF -- "$1" <<<"$OUT" || fail "stdout has '$1'"; }
expect_err() { check; grep -qF -- "$1" <<<"$ERR" || fail "stderr lacks '$1'"; }
expect_out_re() { check; grep -qE -- "$1" <<<"$OUT" || fail "stdout does not match /$1/"; }
expect_err_re() { check; grep -qE -- "$1" <<<"$ERR" || fail "stderr does not match /$1/"; }
# expect_lines N: stdout has exactly N lines.
expect_lines() { check; local n; n=$(printf '%s\n' "$OUT" | grep -c ''); [ "$n" -eq "$1" ] || fail "$n lines, expected $1"; }
# expect_json 'jq filter' expected: the filter's output on stdout (JSON) equals expected.
expect_json() {
  check
  local got
  got=$(jq -r "$1" <<<"$OUT" 2>&1) || { fail "not JSON or filter failed: $1: $got"; return; }
  [ "$got" == "$2" ] || fail "jq '$1' = '$got', expected '$2'"
}

finish() {
  echo "$CHECKS checks, $FAILURES failed"
  [ "$FAILURES" -eq 0 ]
  exit $?
}

# skip_unless_others_reach USER PATH...: a test that runs gpuclk as another user (setpriv) needs
# that user to reach the binary, its libraries and the fixtures; a checkout below a private folder
# (root's home on Debian is mode 700) hides them. Skips (77) naming the path and what to do.
skip_unless_others_reach() {
  local user=$1 path
  shift
  for path in "$@"; do
    setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups test -r "$path" && continue
    echo "skipped: user $user cannot read $path (a folder above it is private, e.g. a home of" \
      "mode 700): clone the repository under a folder others may enter (/srv, /tmp) to run this test"
    exit 77
  done
}
