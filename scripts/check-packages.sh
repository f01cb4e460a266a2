#!/usr/bin/env bash
# The Debian packages end to end, on this machine without touching its own system: `make deb`,
# lintian, then a fresh Debian 12 root (mmdebstrap) where they are installed with apt-get as on a
# new node, used (gpuclk --sim, gpuclk serve under the unprivileged user, the man pages, the bash
# completion, the units' paths), and removed and purged (the admin's /etc/gpuclk stays). In the
# image: where podman is, scripts/build-image.sh builds it and it runs (its entry point, its user,
# and gpuclk serve --sim with /metrics read from the host); elsewhere the Containerfile's RUN step
# runs as written in a fresh root, then its ENTRYPOINT and CMD as its USER. Output: markdown on
# stdout (docs/results/packaging.md is one run's).
#
# Usage: scripts/check-packages.sh [ROOT_DIR]   (as root: mmdebstrap, chroot, mount)
# Needs: dpkg-dev, lintian, mmdebstrap, network access to the Debian archive; podman for the image
# (BASE: its base, default mmdebstrap: scripts/build-image.sh). A missing tool is
# named, and its step skipped with a note. Exit: 0 every check passed, 1 a check failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=${1:-$(mktemp -d /tmp/gpuclk-debroot.XXXXXX)}
failures=0
say() { printf '%s\n' "$*"; }
fail() { say "**FAILED**: $*"; failures=$((failures + 1)); }
block() { say '```'; cat; say '```'; }
started=$SECONDS

say "# The Debian packages: build, lintian, install/use/remove in a fresh Debian 12 root"
say
say "Made by \`scripts/check-packages.sh\` on $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs/results' || echo ' (with uncommitted changes)'), $(nproc) cores."
say

# --- make deb ----------------------------------------------------------------------------------
say "## make deb"
t=$SECONDS
if ! make deb >/tmp/gpuclk-make-deb.log 2>&1; then
  fail "make deb"
  tail -30 /tmp/gpuclk-make-deb.log | block
  exit 1
