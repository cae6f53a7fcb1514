#!/usr/bin/env bash
# The method table at scale (issue #86 item 1; docs/explainers.md): every registered method on 500
# SST-2 sentences with phrase rationales (sst-trees:dev), 500 HateXplain test posts and 100 whole
# ERASER test reviews (windows), on the task models fine-tuned from the packaged MiniLM, with
# LIME's and KernelSHAP's budget stated (SAMPLES, default 1000 evaluations per input; ERASER_SAMPLES,
# default 200: a review is some 3 windows, so 200 samples there cost 600 forward passes of 512
# tokens). A long CPU study spread over sessions and machines, as the SST and SMaT studies:
# - resumable: each run skips the (example, method) pairs already in its results.jsonl;
# - archived: scripts/bench_archive.sh scale packs the records into docs/results/bench-scale.tar.gz,
#   and this script unpacks it where runs/bench/scale/<task>-minilm is missing, so a new machine
#   runs only what is left;
# - the models are made here when missing (INIT=minilm scripts/train_models.sh, seed 13: the same
#   weights on any machine, about 40 minutes of 2 cores for the three).
#   [MPI="mpirun -np 2"] [THREADS=1] scripts/method_table.sh [sst2 hatexplain eraser]
# Then: python3 scripts/bench_table.py --combine runs/bench/scale/{sst2,hatexplain,eraser}-minilm
set -euo pipefail
cd "$(dirname "$0")/.."
ARCHIVE=docs/results/bench-scale.tar.gz
OUT=runs/bench/scale
tasks=("${@:-sst2 hatexplain eraser}")
read -r -a tasks <<< "${tasks[*]}"
mkdir -p "$OUT"
if [ -f "$ARCHIVE" ]; then
  for t in "${tasks[@]}"; do
    if [ ! -d "$OUT/$t-minilm" ] && tar -tzf "$ARCHIVE" | grep -q "^$t-minilm/"; then
      tar -xzf "$ARCHIVE" -C "$OUT" "$t-minilm"
      echo "method_table: $OUT/$t-minilm unpacked from $ARCHIVE"
    fi
  done
fi
for t in "${tasks[@]}"; do
  case $t in sst2 | hatexplain | eraser) ;; *) echo "method_table: unknown task '$t' (sst2, hatexplain, eraser)" >&2; exit 2 ;; esac
  # ERASER's model is fine-tuned from SST-2's.
  need=$t; [ "$t" = eraser ] && need="sst2 eraser"
  for m in $need; do
    [ -f "models/$m-minilm/config.json" ] || INIT=minilm scripts/train_models.sh "$m"
  done
done
OUT=$OUT LIMIT=${LIMIT:-500} ERASER_LIMIT=${ERASER_LIMIT:-100} SAMPLES=${SAMPLES:-1000} \
  ERASER_SAMPLES=${ERASER_SAMPLES:-200} EXPENSIVE_ON_ERASER=1 scripts/bench_pretrained.sh "${tasks[@]}"
