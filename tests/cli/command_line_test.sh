#!/usr/bin/env bash
# The command line around the commands: typos of a command name, unknown scenarios, the global
# options and the program name in every subcommand's help, and the README's exit-code list.
source "$(dirname "$0")/lib.sh" "$1"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

# --- a typo of a command is not a scenario name ---
gpuclk --sim stauts
expect_exit 2
expect_err "unknown command 'stauts' (did you mean status?)"
gpuclk stauts
expect_exit 2
expect_err "unknown command 'stauts' (did you mean status?)"
gpuclk --sim claks
expect_exit 2
expect_err "unknown command 'claks' (did you mean clocks?)"

# --- a scenario that does not exist: a clear error listing the scenarios ---
gpuclk --sim no-such-node status
expect_exit 2
expect_err "unknown simulator scenario 'no-such-node'"
expect_err "8xh100"
expect_err "misconfigured"
# ... sorted, with the doctor/ and governor/ scenarios (issue 32); a missing file is no such file.
check; grep -qE "valid: 2xh200, 8xh100, a100, control-faults, default, doctor/ecc," <<<"$ERR" ||
  fail "the scenario list is not sorted or lacks doctor/: $ERR"
expect_err "governor/stencil"
check; ! grep -q "models/" <<<"$ERR" || fail "the list names GPU models"
gpuclk --sim=/nonexistent.toml status
expect_exit 2; expect_err "no such simulator scenario file '/nonexistent.toml'"
# A scenario the simulator cannot load is a bad argument (2) naming what is wrong, not a driver
# failure (it was NVML's Unknown Error, exit 255).
printf '[node]\ngpu_model = "h100-sxm5-80gb"\ngpu_count = 100000\n' >"$TEST_TMP/huge.toml"
gpuclk --sim "$TEST_TMP/huge.toml" status
expect_exit 2; expect_err "gpuclk: error: simulator: "; expect_err "gpu_count: expected 0..1024, not 100000"
printf '[node]\ngpu_model = "h100-sxm5-80gb"\ngpu_count = 1\nbogus_key = 12\n' >"$TEST_TMP/typo.toml"
gpuclk --sim "$TEST_TMP/typo.toml" status
expect_exit 2; expect_err "unknown key 'bogus_key'"
# Real scenario names, and a scenario file by path, still work.
gpuclk --sim 8xh100 query --fields count --format csv,noheader
expect_exit 0
expect_out "8"
cp "$GPUCLK_BIN_DIR/scenarios/misconfigured.toml" "$TEST_TMP/node.toml"
gpuclk --sim "$TEST_TMP/node.toml" query --fields count --format csv,noheader
expect_exit 0
expect_out "4"
gpuclk --sim clocks -i 0
expect_exit 0
expect_out "Clock"

# --- every subcommand's help: the program name and the global options ---
for cmd in status clocks query set restore dmon stat occupancy; do
  gpuclk "$cmd" --help
  expect_exit 0
  expect_out "Usage: gpuclk $cmd"
  expect_out "Global options"
  for opt in "-i,--id" "--format" "--sim" "--read-only" "--nvml-lib" "--state-dir"; do
    expect_out "$opt"
  done
done
gpuclk --help
expect_exit 0
expect_out "Usage: gpuclk"

# --- the parser's errors in gpuclk's words: prefix, what is wrong, a hint; exit 2 (issue 32) ---
gpuclk --sim set --sm-clocks 99999
expect_exit 2; expect_err "gpuclk: error: unknown option --sm-clocks for set"
expect_err "did you mean --lock-gpu-clocks?"
check; ! grep -q "The following arguments were not expected" <<<"$ERR" || fail "CLI11's wording"
gpuclk --sim set --power-limt 400
expect_exit 2; expect_err "did you mean --power-limit?"
gpuclk --sim dmon -c abc
expect_exit 2; expect_err "gpuclk: error: bad value 'abc' for --count"
gpuclk --sim apply
expect_exit 2; expect_err "gpuclk: error: apply needs PROFILE"; expect_err "gpuclk apply --help"
gpuclk --sim set --power-limit 400 --power-limit 500
expect_exit 2; expect_err "gpuclk: error: --power-limit given more than once"
gpuclk help
expect_exit 0; expect_out "Usage: gpuclk"
gpuclk help set
expect_exit 0; expect_out "Usage: gpuclk set"

# --- the README lists every exit code gpuclk uses (src/util/error.h) ---
codes=$(sed -n '/enum class ExitCode/,/};/p' "$SRC/src/util/error.h" | grep -oE '= [0-9]+' | grep -oE '[0-9]+')
exit_line=$(grep -A3 'Exit codes follow nvidia-smi' "$SRC/README.md" | tr '\n' ' ')
for code in $codes; do
  check
  grep -qE "(^|[^0-9])$code [A-Za-z]" <<<"$exit_line" || fail "README's exit-code list lacks $code"
done

finish