fi
version=$(sed -n 's/^project(gpuclk VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
arch=$(dpkg --print-architecture)
debs=(build/gpuclk_"${version}"_"$arch".deb build/gpuclk-sim_"${version}"_"$arch".deb)
say "$((SECONDS - t)) s (on a built tree: the build is up to date, cpack stages and packages)."
say
ls -l "${debs[@]}" | awk '{ print $5, $9 }' | block
for deb in "${debs[@]}"; do
  dpkg-deb -f "$deb" Package Version Architecture Depends Recommends Suggests Enhances Installed-Size | block
done
say "Conffiles and maintainer scripts of gpuclk:"
dpkg-deb --ctrl-tarfile "${debs[0]}" | tar -t | sort | block
dpkg-deb --info "${debs[0]}" conffiles | block

# --- lintian -----------------------------------------------------------------------------------
say "## lintian"
if command -v lintian >/dev/null; then
  lintian_out=$(lintian --display-info --pedantic "${debs[@]}" 2>&1 | grep -v '^running with root privileges')
  lintian_rc=$?
  say "\`lintian --display-info --pedantic\` ($(lintian --version)): $(grep -c '^E: ' <<<"$lintian_out") errors, $(grep -c '^W: ' <<<"$lintian_out") warnings, $(grep -c '^[IP]: ' <<<"$lintian_out") info/pedantic tags"
  if [ -n "$lintian_out" ]; then printf '%s\n' "$lintian_out" | block; else say "(no tags)"; fi
  grep -qE '^[EW]: ' <<<"$lintian_out" && fail "lintian reports errors or warnings"
  say
  say "Why the info tags stay (lintian shows none of them without --display-info):"
  say
  say "- binary-has-unneeded-section .comment: CPack strips with plain \`strip\` (debug info and"
  say "  symbols gone); dh_strip would also drop the compiler's version string."
  say "- hardening-no-bindnow, hardening-no-fortify-functions: the packages are built with the"
  say "  release preset's flags, not dpkg-buildflags; bindnow would resolve every symbol at start,"
  say "  and gpuclk's start-up is a measured cost (docs/results/cli_latency_h100.md)."
  say "- package-supports-alternative-init-but-no-init.d-script: systemd units only; the tools"
  say "  work without either (gpuclk apply/serve by hand)."
  say "- spelling-error-in-binary occured: a string of NVIDIA's static CUDA runtime (bench), not ours."
else
  say "lintian is not installed (apt-get install lintian): not checked."
fi
say

# --- a fresh Debian 12 root --------------------------------------------------------------------
say "## A fresh Debian 12 root"
if ! command -v mmdebstrap >/dev/null; then
  say "mmdebstrap is not installed (apt-get install mmdebstrap): not checked."
  exit $((failures > 0))
fi
if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
  t=$SECONDS
  if ! mmdebstrap --quiet --variant=apt bookworm "$ROOT" >/tmp/gpuclk-mmdebstrap.log 2>&1; then
    fail "mmdebstrap"
    tail -20 /tmp/gpuclk-mmdebstrap.log | block
    exit 1
  fi
  say "\`mmdebstrap --variant=apt bookworm\`: $((SECONDS - t)) s, $(du -sh "$ROOT" | cut -f1)."
fi
# in_root CMD: runs CMD (sh -c) in the root with /proc, /dev and /sys of its own namespace.
in_root() {
  unshare --mount --fork --pid sh -c '
    mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && mount --rbind /sys "$1/sys" &&
    chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
      /bin/sh -c "$2"' _ "$ROOT" "$1"
}
step() { # step TITLE CMD: runs CMD in the root, shows it and its output
  local out rc
  out=$(in_root "$2" 2>&1)
  rc=$?
  say "$1 (exit $rc):"
  printf '$ %s\n%s\n' "$2" "$out" | block
  LAST_OUT=$out
  return $rc
}
cp "${debs[@]}" "$ROOT/tmp/"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null
gdeb=/tmp/$(basename "${debs[0]}")
sdeb=/tmp/$(basename "${debs[1]}")

say
say "### Installed as on a new node"
step "apt-get install" "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $gdeb $sdeb 2>&1 | grep -E '^(Setting up gpuclk|The following NEW|  )'" ||
  fail "apt-get install of the packages"
step "What the packages put where" "dpkg -L gpuclk gpuclk-sim | grep -E 'bin/|\\.service|libexec/gpuclk/|/etc/|\\.so|completions/|man1/gpuclk.1' | sort" ||
  fail "dpkg -L"
step "gpuclk on the simulated node" "GPUCLK_SIM_STATE=/tmp/sim.state gpuclk --sim --direct" || fail "gpuclk --sim"
step "No GPU and no simulator asked for: the error says so" "gpuclk; echo \"exit \$?\"" || true
grep -q "exit 12" <<<"$LAST_OUT" || fail "gpuclk without a driver did not exit 12"
step "gpuclk serve as the unprivileged user 9400, then a client through its socket" \
  "groupadd -g 9400 probe && useradd -u 9400 -g 9400 -M -d /nonexistent -s /usr/sbin/nologin probe
   export GPUCLK_SIM_STATE=/tmp/u.state GPUCLK_STATE_DIR=/tmp/u.journal
   setpriv --reuid=9400 --regid=9400 --clear-groups env GPUCLK_SIM_SPEED=0 gpuclk --sim --socket /tmp/u.sock serve --listen 127.0.0.1:0 2>/tmp/serve.log & sleep 3
   setpriv --reuid=9400 --regid=9400 --clear-groups gpuclk --sim --socket /tmp/u.sock query --fields index,power.draw --format csv
   kill \$!; head -1 /tmp/serve.log" ||
  fail "gpuclk serve as a user"
grep -q "sampling every" <<<"$LAST_OUT" || fail "gpuclk serve did not start"
step "The units name the installed gpuclk" "grep -h '^Exec' /lib/systemd/system/gpuclk-*.service; ls -l /usr/bin/gpuclk" ||
  fail "units"
step "Man pages" "ls /usr/share/man/man1/ | grep -c '^gpuclk.*\\.1\\.gz\$'; zcat /usr/share/man/man1/gpuclk-set.1.gz | sed -n '/^.SH NAME/,/^.SH SYNOPSIS/p'" ||
  fail "man pages"
step "bash completion of 'gpuclk set --po'" \
  "bash -c '. /usr/share/bash-completion/completions/gpuclk; COMP_WORDS=(gpuclk set --po); COMP_CWORD=2; _gpuclk; echo \${COMPREPLY[*]}'" ||
  fail "bash completion"
grep -q -- "--power-limit" <<<"$LAST_OUT" || fail "completion lacks --power-limit"

say
say "### Removed, then purged: the admin's files in /etc/gpuclk stay"
step "The admin's policy, and an edited example" \
  "printf 'version = 1\\n' >/etc/gpuclk/policy.toml && echo '# edited' >>/etc/gpuclk/profile.toml.example && ls /etc/gpuclk" ||
  fail "admin files"
step "apt-get remove gpuclk gpuclk-sim" "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q gpuclk gpuclk-sim >/dev/null && ls /etc/gpuclk && ! test -e /usr/bin/gpuclk && echo '(/usr/bin/gpuclk is gone)'" ||
  fail "remove"
grep -q "policy.toml.example" <<<"$LAST_OUT" || fail "remove took the conffiles"
step "apt-get purge gpuclk" "DEBIAN_FRONTEND=noninteractive apt-get purge -y -q gpuclk >/dev/null 2>&1 && ls -A /etc/gpuclk" ||
  fail "purge"
grep -q "^policy.toml$" <<<"$LAST_OUT" || fail "purge removed the admin's policy.toml"

say
say "### The image"
engine=""
for candidate in podman buildah; do
  command -v "$candidate" >/dev/null && { engine=$candidate; break; }
done
if [ "$engine" = podman ]; then
  # The real image, built as a site builds it (BASE=mmdebstrap where Docker Hub is out of reach:
  # the default here), then run: its entry point without a GPU, its user, and `gpuclk serve --sim`
  # in an image derived from it with gpuclk-sim added (the image itself has no simulator).
  image=ghcr.io/gpuclk/gpuclk:$version
  t=$SECONDS
  if ! DEB=${debs[0]} BASE=${BASE:-mmdebstrap} scripts/build-image.sh >/tmp/gpuclk-build-image.log 2>&1; then
    fail "scripts/build-image.sh"
    tail -20 /tmp/gpuclk-build-image.log | block
  else
    say "\`DEB=${debs[0]} BASE=${BASE:-mmdebstrap} scripts/build-image.sh\`: $((SECONDS - t)) s."
    grep -E '^(STEP|build-image:)' /tmp/gpuclk-build-image.log | block
    # How this host runs a container: the engine's defaults, else runc with the process limits
    # at or below this host's (a sandbox without CAP_SYS_RESOURCE and with hybrid cgroups, where
    # crun fails to set them).
    run=(podman run --rm)
    if ! "${run[@]}" "$image" --version >/dev/null 2>&1; then
      run=(podman --runtime runc run --rm --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
    fi
    show() { # show TITLE CMD...: runs CMD on this host, shows it and its output
      local out rc
      out=$("${@:2}" 2>&1)
      rc=$?
      say "$1 (exit $rc):"
      printf '$ %s\n%s\n' "${*:2}" "$out" | block
      LAST_OUT=$out
      return $rc
    }
    show "The image's entry point" "${run[@]}" "$image" --version || fail "the image's gpuclk --version"
    show "Its default command without a GPU: the error names the way out" "${run[@]}" "$image"
    grep -q "no NVIDIA driver found" <<<"$LAST_OUT" || fail "the image's serve without a GPU did not say why"
    show "Its user" "${run[@]}" --entrypoint id "$image" || fail "the image's user"
    grep -q "uid=9400(gpuclk)" <<<"$LAST_OUT" || fail "the image does not run as gpuclk (9400)"
    context=$(mktemp -d)
    cp "${debs[1]}" "$context/gpuclk-sim.deb"
    printf 'FROM %s\nUSER 0\nCOPY gpuclk-sim.deb /tmp/\nRUN apt-get update -q && apt-get install -y -q --no-install-recommends /tmp/gpuclk-sim.deb && rm -rf /var/lib/apt/lists/* /tmp/gpuclk-sim.deb\nUSER 9400:9400\n' "$image" >"$context/Containerfile"
    if podman build --isolation chroot -t localhost/gpuclk-sim-check:$version "$context" >/tmp/gpuclk-build-sim-image.log 2>&1; then
      port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      "${run[@]}" --network host -d --name gpuclk-image-check --env GPUCLK_SOCKET=/tmp/s.sock \
        localhost/gpuclk-sim-check:$version --sim serve --listen "127.0.0.1:$port" >/dev/null 2>&1
      for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
      show "gpuclk serve --sim in the image (gpuclk-sim added), /metrics from the host" \
        sh -c "curl -sf http://127.0.0.1:$port/metrics | grep -E '^gpuclk_gpu_power_watts' | head -2"
      grep -q "gpuclk_gpu_power_watts" <<<"$LAST_OUT" || fail "no /metrics from gpuclk serve in the image"
      podman logs gpuclk-image-check 2>&1 | head -2 | block
      podman rm -f gpuclk-image-check >/dev/null 2>&1
    else
      fail "the image with gpuclk-sim added"
      tail -20 /tmp/gpuclk-build-sim-image.log | block
    fi
    rm -rf "$context"
  fi
else
say "No podman here (buildah alone builds but does not run an image), so the image is not built;"
say "its RUN step runs as written in a fresh root of the same Debian (debian:12-slim is"
say "bookworm's minimal root too), then its ENTRYPOINT and CMD as its USER (with --sim: the image"
say "has no GPUs here; gpuclk-sim added only for that)."
rm -rf "$ROOT.image" # a root of its own: the one above has had the packages
if ! mmdebstrap --quiet --variant=apt bookworm "$ROOT.image" >/tmp/gpuclk-mmdebstrap.log 2>&1; then
  fail "mmdebstrap (image root)"
else
  saved_root=$ROOT
  ROOT=$ROOT.image
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null
  cp "${debs[0]}" "$ROOT/tmp/gpuclk.deb"
  cp "${debs[1]}" "$ROOT/tmp/"
  # The RUN instruction, its continuation lines joined.
  run_step=$(awk '/^RUN / { on = 1; sub(/^RUN /, "") } on { line = line $0 "\n"; if ($0 !~ /\\$/) exit } END { printf "%s", line }' Containerfile)
  user=$(sed -n 's/^USER //p' Containerfile)
  entry=$(sed -n 's/^ENTRYPOINT \[\(.*\)\]/\1/p' Containerfile | tr -d '",')
  cmd=$(sed -n 's/^CMD \[\(.*\)\]/\1/p' Containerfile | tr -d '",')
  step "RUN" "$run_step" || fail "the Containerfile's RUN step"
  step "ENTRYPOINT $entry, CMD $cmd, as USER $user (and --sim)" \
    "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /tmp/$(basename "${debs[1]}") >/dev/null 2>&1
     setpriv --reuid=${user%%:*} --regid=${user##*:} --clear-groups env GPUCLK_STATE_DIR=/tmp/state GPUCLK_SOCKET=/tmp/s.sock \
       GPUCLK_SIM_STATE=/tmp/s.state $entry --sim $cmd 2>/tmp/serve.log & sleep 3
     kill \$!; head -1 /tmp/serve.log; id gpuclk
     setpriv --reuid=${user%%:*} --regid=${user##*:} --clear-groups $entry; echo \"without --sim, no GPU here: exit \$?\"" ||
    fail "the image's entry point"
  grep -q "sampling every" <<<"$LAST_OUT" || fail "the image's gpuclk serve did not start as $user"
  ROOT=$saved_root
fi

fi
say
say "Total: $((SECONDS - started)) s; $failures check(s) failed."
exit $((failures > 0))
