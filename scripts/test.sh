#!/usr/bin/env bash
# Installs dependencies, builds, runs the whole test suite with ctest, then again sanitized, then
# each fuzzer briefly.
# Shared data and fixtures are read from ../shared (override with SALIENT_SHARED).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j "${TEST_JOBS:-2}" --timeout 1500)
# The suite again under AddressSanitizer + UBSan in build-asan (docs/RELIABILITY.md; ~35 min on
# 2 cores from a cold cache); SANITIZE=0 skips.
if [ "${SANITIZE:-1}" != 0 ]; then
  BUILD_DIR_PLAIN="${BUILD_DIR:-build}" scripts/sanitize.sh
fi
# Each libFuzzer harness for a short while on its seeds (docs/RELIABILITY.md); FUZZ_SECONDS=0 skips.
if [ "${FUZZ_SECONDS:-20}" != 0 ]; then
  scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
fi
