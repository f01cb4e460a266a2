#!/usr/bin/env bash
# Installs the third-party NVML clients the simulator is tested against (tests/cli/clients_*):
#   nvtop          (Debian component "contrib")   the ncurses GPU monitor, dlopens libnvidia-ml.so.1
#   python3-pynvml (Debian component "non-free")  NVIDIA's Python bindings (nvitop, gpustat, ... use it)
# Neither component is enabled on a default Debian install, so this script adds an apt source
# for them (/etc/apt/sources.list.d/gpuclk-test-clients.sources) when the packages have no
# install candidate. It changes the machine's apt sources: CI runs it (.ci/run); `make` never does.
# Idempotent; silent when both are installed. Needs root (or sudo) when something is missing.
set -euo pipefail

packages=(nvtop python3-pynvml)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || {
    echo "install-test-clients: missing ${missing[*]}; run as root or install them" >&2
    exit 1
  }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive

has_candidate() { apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [0-9]'; }

source_file=/etc/apt/sources.list.d/gpuclk-test-clients.sources
if ! has_candidate nvtop || ! has_candidate python3-pynvml; then
  $sudo apt-get update -qq
fi
if { ! has_candidate nvtop || ! has_candidate python3-pynvml; } && [ ! -e "$source_file" ]; then
  . /etc/os-release
  codename=${VERSION_CODENAME:?install-test-clients: /etc/os-release names no Debian codename}
  echo "install-test-clients: enabling Debian contrib and non-free in $source_file"
  $sudo tee "$source_file" >/dev/null <<SOURCES
# Added by gpuclk's scripts/install-test-clients.sh: nvtop (contrib) and python3-pynvml (non-free).
Types: deb
URIs: http://deb.debian.org/debian
Suites: $codename $codename-updates
Components: contrib non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  $sudo apt-get update -qq
fi
echo "install-test-clients: installing ${missing[*]}"
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
