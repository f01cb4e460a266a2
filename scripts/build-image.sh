#!/usr/bin/env bash
# Builds the container image of Containerfile (gpuclk serve on Debian 12) with podman, else
# buildah, from the Debian package `make deb` makes, and tags it with the name the Kubernetes
# manifests use (deploy/kubernetes/*.yaml: ghcr.io/gpuclk/gpuclk:VERSION).
#
# Usage: scripts/build-image.sh [--push]
#   IMAGE=registry.example.org/hpc/gpuclk:0.1.0 scripts/build-image.sh --push
#     builds, tags it IMAGE too and pushes IMAGE (log in first: podman login registry.example.org);
#     then set the manifests' image: to IMAGE (docs/deploy.md).
# Environment: IMAGE (default ghcr.io/gpuclk/gpuclk:VERSION), DEB (a gpuclk_*.deb to use instead
# of building one), ENGINE (podman or buildah; default: the first found), BASE (the Containerfile's
# base image, default docker.io/library/debian:12-slim; BASE=mmdebstrap makes a Debian 12 minbase
# root with mmdebstrap from Debian's archive and imports it as localhost/gpuclk-base:bookworm, for
# hosts that reach Debian's archive but no image registry), ISOLATION (how RUN steps run,
# default chroot: it needs no OCI runtime, so the build works inside a container or a sandbox
# where crun cannot set the process limits or the cgroups it wants; oci for the engine's default).
# Exit: 0 built (and pushed), 1 a step failed, 2 no container engine here (the message says so).
set -euo pipefail
cd "$(dirname "$0")/.."
push=no
case "${1:-}" in
  --push) push=yes ;;
  '') ;;
  *) echo "usage: scripts/build-image.sh [--push]" >&2; exit 1 ;;
esac

version=$(sed -n 's/^project(gpuclk VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
default_image=ghcr.io/gpuclk/gpuclk:$version
image=${IMAGE:-$default_image}
# The manifests must name what this builds.
for manifest in deploy/kubernetes/gpuclk-serve.yaml deploy/kubernetes/gpuclk-serve-profile.yaml; do
  if ! grep -q "image: $default_image\$" "$manifest"; then
    echo "build-image: $manifest does not name $default_image; update it with the version" >&2
    exit 1
  fi
done

engine=${ENGINE:-}
if [ -z "$engine" ]; then
  for candidate in podman buildah; do
    if command -v "$candidate" >/dev/null; then engine=$candidate; break; fi
  done
fi
if [ -z "$engine" ]; then
  echo "build-image: neither podman nor buildah is installed here (apt-get install podman);" \
    "the image is not built" >&2
  exit 2
fi

deb=${DEB:-}
if [ -z "$deb" ]; then
  make deb >/dev/null
  deb=$(ls build/gpuclk_"$version"_*.deb)
fi
case "$engine" in
  podman | buildah) ;;
  *) echo "build-image: ENGINE must be podman or buildah, not '$engine'" >&2; exit 1 ;;
esac
isolation=${ISOLATION:-chroot}
case "$isolation" in
  chroot | oci) ;;
  *) echo "build-image: ISOLATION must be chroot or oci, not '$isolation'" >&2; exit 1 ;;
esac

base=${BASE:-docker.io/library/debian:12-slim}
if [ "$base" = mmdebstrap ]; then
  command -v mmdebstrap >/dev/null ||
    { echo "build-image: BASE=mmdebstrap needs mmdebstrap (apt-get install mmdebstrap)" >&2; exit 1; }
  base=localhost/gpuclk-base:bookworm
  if [ -z "$("$engine" images -q "$base" 2>/dev/null)" ]; then
    root_tar=$(mktemp --suffix=.tar)
    echo "build-image: making $base with mmdebstrap (Debian 12 minbase)"
    mmdebstrap --quiet --variant=minbase bookworm "$root_tar"
    "$engine" import "$root_tar" "$base" >/dev/null
    rm -f "$root_tar"
  fi
fi

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp Containerfile "$context/"
cp "$deb" "$context/gpuclk.deb"

"$engine" build --isolation "$isolation" --build-arg "BASE=$base" --tag "$default_image" \
  --file "$context/Containerfile" "$context"
if [ "$image" != "$default_image" ]; then
  "$engine" tag "$default_image" "$image"
fi
echo "build-image: built $image ($("$engine" images --format '{{.Size}}' "$image" 2>/dev/null | head -1))"
if [ "$push" = yes ]; then
  "$engine" push "$image"
  echo "build-image: pushed $image"
fi
