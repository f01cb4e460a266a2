#!/usr/bin/env bash
# The install of the build tree under test (cmake/Install.cmake), as `make install` does it, into
# a scratch DESTDIR, then run from there: gpuclk --sim, gpuclk serve --sim, the man pages (man -l),
# the bash completion (its function called as bash calls it), the zsh completion where zsh is,
# and the systemd units (systemd-analyze verify, where it is). Also: an example the admin changed
# in /etc/gpuclk survives the install, and the tools alone (no gpuclk-sim component) say how to
# get the simulator. The Debian packages of the same rules: scripts/check-packages.sh.
# Usage: install_test.sh BUILD_DIR PRIVATE_LIBDIR (relative to the prefix; CMake passes it)
# Exit 77: cmake, python3 or man missing.
set -u
BUILD_DIR=$(cd "${1:?usage: install_test.sh BUILD_DIR}" && pwd)
SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
for tool in cmake python3 man; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is not installed (the install test needs it)"
    exit 77
  fi
done

ROOT=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-install.XXXXXX")
# The private library folder below the prefix (lib/x86_64-linux-gnu/gpuclk on Debian).
PRIVLIB=${2:?usage: install_test.sh BUILD_DIR PRIVATE_LIBDIR}
PREFIX=/usr/local
P=$ROOT$PREFIX
# The admin's: an example already in /etc/gpuclk that they edited. The install must keep it.
mkdir -p "$ROOT/etc/gpuclk"
echo "# the admin's own notes" >"$ROOT/etc/gpuclk/profile.toml.example"
install_log=$(DESTDIR=$ROOT cmake --install "$BUILD_DIR" --prefix "$PREFIX" 2>&1)
install_rc=$?

# The checks run the installed gpuclk (tests/cli/lib.sh's helpers).
# shellcheck source=tests/cli/lib.sh
source "$SRC_DIR/tests/cli/lib.sh" "$P/bin/gpuclk"
trap 'stop_serve; rm -rf "$TEST_TMP" "$ROOT"' EXIT
LAST_CMD="cmake --install $BUILD_DIR --prefix $PREFIX (DESTDIR=$ROOT)"
OUT=$install_log
ERR=""
RC=$install_rc
expect_exit 0
expect_out "Kept: $ROOT/etc/gpuclk/profile.toml.example"

# --- the layout ---------------------------------------------------------------------------------
LAST_CMD="the installed files"
expect_file() { check; [ -e "$1" ] || fail "missing: ${1#"$ROOT"}"; }
expect_executable() { check; [ -x "$1" ] && [ -f "$1" ] || fail "not an executable file: ${1#"$ROOT"}"; }
for f in bin/gpuclk bin/gpuclk-serve libexec/gpuclk/gpuclk-prolog.sh libexec/gpuclk/gpuclk-epilog.sh \
  libexec/gpuclk/gpuclk-task-prolog.sh; do
  expect_executable "$P/$f"
done
for f in "$PRIVLIB/libnvml-sim.so" "$PRIVLIB/nvml-compat/libnvidia-ml.so.1" \
  share/gpuclk/scenarios/default.toml share/gpuclk/scenarios/governor \
  share/gpuclk/grafana/gpuclk.json share/gpuclk/prometheus/alerts.yml \
  share/gpuclk/kubernetes/gpuclk-serve.yaml share/gpuclk/slurm/slurm.conf.snippet \
  libexec/gpuclk/gpuclk-slurm-common.sh lib/systemd/system/gpuclk-serve.service \
  lib/systemd/system/gpuclk-apply.service share/bash-completion/completions/gpuclk \
  share/zsh/site-functions/_gpuclk share/doc/gpuclk/README.md share/doc/gpuclk/serve.md \
  share/man/man1/gpuclk.1.gz; do
  expect_file "$P/$f"
done
for f in policy.toml.example slurm.conf.example; do expect_file "$ROOT/etc/gpuclk/$f"; done
check
grep -q "the admin's own notes" "$ROOT/etc/gpuclk/profile.toml.example" ||
  fail "the admin's /etc/gpuclk/profile.toml.example was overwritten"
