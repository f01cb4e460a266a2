#!/usr/bin/env bash
# Installs the Debian packages gpuclk builds and tests with, only those missing.
# Idempotent; silent when everything is already there. Needs root (or sudo) only when
# something is missing. CUDA is optional and never installed here (see README).
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  ninja-build           # the build tool of every preset (faster than make on 2 cores)
  libcli11-dev          # command line parsing
  libfmt-dev            # formatting
  nlohmann-json3-dev    # JSON output, bench reports
  libtomlplusplus-dev   # profiles and simulator scenarios
  libhwloc-dev          # CPU, NUMA and PCIe topology
  libnuma-dev           # bench p2p: pinned host buffers on a chosen NUMA node
  libgtest-dev libgmock-dev  # unit tests
  libbenchmark-dev      # micro-benchmarks of the tool itself (perf/)
  prometheus            # real server and promtool for exporter tests
  victoria-metrics      # a second Prometheus-compatible store: gpuclk fleet at scale (perf/fleet_scale.sh, its test)
  libcivetweb-dev       # exporter (HTTP server of /metrics)
  libnghttp2-dev        # gpuclk serve: the kubelet's pod-resources API (one gRPC call over HTTP/2)
  python3-grpcio        # tests/cli/kubelet*: a fake kubelet, a real gRPC server
  libcurl4-openssl-dev  # gpuclk fleet: Prometheus's HTTP API
  wrk                   # load tests of gpuclk serve's HTTP side (tests/integration, perf/)
  slurmctld slurmd slurm-client munge  # a real Slurm for the prolog/epilog test (tests/integration/slurm_test.sh)
  gnuplot-nox           # sweep plots
  clang-format clang-tidy
  universal-ctags       # scripts/ci/check-rules.sh sizes: every function's first and last line
  jq                    # JSON assertions in tests/cli
  python3-yaml          # tests/cli/serve_profile: the Kubernetes manifests parsed without kubectl
  tmux                  # tests/cli/clients_nvtop: nvtop runs in a tmux pane the test reads
  man-db                # tests/install: `man -l` renders every generated man page
  dpkg-dev              # make deb and tests/install/deb_test.sh: dpkg-shlibdeps (the packages' dependencies)
  libncurses-dev        # gpuclk top's screen (ncursesw: UTF-8 bars and graphs)
  clang-14 libclang-rt-14-dev  # libFuzzer targets with ASan/UBSan (scripts/ci/fuzz.sh)
)
# nvtop and python3-pynvml (the simulator's third-party NVML clients in tests/cli/clients_*)
# live in Debian's contrib/non-free components: scripts/install-test-clients.sh, run by CI.

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: missing ${missing[*]}; run as root or install them" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
