#!/usr/bin/env bash
# The Debian packages of the build tree under test (cmake/Package.cmake), installed on this
# machine as an admin installs them on a node: cpack makes gpuclk and gpuclk-sim, dpkg installs
# them (their dependencies, from dpkg-shlibdeps, must be satisfied here), the installed gpuclk runs
# on the simulator from /usr/bin, gpuclk serve answers, the installed units pass systemd-analyze
# verify, a man page renders, the bash completion completes; then `dpkg -r` leaves the conffiles
# of /etc/gpuclk and `dpkg -P` the admin's own files there, and nothing else of the packages.
#
# It changes the machine's own system, so it runs only where that is meant: as root, with CI=true
# (.ci/run's fresh clone on a machine CI owns) or GPUCLK_TEST_SYSTEM_PACKAGES=1, and never where a
# gpuclk package or an /etc/gpuclk already is. Elsewhere it skips (77) and says why. The same
# packages in a fresh Debian 12 root, lintian and the image: scripts/check-packages.sh.
# Usage: deb_test.sh BUILD_DIR
set -u
BUILD_DIR=$(cd "${1:?usage: deb_test.sh BUILD_DIR}" && pwd)
SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
skip() {
  echo "SKIP: $*"
  exit 77
}
[ "$(id -u)" -eq 0 ] || skip "installs packages on this machine: needs root"
[ "${CI:-}" = true ] || [ "${GPUCLK_TEST_SYSTEM_PACKAGES:-}" = 1 ] ||
  skip "installs packages on this machine: runs under CI=true or GPUCLK_TEST_SYSTEM_PACKAGES=1" \
    "(scripts/check-packages.sh checks them in a scratch root instead)"
for tool in cpack dpkg dpkg-shlibdeps python3; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (dpkg-dev has dpkg-shlibdeps)"
done
dpkg-query -W -f='${Status}' gpuclk gpuclk-sim 2>/dev/null | grep -q installed &&
  skip "a gpuclk package is installed here already; the test would replace it"
[ -e /etc/gpuclk ] && skip "/etc/gpuclk exists here already; the test would change it"

PACKAGES=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-deb.XXXXXX")
# On every exit: the packages purged and /etc/gpuclk gone, as before the test.
cleanup() {
  DEBIAN_FRONTEND=noninteractive dpkg -P gpuclk-sim gpuclk >/dev/null 2>&1
  rm -rf /etc/gpuclk "$PACKAGES"
}
trap cleanup EXIT

# shellcheck source=tests/cli/lib.sh
source "$SRC_DIR/tests/cli/lib.sh" /usr/bin/gpuclk
trap 'stop_serve; rm -rf "$TEST_TMP"; cleanup' EXIT
# run TITLE CMD...: a command that is not gpuclk, its output and exit code kept as gpuclk() keeps them
run() {
  LAST_CMD=$1
  OUT=$("${@:2}" 2>"$TEST_TMP/stderr")
  RC=$?
  ERR=$(cat "$TEST_TMP/stderr")
}

# --- the packages -------------------------------------------------------------------------------
# gzip, not the packages' xz: the sanitized build's binaries are large, and xz's time is not
# what this test checks.
run "cpack -G DEB" cpack -G DEB -B "$PACKAGES" --config "$BUILD_DIR/CPackConfig.cmake" \
  -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip
expect_exit 0
debs=("$PACKAGES"/gpuclk_*.deb "$PACKAGES"/gpuclk-sim_*.deb)
check
[ -f "${debs[0]}" ] && [ -f "${debs[1]}" ] || fail "cpack made no gpuclk and gpuclk-sim packages"
run "dpkg-deb -f gpuclk Depends" dpkg-deb -f "${debs[0]}" Depends
expect_out "libc6"
expect_no_out "nvidia"  # NVML is loaded at run time from the host's driver

run "dpkg -i" env DEBIAN_FRONTEND=noninteractive dpkg -i "${debs[@]}"
expect_exit 0
run "dpkg -s gpuclk" dpkg-query -W -f='${Status}' gpuclk gpuclk-sim
expect_out "install ok installed"

# --- used from the installed paths --------------------------------------------------------------
gpuclk --version
expect_exit 0
expect_out_re "^gpuclk [0-9]+\.[0-9]+\.[0-9]+$"
gpuclk --sim --direct
expect_exit 0
expect_out "NVIDIA H100 80GB HBM3"
# No GPU here and no --sim: 12 where no NVML library is installed, 9 where one is without its
# driver (CI installs nvtop, which brings Debian's libnvidia-ml1); the message names the way out.
gpuclk --direct
check; [ "$RC" -eq 12 ] || [ "$RC" -eq 9 ] || fail "exit code $RC, expected 12 or 9"
expect_err "--sim"
SOCK=$TEST_TMP/serve.sock
GPUCLK_SIM_SPEED=0 start_serve --sim --socket "$SOCK" serve --listen 127.0.0.1:0
LAST_CMD="gpuclk serve (the package's)"
check
[ "$(readlink "/proc/$SERVE_PID/exe")" = /usr/bin/gpuclk-serve ] ||
  fail "the service runs $(readlink "/proc/$SERVE_PID/exe"), not /usr/bin/gpuclk-serve"
gpuclk --sim --socket "$SOCK" query --fields index,power.draw --format csv,noheader
expect_exit 0
expect_lines 4
stop_serve
if command -v systemd-analyze >/dev/null; then
  run "systemd-analyze verify" systemd-analyze verify /lib/systemd/system/gpuclk-serve.service \
    /lib/systemd/system/gpuclk-apply.service
  expect_exit 0
fi
run "man -l gpuclk-set.1.gz" env MANWIDTH=100 man -l /usr/share/man/man1/gpuclk-set.1.gz
expect_exit 0
expect_out "power-limit"
run "bash completion of 'gpuclk set --po'" bash -c '. /usr/share/bash-completion/completions/gpuclk
  COMP_WORDS=(gpuclk set --po); COMP_CWORD=2; _gpuclk; echo "${COMPREPLY[*]}"'
expect_out "--power-limit"

# --- removed, then purged: the admin's files stay -----------------------------------------------
printf 'version = 1\n' >/etc/gpuclk/policy.toml  # the admin's own, no package's
echo "# edited by the admin" >>/etc/gpuclk/profile.toml.example
run "dpkg -r" env DEBIAN_FRONTEND=noninteractive dpkg -r gpuclk-sim gpuclk
expect_exit 0
check
[ ! -e /usr/bin/gpuclk ] && [ ! -e /lib/systemd/system/gpuclk-serve.service ] ||
  fail "dpkg -r left the programs or the units"
check
grep -q "edited by the admin" /etc/gpuclk/profile.toml.example 2>/dev/null ||
  fail "dpkg -r took the edited conffile profile.toml.example"
run "dpkg -P" env DEBIAN_FRONTEND=noninteractive dpkg -P gpuclk gpuclk-sim
expect_exit 0
check
[ -f /etc/gpuclk/policy.toml ] || fail "dpkg -P removed the admin's policy.toml"
run "dpkg -L after the purge" sh -c 'dpkg -L gpuclk gpuclk-sim 2>/dev/null; ls /usr/lib/*/gpuclk 2>/dev/null'
check
[ -z "$OUT" ] || fail "the purge left: $OUT"
finish