check
[ -L "$P/$PRIVLIB/nvml-compat/libnvidia-ml.so.1" ] || fail "nvml-compat/libnvidia-ml.so.1 is not a link"
# Paths in the installed units and Slurm files are this prefix's, and lead to what was installed.
unit_exec=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$P/lib/systemd/system/gpuclk-serve.service")
check
[ "$unit_exec" = "$PREFIX/bin/gpuclk" ] && [ -x "$ROOT$unit_exec" ] ||
  fail "gpuclk-serve.service runs '$unit_exec', not the installed $PREFIX/bin/gpuclk"
slurm_gpuclk=$(sed -n 's/^GPUCLK=//p' "$P/libexec/gpuclk/gpuclk-slurm-common.sh")
check
[ "$slurm_gpuclk" = "$PREFIX/bin/gpuclk" ] || fail "the Slurm scripts run '$slurm_gpuclk'"
check
grep -q "^Prolog=$PREFIX/libexec/gpuclk/gpuclk-prolog.sh$" "$P/share/gpuclk/slurm/slurm.conf.snippet" ||
  fail "slurm.conf.snippet does not name the installed prolog"

# --- gpuclk and its simulator from the installed paths -------------------------------------------
gpuclk --version
expect_exit 0
expect_out_re "^gpuclk [0-9]+\.[0-9]+\.[0-9]+$"
gpuclk --sim --direct
expect_exit 0
expect_out "NVIDIA H100 80GB HBM3"
expect_out "(simulated node: default)"
# A scenario only the installed folder has: found by gpuclk (--sim's name) and by the simulator.
cp "$P/share/gpuclk/scenarios/misconfigured.toml" "$P/share/gpuclk/scenarios/install-probe.toml"
gpuclk --sim=install-probe --direct query --fields index,clocks.applications.graphics --format csv,noheader
expect_exit 0
expect_out "1, 1410 MHz"
gpuclk --sim=no-such-scenario --direct
expect_exit 2
expect_err "install-probe"

# --- gpuclk serve: gpuclk execs the gpuclk-serve installed beside it ----------------------------
SOCK=$TEST_TMP/serve.sock
GPUCLK_SIM_SPEED=0 start_serve --sim --socket "$SOCK" serve --listen 127.0.0.1:0
LAST_CMD="gpuclk serve (installed)"
check
[ "$(readlink "/proc/$SERVE_PID/exe")" = "$P/bin/gpuclk-serve" ] ||
  fail "the service runs $(readlink "/proc/$SERVE_PID/exe"), not the installed gpuclk-serve"
OUT=$(ask '{"request":"hello"}
')
expect_out '"simulated":"default"'
OUT=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
  "http://127.0.0.1:$PORT/metrics" 2>&1)
expect_out 'gpuclk_gpu_power_watts{gpu="0"'
gpuclk --sim --socket "$SOCK" query --fields index,clocks.sm --format csv,noheader
expect_exit 0
expect_lines 4
stop_serve

# --- the tools without the simulator component --------------------------------------------------
TOOLS=$TEST_TMP/tools-only
LAST_CMD="cmake --install --component gpuclk"
OUT=$(DESTDIR=$TOOLS cmake --install "$BUILD_DIR" --prefix "$PREFIX" --component gpuclk 2>&1)
RC=$?
expect_exit 0
check
[ ! -e "$TOOLS$PREFIX/$PRIVLIB/libnvml-sim.so" ] || fail "the gpuclk component installed the simulator"
OUT=$("$TOOLS$PREFIX/bin/gpuclk" --sim --direct 2>&1)
RC=$?
LAST_CMD="gpuclk --sim without gpuclk-sim"
expect_exit 12
expect_out "the simulator is not installed"
expect_out "gpuclk-sim"

