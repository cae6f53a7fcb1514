#!/usr/bin/env bash
# Installs dependencies, builds, runs the whole test suite with ctest, then each fuzzer briefly.
# Shared data and fixtures are read from ../shared (override with SALIENT_SHARED).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j "${TEST_JOBS:-2}" --timeout 1500)
# Each libFuzzer harness for a short while on its seeds (docs/RELIABILITY.md); FUZZ_SECONDS=0 skips.
if [ "${FUZZ_SECONDS:-20}" != 0 ]; then
  scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
fi
