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
# of building one), ENGINE (podman or buildah; default: the first found).
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
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp Containerfile "$context/"
cp "$deb" "$context/gpuclk.deb"

case "$engine" in
  podman) podman build --tag "$default_image" --file "$context/Containerfile" "$context" ;;
  buildah) buildah build --tag "$default_image" --file "$context/Containerfile" "$context" ;;
  *) echo "build-image: ENGINE must be podman or buildah, not '$engine'" >&2; exit 1 ;;
esac
if [ "$image" != "$default_image" ]; then
  "$engine" tag "$default_image" "$image"
fi
echo "build-image: built $image ($("$engine" images --format '{{.Size}}' "$image" 2>/dev/null | head -1))"
if [ "$push" = yes ]; then
  "$engine" push "$image"
  echo "build-image: pushed $image"
fi
