#!/usr/bin/env bash
# Allreduce of one gradient of the default pre-training model (salient pretrain's shape: 4 layers,
# hidden 256, intermediate 1024, 128 positions, BERT-base vocabulary; MLM head tied) with 2 ranks on
# this machine: Open MPI (salient's engine) and PyTorch c10d Gloo, one after the other.
#   bench/allreduce.sh [ITERATIONS]      (docs/distributed.md records the result)
set -euo pipefail
cd "$(dirname "$0")/.."
ITER=${1:-20}
FLOATS=$(python3 -c '
V, H, P, I, L = 30522, 256, 128, 1024, 4
emb = V * H + P * H + 2 * H + 2 * H
layer = 4 * (H * H + H) + 2 * H + (H * I + I) + (I * H + H) + 2 * H
head = H * H + H + 2 * H + V
print(emb + L * layer + head)')
echo "gradient: $FLOATS float32 values ($((FLOATS * 4 / 1000000)) MB)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun -np 2 --oversubscribe build/bench/bench_allreduce "$FLOATS" "$ITER"
/usr/bin/python3 bench/allreduce_gloo.py "$FLOATS" "$ITER" 2
