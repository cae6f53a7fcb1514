#!/usr/bin/env bash
# Builds salient's libFuzzer harnesses (fuzz/, clang with AddressSanitizer + UBSan + coverage) in
# build-fuzz/ and runs each for SECONDS (default 60) on its seed corpus fuzz/corpus/NAME. New inputs
# are kept in build-fuzz/corpus/NAME, a crash in build-fuzz/crashes/. Exit status non-zero on a crash.
# Needs SALIENT_SHARED (or ../shared) for the tokenizer's vocabulary.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-60}"
HARNESSES=(fuzz_safetensors fuzz_config fuzz_tokenizer fuzz_inputs fuzz_dataset fuzz_documents fuzz_vocab fuzz_request)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
  -DSALIENT_FUZZ=ON -DSALIENT_BUILD_TESTS=OFF -DSALIENT_BUILD_BENCH=OFF >/dev/null
ninja -C build-fuzz "${HARNESSES[@]}"
mkdir -p build-fuzz/crashes
status=0
for h in "${HARNESSES[@]}"; do
  mkdir -p "build-fuzz/corpus/$h"
  echo "== $h (${SECONDS_EACH}s)"
  log="build-fuzz/$h.log"
  if ! "build-fuzz/fuzz/$h" -max_total_time="$SECONDS_EACH" -print_final_stats=1 -artifact_prefix="build-fuzz/crashes/$h-" \
      "build-fuzz/corpus/$h" "fuzz/corpus/$h" >"$log" 2>&1; then
    grep -E "ERROR|SUMMARY|Test unit written|abort" "$log" | head -5
    echo "fuzz: $h failed (log $log, input in build-fuzz/crashes)"
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|DONE" "$log" | tr '\n' ' '
  echo
done
exit $status
