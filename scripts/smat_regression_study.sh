#!/usr/bin/env bash
# SMaT's regression study behind docs/smat.md (the paper's Table 5 uses MLQE-PE, which is not
# available here): a regression teacher on the SST sentences' sentiment scores (root label / 4),
# trained on sst-trees-score:train; the student pool is sst-trees-score:test (2,210 sentences the
# teacher never saw: test 1,210, valid 500, train up to 500); simulability is Pearson's r.
# Resumable like scripts/smat_text_study.sh.
# Usage: scripts/smat_regression_study.sh [extra smat study options]   (env: SEEDS, EXPLAINERS, THREADS, OUT;
#        MPI="mpirun -np N" shares the student runs out over N ranks: docs/distributed.md)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/salient}
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
export SALIENT_SHARED=$SHARED
THREADS=${THREADS:-1}
OUT=${OUT:-runs/smat-regression}
SEEDS=${SEEDS:-0,9,11,30,69}
EXPLAINERS=${EXPLAINERS:-none,saliency,grad_x_input,ig,attention_all,attention_last,smat}
TEACHER=${TEACHER:-models/sst-score-teacher}
mkdir -p "$OUT"
if [ ! -f "$OUT/teacher_test.json" ]; then  # --resume: an interrupted training continues
  "$BIN" --threads "$THREADS" --quiet train --task regression --train sst-trees-score:train --dev sst-trees-score:dev \
    --out "$TEACHER" --vocab "$SHARED/data/bert_base_uncased_tokenizer" \
    --hidden 128 --layers 2 --heads 4 --intermediate 512 --max-length 64 --epochs 4 --seed 13 --resume \
    > "$OUT/teacher_train.json"
  "$BIN" --threads "$THREADS" --quiet evaluate --model "$TEACHER" --data sst-trees-score:test > "$OUT/teacher_test.json"
fi
# shellcheck disable=SC2086  # MPI is a command prefix: split into its words
${MPI:-} "$BIN" --threads "$THREADS" --quiet smat study --teacher "$TEACHER" --pool sst-trees-score:test \
  --test-size 1210 --valid-size 500 --sizes 500 --seeds "$SEEDS" --explainers "$EXPLAINERS" -o "$OUT/study" "$@"
