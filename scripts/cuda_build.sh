#!/usr/bin/env bash
# Builds salient against a CUDA LibTorch: the C++ libraries and CMake config that ship inside
# PyTorch's wheel (`torch.utils.cmake_prefix_path`). The CPU build (scripts/build.sh) is unchanged.
#   scripts/cuda_build.sh [extra cmake args]     → ./build-cuda   ($SALIENT_TARGETS: only these)
# Debian -dev packages carried as .deb files in $SALIENT_DEBS (for a machine without apt, see
# docs/gpu.md) are unpacked into a private prefix first.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-cuda}
PREFIXES=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
if [ -n "${SALIENT_DEBS:-}" ]; then
  DEPS=${SALIENT_DEPS_PREFIX:-/opt/salient-deps}
  mkdir -p "$DEPS"
  for f in "$SALIENT_DEBS"/*.deb; do dpkg -x "$f" "$DEPS"; done
  # A -dev package's libX.so can point at an absolute path of its runtime package (Debian's
  # zlib1g-dev: /lib/x86_64-linux-gnu/libz.so.1.2.13): point a dangling one at this machine's libX.so.N.
  while IFS= read -r link; do
    [ -e "$link" ] && continue
    # (awk reads to the end: an early exit would kill ldconfig with SIGPIPE, and pipefail the script)
    own=$(ldconfig -p | awk -v n="$(basename "$link")." '!found && index($1, n) == 1 { print $NF; found = 1 }')
    [ -n "$own" ] && ln -sfn "$own" "$link"
  done < <(find "$DEPS" -type l -name 'lib*.so')
  PREFIXES="$PREFIXES;$DEPS/usr"
fi
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSALIENT_CUDA=ON \
  -DCMAKE_PREFIX_PATH="$PREFIXES" "$@"
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" ${SALIENT_TARGETS:+--target $SALIENT_TARGETS}
