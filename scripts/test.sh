#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite with ctest.
# Shared data and fixtures are read from ../shared (override with SALIENT_SHARED).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "${TEST_JOBS:-2}" --timeout 1500