# --- man pages: one per command, each renders without warnings -----------------------------------
commands=$("$P/bin/gpuclk" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
check
[ "$(wc -w <<<"$commands")" -ge 20 ] || fail "gpuclk --help lists too few commands: $commands"
for page in gpuclk $(sed 's/^/gpuclk-/' <<<"$commands"); do
  file=$P/share/man/man1/$page.1.gz
  LAST_CMD="man -l $file"
  OUT=$(MANWIDTH=100 man --warnings -l "$file" 2>"$TEST_TMP/man.err")
  RC=$?
  ERR=$(cat "$TEST_TMP/man.err")
  expect_exit 0
  check
  [ -z "$ERR" ] || fail "groff warnings"
  expect_out "NAME"
  expect_out "$page - "
done
OUT=$(MANWIDTH=100 man -l "$P/share/man/man1/gpuclk-set.1.gz" 2>/dev/null)
LAST_CMD="man -l gpuclk-set.1.gz"
expect_out "--power-limit"
expect_out "GLOBAL OPTIONS"
OUT=$(MANWIDTH=100 man -l "$P/share/man/man1/gpuclk-bench.1.gz" 2>/dev/null)
LAST_CMD="man -l gpuclk-bench.1.gz"
expect_out "gpuclk bench gemm"
expect_out "--dtype"

# --- bash completion ----------------------------------------------------------------------------
# complete WORDS...: the installed completion's answer for the last word (the one being typed).
complete_words() {
  LAST_CMD="bash completion of: $*"
  OUT=$(bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpuclk
    printf "%s\n" "${COMPREPLY[@]}"' _ "$P/share/bash-completion/completions/gpuclk" "$@" 2>&1)
  RC=$?
}
complete_words gpuclk se
expect_exit 0
expect_out "set"
expect_out "serve"
expect_no_out "status"
complete_words gpuclk set --pow
expect_out "--power-limit"
complete_words gpuclk bench g
expect_out "gemm"
complete_words gpuclk -i 0 status --for
expect_out "--format"
complete_words gpuclk --format csv cl
expect_out "clocks"
complete_words gpuclk --format ""
expect_lines 6 # a value with choices: the formats (tests/cli/completion_test.sh has the others)
expect_out "csv,noheader"
complete_words gpuclk serve --policy ""
expect_lines 1 # a file: nothing offered (bash falls back to file names)
complete_words gpuclk help sta
expect_out "stat"
expect_out "status"
complete_words gpuclk completion
expect_no_out "completion" # hidden

# --- zsh completion (where zsh is) --------------------------------------------------------------
if command -v zsh >/dev/null; then
  LAST_CMD="zsh: load _gpuclk"
  OUT=$(zsh -f -c 'autoload -U compinit && compinit -u -d "$2/zcompdump"; source "$1"
    print -r -- ${+functions[_gpuclk__bench__gemm]} ${+functions[_gpuclk__set]} $_comps[gpuclk]' \
    _ "$P/share/zsh/site-functions/_gpuclk" "$TEST_TMP" 2>&1)
  RC=$?
  expect_exit 0
  expect_out "1 1 _gpuclk"
else
  echo "note: zsh is not installed; its completion was not loaded"
fi

# --- systemd units (where systemd-analyze is) ---------------------------------------------------
# verify checks that ExecStart's program exists: it is found under the scratch root, as systemd
# would find it under the prefix (which the layout checks above compared with the prefix).
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$TEST_TMP/units"
  for unit in gpuclk-serve.service gpuclk-apply.service; do
    sed "s|^\(Exec[A-Za-z]*=\)$PREFIX/|\1$P/|" "$P/lib/systemd/system/$unit" >"$TEST_TMP/units/$unit"
    LAST_CMD="systemd-analyze verify $unit"
    OUT=$(systemd-analyze verify "$TEST_TMP/units/$unit" 2>&1)
    RC=$?
    expect_exit 0
    # Units the ones here order themselves after (nvidia-persistenced) need not exist.
    check
    ! grep -v -e 'nvidia-persistenced' -e '^$' <<<"$OUT" | grep -q . ||
      fail "systemd-analyze verify reported problems"
  done
else
  echo "note: systemd-analyze is not installed; the units were not verified"
fi

finish
