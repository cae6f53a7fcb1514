#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer (docs/RELIABILITY.md).
# Builds salient, its tests and the CLI in ${ASAN_BUILD_DIR:-build-asan} (GCC, -O1, every target
# with -fsanitize=address,undefined; LibTorch itself is Debian's, not instrumented), runs ctest there,
# then the Python suite with SALIENT_BIN set to the sanitized binary: every test that runs the CLI
# runs it sanitized (the in-process bindings module is the plain build's: Python is not built with
# ASan). Any report fails the test that caused it. Needs the plain build (scripts/build.sh) first.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DSALIENT_SANITIZE=address,undefined -DSALIENT_BUILD_BENCH=OFF -DSALIENT_PYTHON=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"

# Leaks are reported too, except those listed in scripts/lsan.supp (libraries' own, at exit), and
# what Open MPI allocates inside its calls (src/dist/world.cpp tells LeakSanitizer to ignore it).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86:strict_string_checks=1:detect_stack_use_after_return=0"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87"
(cd "$BUILD_DIR" && ctest --output-on-failure -j "${TEST_JOBS:-2}" --timeout 3000)
# SALIENT_SANITIZED=1 skips the tests that compare the CLI with the Python module bit for bit (here
# two builds) or measure memory (tests/python/conftest.py). The tests run TEST_JOBS at a time
# (pytest-xdist, Debian's python3-pytest-xdist): a sanitized command spends most of its time
# single-threaded, and one at a time this suite took 17 min of the stage's 53 on 2 cores.
XDIST=()
/usr/bin/python3 -c "import xdist" 2>/dev/null && XDIST=(-n "${TEST_JOBS:-2}")
PYTHONPATH="${BUILD_DIR_PLAIN:-build}/python" SALIENT_BIN="$BUILD_DIR/salient" SALIENT_SANITIZED=1 \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider ${XDIST[@]+"${XDIST[@]}"} tests/python
