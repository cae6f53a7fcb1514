#!/usr/bin/env bash
# Forward speed of a BERT-base-shaped model at 128 tokens (batch 1) under each BLAS Debian can
# provide, selected per process with LD_LIBRARY_PATH (the system alternative is not touched),
# at 1 and 2 torch threads. Needs libopenblas0-pthread installed for the pthread row; the
# reference BLAS (libblas3) is always present. Usage: bench/blas_variants.sh [build-dir]
set -euo pipefail
BUILD=${1:-build}
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
# OpenBLAS's kernels: the CPU's (salient's default, util/runtime.h) and the generic Prescott ones
# OpenBLAS 0.3.21 falls back to on CPUs newer than its tables (OPENBLAS_CORETYPE=Prescott).
echo "| BLAS | kernels | torch threads | BERT-base forward, 128 tokens, batch 1 (s) | sgemm peak (GFLOP/s) |"
echo "|---|---|---|---|---|"
for variant in openblas-openmp openblas-pthread blas; do
  dir=/usr/lib/$arch/$variant
  [ -e "$dir/libblas.so.3" ] || { echo "| $variant | - | - | not installed | - |"; continue; }
  kernels=(default)
  [ "$variant" = openblas-openmp ] && kernels=(default Prescott)
  for k in "${kernels[@]}"; do
    for t in 1 2; do
      core=(); [ "$k" = Prescott ] && core=(OPENBLAS_CORETYPE=Prescott)
      out=$(env "${core[@]}" LD_LIBRARY_PATH=$dir "$BUILD/bench/bench_forward" --threads $t --only-base-128 2>&1)
      peak=$(echo "$out" | sed -n 's/.*sgemm peak \([0-9.]*\).*/\1/p')
      lat=$(echo "$out" | awk -F'|' '/bert-base/ && $3+0 == 128 && $4+0 == 1 {gsub(/ /, "", $5); print $5}')
      name=$k; [ "$k" = default ] && [ "$variant" != blas ] &&
        name=$(env LD_LIBRARY_PATH=$dir "$BUILD/salient" info 2>/dev/null | sed -n 's/.* \([A-Za-z0-9_]*\) MAX_THREADS.*/\1/p')
      echo "| $variant | ${name:-$k} | $t | $lat | $peak |"
    done
  done
done
