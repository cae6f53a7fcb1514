#!/usr/bin/env bash
# SMaT's plausibility (Fernandes et al. 2022, Table 2) with the task's own teacher: split the task's
# train split into the teacher's texts and a disjoint student pool, train the teacher, meta-train
# SMaT's coefficients on it for each seed, then score every teacher explainer's tokens against the
# human rationales of the task's test split (with the oracle best layer and head).
#   hatexplain: a from-scratch teacher of the text study's shape, HateXplain's recipe of
#               scripts/train_models.sh (128 tokens, macro-F1 picks the epoch).
#   eraser:     ERASER Movie Reviews, the paper's choice. 1,600 training documents cannot give the
#               study's 2,000 test texts: the pool is 800 documents (300 test, 500 train), validation
#               comes from eraser:val. The teacher follows train_models.sh's ERASER recipe: fine-tuned
#               at 256 tokens from an SST-2 classifier ($SST2_TEACHER, the text study's teacher),
#               because the text study's shape learns nothing from scratch on so few documents.
# Usage: scripts/smat_plausibility.sh hatexplain|eraser [extra `smat train` options]
#        env: SEEDS (0,9,11), SIZE (500), JOBS (SMaT runs at once, one thread each; default 1),
#             THREADS (teacher, plausibility; default 2), OUT (runs/smat-<task>),
#             TEACHER (models/<task>-teacher), POOLING (e.g. scalar_mix: the teacher's head, as in
#             scripts/smat_text_study.sh), SST2_TEACHER (eraser only; models/sst2-teacher)
# Resumable: the split, the teacher and every finished SMaT run are kept and skipped on a rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
TASK=${1:-}
case $TASK in
  hatexplain|eraser) shift ;;
  *) echo "usage: scripts/smat_plausibility.sh hatexplain|eraser [smat train options] (got task '$TASK')" >&2
     exit 2 ;;
esac
BIN=${BIN:-build/salient}
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
export SALIENT_SHARED=$SHARED
OUT=${OUT:-runs/smat-$TASK}
TEACHER=${TEACHER:-models/$TASK-teacher}
SEEDS=${SEEDS:-0,9,11}
SIZE=${SIZE:-500}
JOBS=${JOBS:-1}
THREADS=${THREADS:-2}
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || { echo "JOBS: must be a positive integer (got '$JOBS')" >&2; exit 2; }
if [ "$TASK" = hatexplain ]; then
  POOL_SIZE=4500 MAXLEN=128 DEV=hatexplain:val
  TEACHER_ARGS=(--vocab "$SHARED/data/bert_base_uncased_tokenizer" --hidden 128 --layers 2 --heads 4
    --intermediate 512 --epochs 6 --max-minutes 10 --select-metric macro_f1)
  STUDENT_ARGS=()
else
  SST2_TEACHER=${SST2_TEACHER:-models/sst2-teacher}
  [ -f "$SST2_TEACHER/model.safetensors" ] ||
    { echo "SST2_TEACHER: $SST2_TEACHER/model.safetensors not found (run scripts/smat_text_study.sh first)" >&2; exit 2; }
  POOL_SIZE=800 MAXLEN=256 DEV=eraser:val
  TEACHER_ARGS=(--init "$SST2_TEACHER" --extend-positions --lr 3e-4 --batch-size 16 --epochs 6 --max-minutes 15)
  STUDENT_ARGS=(--test-size 300 --valid-pool eraser:val --valid-size 200)
fi
mkdir -p "$OUT/explainers"
# 1. Disjoint teacher texts and student pool.
[ -f "$OUT/split/pool.jsonl" ] ||
  "$BIN" --quiet smat split --data "$TASK:train" --pool-size "$POOL_SIZE" --min-words 6 -o "$OUT/split" > /dev/null
labels=$(python3 -c "import json,sys; print(','.join(json.load(open(sys.argv[1]))['label_names']))" "$OUT/split/split.json")
# 2. The teacher (--resume: an interrupted training continues; a finished one is not redone).
if [ ! -f "$OUT/teacher_test.json" ]; then
  "$BIN" --threads "$THREADS" --quiet train --train "$OUT/split/teacher.jsonl" --labels "$labels" \
    --dev "$DEV" --out "$TEACHER" "${TEACHER_ARGS[@]}" --max-length "$MAXLEN" \
    --seed 13 ${POOLING:+--pooling "$POOLING"} --resume > "$OUT/teacher_train.json"
  "$BIN" --threads "$THREADS" --quiet evaluate --model "$TEACHER" --data "$TASK:test" > "$OUT/teacher_test.json.tmp"
  mv "$OUT/teacher_test.json.tmp" "$OUT/teacher_test.json"
fi
# 3. SMaT for each seed, JOBS at a time.
explainers=()
for seed in ${SEEDS//,/ }; do
  [[ $seed =~ ^[0-9]+$ ]] || { echo "SEEDS: '$seed' is not a seed" >&2; exit 2; }
  file=$OUT/explainers/smat_n${SIZE}_s$seed.json
  explainers+=("$file")
  [ -f "$file" ] && continue
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  "$BIN" --threads 1 --quiet smat train --teacher "$TEACHER" --pool "$OUT/split/pool.jsonl" --max-length "$MAXLEN" \
    "${STUDENT_ARGS[@]}" --size "$SIZE" --seed "$seed" -o "$file" "$@" > "$OUT/explainers/smat_n${SIZE}_s$seed.log" 2>&1 &
done
for job in $(jobs -rp); do wait "$job"; done
for file in "${explainers[@]}"; do [ -f "$file" ] || { echo "$file: SMaT run failed (see its .log)" >&2; exit 1; }; done
# 4. Plausibility against the human rationales of the test split.
"$BIN" --threads "$THREADS" --quiet smat plausibility --teacher "$TEACHER" --data "$TASK:test" \
  --smat "${explainers[@]}" -o "$OUT/plausibility" > /dev/null
cat "$OUT/plausibility/plausibility.md"
