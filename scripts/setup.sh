#!/usr/bin/env bash
# Installs salient's build dependencies (Debian packages only) and makes the OpenMP OpenBLAS the
# system BLAS that LibTorch calls. Safe to run again.
set -euo pipefail
PACKAGES=(build-essential cmake ninja-build ccache pkg-config
  libtorch-dev libopenblas0-openmp libopenblas-openmp-dev
  nlohmann-json3-dev libutf8proc-dev libcli11-dev libfmt-dev zlib1g-dev libpng-dev
  libgtest-dev libgmock-dev libbenchmark-dev python3-jsonschema
  dataset-fashion-mnist
  dict-gcide wordnet-base)  # English for the pre-training corpus (salient corpus build --gcide/--wordnet)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# LibTorch calls libblas.so.3 and libopenblas.so.0 through Debian's alternatives: point them (and LAPACK) at OpenBLAS
# built with OpenMP, measured fastest here (see docs/PERFORMANCE.md).
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for lib in libblas.so.3 liblapack.so.3 libopenblas.so.0; do
  target=/usr/lib/$arch/openblas-openmp/$lib
  if [ -e "$target" ] && [ "$(readlink -f /usr/lib/$arch/$lib)" != "$(readlink -f "$target")" ]; then
    $SUDO update-alternatives --set "$lib-$arch" "$target" >/dev/null
  fi
done
echo "setup: dependencies ready (BLAS: $(readlink -f /usr/lib/$arch/libblas.so.3))"
